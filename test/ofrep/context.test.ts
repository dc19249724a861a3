// OFREP request bodies -> the evaluation context (src/ofrep/context.ts).
import t from 'tap';
import { kMaxContextChars, kMaxContextDepth, kMaxContextValues } from '../../src/evaluation/engine/context-bounds.js';
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

t.test('bounded (issue 42): characters, depth and count of keys and items, each at and one past its limit', async (t) => {
  const body = (context: unknown) => JSON.stringify({ context });
  const refused = (raw: string, what: string) => {
    const { ok, ctx } = parse(raw);
    t.same([ok, ctx.errorCode], [false, 'INVALID_CONTEXT'], `${what}: INVALID_CONTEXT`);
    t.same(ctx.ruleData(), {}, `${what}: no context kept`);
    t.match(ctx.errorDetails, `more than ${kMaxContextChars} characters of keys and strings, more than ${kMaxContextValues} keys`);
  };
  // Keys and strings at every level count; what JSON adds (quotes, whitespace) does not.
  // Keys key, list and b (8 characters), strings a and y (2): the padding is the rest.
  const chars = (n: number) => ({ key: 'x'.repeat(n - 10), list: ['a', { b: 'y' }] });
  t.ok(parse(body(chars(kMaxContextChars))).ok, `${kMaxContextChars} characters`);
  refused(body(chars(kMaxContextChars + 1)), `${kMaxContextChars + 1} characters`);
  t.ok(parse(`{"context": {"targetingKey": "u1"}${' '.repeat(200_000)}}`).ok, 'whitespace is not the context');
  // The context is level 1; each object or array in it one more.
  const nested = (levels: number) => {
    let value: unknown = 'leaf';
    for (let i = 1; i < levels; i++) value = i % 2 === 0 ? { k: value } : [value];
    return { k: value };
  };
  t.ok(parse(body(nested(kMaxContextDepth))).ok, `${kMaxContextDepth} levels`);
  refused(body(nested(kMaxContextDepth + 1)), `${kMaxContextDepth + 1} levels`);
  // Keys and items, at every level, counted together: one key holding a list of n - 1 items is n.
  const counted = (n: number) => ({ list: Array(n - 1).fill(0) });
  t.ok(parse(body(counted(kMaxContextValues))).ok, `${kMaxContextValues} keys and items`);
  refused(body(counted(kMaxContextValues + 1)), `${kMaxContextValues + 1} keys and items`);
  refused(body(Object.fromEntries(Array.from({ length: kMaxContextValues + 1 }, (_, i) => [`k${i}`, i]))), 'keys alone');
});
