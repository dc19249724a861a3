// OFREP request bodies -> the evaluation context (src/ofrep/context.ts).
import t from 'tap';
import { OfrepContext } from '../../src/ofrep/context.js';

const parse = (raw: string) => {
  const ctx = new OfrepContext();
  const ok = ctx.parse(raw);
  return { ok, ctx };
};

t.test('empty body, {} and {"context": {}}: no context, nothing set', async (t) => {
  for (const raw of ['', '  ', '{}', '{"context":{}}', '{"context":{},"other":1}']) {
    const { ok, ctx } = parse(raw);
    t.ok(ok, raw);
    t.same([ctx.targetingKey, ctx.cohort, ctx.env, ctx.attribute('plan')], [null, null, null, undefined]);
  }
});

t.test('targetingKey, cohort and env; empty strings count as absent; they are never attributes', async (t) => {
  const { ctx } = parse('{"context":{"targetingKey":"u1","cohort":"beta","env":"prod","plan":"pro"}}');
  t.same([ctx.targetingKey, ctx.cohort, ctx.env], ['u1', 'beta', 'prod']);
  t.equal(ctx.attribute('plan'), 'pro');
  t.equal(ctx.attribute('targetingKey'), undefined);
  t.equal(ctx.attribute('cohort'), undefined);
  t.equal(ctx.attribute('env'), undefined);
  const empty = parse('{"context":{"targetingKey":"","cohort":"","env":""}}').ctx;
  t.same([empty.targetingKey, empty.cohort, empty.env], [null, null, null]);
});

t.test('attributes: strings as is, numbers and booleans as text, structures and null never', async (t) => {
  const { ctx } = parse('{"context":{"s":"NL","n":42,"f":1.5,"b":true,"no":false,"nil":null,"o":{"a":1},"a":["x"]}}');
  t.same(
    ['s', 'n', 'f', 'b', 'no'].map((k) => ctx.attribute(k)),
    ['NL', '42', '1.5', 'true', 'false'],
  );
  t.same(
    ['nil', 'o', 'a', 'missing', 'constructor', 'toString', '__proto__'].map((k) => ctx.attribute(k)),
    Array(7).fill(undefined),
  );
});

t.test('PARSE_ERROR: not JSON, or JSON that is not an object', async (t) => {
  for (const raw of ['{', 'context', '[1]', '"x"', 'null', '42']) {
    const { ok, ctx } = parse(raw);
    t.notOk(ok, raw);
    t.equal(ctx.errorCode, 'PARSE_ERROR', raw);
    t.match(ctx.errorDetails, /\{"context": \{"targetingKey"/);
  }
});

t.test('INVALID_CONTEXT: context not an object, or a reserved key that is not a string, naming every problem', async (t) => {
  const a = parse('{"context":[1,2]}');
  t.same([a.ok, a.ctx.errorCode], [false, 'INVALID_CONTEXT']);
  t.match(a.ctx.errorDetails, /context must be a JSON object/);
  const b = parse('{"context":{"targetingKey":7,"env":true,"cohort":"ok"}}');
  t.same([b.ok, b.ctx.errorCode], [false, 'INVALID_CONTEXT']);
  t.match(b.ctx.errorDetails, /context\.targetingKey must be a string/);
  t.match(b.ctx.errorDetails, /context\.env must be a string/);
});

t.test('one instance is reused: parse() resets what the previous body set', async (t) => {
  const ctx = new OfrepContext();
  ctx.parse('{"context":{"targetingKey":"u1","plan":"x"}}');
  ctx.parse('{}');
  t.same([ctx.targetingKey, ctx.attribute('plan')], [null, undefined]);
});
