// The flag-definition parser: what it accepts (refs resolved, metadata kept) and each refusal, named by
// flag and JSON path.
import t from 'tap';
import { parseFlagDefinition } from '../../src/targeting/parse.js';
import { problemText } from '../../src/targeting/problems.js';

const kBool = { on: true, off: false };

function problems(document: unknown): string[] {
  const r = parseFlagDefinition(document);
  return r.ok ? [] : r.problems.map(problemText);
}

function withRule(targeting: unknown, key = 'new-checkout') {
  return { flags: { [key]: { state: 'ENABLED', variants: kBool, defaultVariant: 'off', targeting } } };
}

t.test('a valid document: $ref resolved (evaluators using evaluators, in any order), defaults normalised', async (t) => {
  const r = parseFlagDefinition(
    JSON.stringify({
      $schema: 'https://flagd.dev/schema/v0/flags.json',
      $evaluators: { outer: { and: [{ $ref: 'inner' }, true] }, inner: { ends_with: [{ var: 'email' }, '@faas.com'] } },
      metadata: { flagSetId: 'checkout' },
      flags: {
        'new-checkout': { state: 'ENABLED', variants: kBool, defaultVariant: 'off', targeting: { if: [{ $ref: 'outer' }, 'on'] } },
        plain: { state: 'DISABLED', variants: { a: 'A' }, targeting: {}, metadata: { team: 'x' } },
      },
    }),
  );
  t.ok(r.ok);
  if (!r.ok) return;
  t.same(r.definition.flags['new-checkout']!.targeting, { if: [{ and: [{ ends_with: [{ var: 'email' }, '@faas.com'] }, true] }, 'on'] });
  t.same(r.definition.flags.plain, {
    state: 'DISABLED',
    variants: { a: 'A' },
    defaultVariant: null,
    targeting: null,
    metadata: { team: 'x' },
  });
  t.same(r.definition.metadata, { flagSetId: 'checkout' });
});

t.test('rules: unknown and unsupported operators, arity, shapes, each at its path', async (t) => {
  t.same(problems(withRule({ if: [{ foo: [1] }, 'on'] })), ['flags.new-checkout.targeting.if[0]: unknown operator "foo"']);
  t.same(problems(withRule({ map: [[1], { var: '' }] })), ['flags.new-checkout.targeting: operator "map" is not supported yet']);
  t.same(problems(withRule({ '==': [1] })), ['flags.new-checkout.targeting["=="]: == takes 2 arguments, got 1']);
  t.same(problems(withRule({ and: { var: 'x' } })), ['flags.new-checkout.targeting.and: and takes an array of arguments']);
  t.same(problems(withRule({ if: [{ var: 'a', '==': [1, 1] }, 'on'] })), [
    'flags.new-checkout.targeting.if[0]: an operation has exactly one operator, found 2 ("var", "==")',
  ]);
  t.same(problems(withRule({ var: { cat: ['a'] } })), [
    'flags.new-checkout.targeting.var: var takes a name (a string) or [name, default] with a string, number, boolean or null default',
  ]);
  t.same(problems(withRule({ var: '$flagd.time' })), [
    'flags.new-checkout.targeting.var: unknown $flagd property "$flagd.time": $flagd.flagKey and $flagd.timestamp exist',
  ]);
  t.same(problems(withRule({ sem_ver: [{ var: 'v' }, '>>', '1.0.0'] })), [
    'flags.new-checkout.targeting.sem_ver[1]: sem_ver operator ">>" is not one of "=", "!=", "<", "<=", ">", ">=", "^", "~"',
  ]);
  t.same(problems(withRule({ sem_ver: [{ var: 'v' }, '>', 'one'] })), ['flags.new-checkout.targeting.sem_ver[2]: "one" is not a version']);
  t.same(problems(withRule({ fractional: [['on', 1.5], ['off']] })), [
    'flags.new-checkout.targeting.fractional[0][1]: fractional weight 1.5 is not a non-negative integer',
  ]);
  t.same(problems(withRule({ fractional: [{ var: 'email' }, 'on'] })), [
    'flags.new-checkout.targeting.fractional[1]: a fractional bucket is [variant] or [variant, weight]',
  ]);
  // A flag key that is not a plain name is quoted in the path.
  t.same(problems(withRule({ bar: 1 }, 'a.b')), ['flags["a.b"].targeting: unknown operator "bar"']);
});

t.test('rules flagd-core fails to load: constant sub-expressions that fail, bad arithmetic literals', async (t) => {
  t.same(problems(withRule({ if: [{ var: 'x' }, 'on', { substr: [null, 1] }] })), [
    'flags.new-checkout.targeting.if[2]: substr always fails on these constant arguments',
  ]);
  t.same(problems(withRule({ if: [{ '>': [{ var: 'n' }, { '/': [1, 0] }] }, 'on', 'off'] })), [
    'flags.new-checkout.targeting.if[0][">"][1]: / always fails on these constant arguments',
  ]);
  t.same(problems(withRule({ if: [{ '>': [{ '+': [{ var: 'n' }, 'ten'] }, 1] }, 'on', 'off'] })), [
    'flags.new-checkout.targeting.if[0][">"][0]["+"][1]: + cannot use "ten" as a number',
  ]);
  t.same(problems(withRule({ if: [{ '>': [{ '/': [{ var: 'n' }, '0'] }, 1] }, 'on', 'off'] })), [
    'flags.new-checkout.targeting.if[0][">"][0]["/"]: / by a constant zero',
  ]);
  // Below an `if` of two operands the engine interprets instead: the same failure is an evaluation error there, not refused.
  t.same(problems(withRule({ if: [{ var: 'x' }, { substr: [null, 1] }] })), []);
});

t.test('variants and default variant', async (t) => {
  t.same(problems({ flags: { f: { state: 'ENABLED', variants: { a: 1, b: 'two', c: true } } } }), [
    `flags.f.variants.b: a string, but variant "a" is a number: a flag's variants are all of one type`,
    `flags.f.variants.c: a boolean, but variant "a" is a number: a flag's variants are all of one type`,
  ]);
  t.same(problems({ flags: { f: { state: 'ENABLED', variants: { a: { x: 1 }, b: [1] } } } }), ['flags.f.variants.b: Expected union value']);
  t.same(problems({ flags: { f: { state: 'ENABLED', variants: kBool, defaultVariant: 'maybe' } } }), [
    'flags.f.defaultVariant: default variant "maybe" is not one of the variants ("on", "off")',
  ]);
  t.same(problems({ flags: { f: { state: 'ENABLED', variants: { '': 1 } } } }), ['flags.f.variants: variant names must not be empty']);
  t.same(problems({ flags: { f: { state: 'ON', variants: kBool } } }), ['flags.f.state: must be one of "ENABLED", "DISABLED"']);
  t.same(problems({ flags: { f: { state: 'ENABLED', variants: {} } } }), [
    'flags.f.variants: Expected object to have at least 1 properties',
  ]);
  t.same(problems({ flags: { f: { variants: kBool } } }), ['flags.f.state: Expected required property']);
});

t.test('$ref: unknown names and cycles', async (t) => {
  t.same(problems(withRule({ if: [{ $ref: 'nope' }, 'on'] })), [
    'flags.new-checkout.targeting.if[0]: $ref "nope" names no evaluator: the document has no $evaluators',
  ]);
  t.same(
    problems({
      $evaluators: { a: { and: [{ $ref: 'b' }] }, b: { or: [{ $ref: 'a' }] } },
      flags: { f: { state: 'ENABLED', variants: kBool, targeting: { if: [{ $ref: 'a' }, 'on'] } } },
    }),
    ['$evaluators.b.or[0]: $ref cycle: a -> b -> a'],
  );
  t.same(
    problems({
      $evaluators: { a: { bogus: 1 } },
      flags: { f: { state: 'ENABLED', variants: kBool, targeting: { if: [{ $ref: 'a' }, 'on'] } } },
    }),
    ['$evaluators.a: unknown operator "bogus"'],
  );
});

t.test('not JSON, not a document', async (t) => {
  t.match(problems('{"flags": '), [/^not valid JSON/]);
  t.same(problems({ flags: [] }), ['flags: Expected object']);
});
