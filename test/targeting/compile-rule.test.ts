// The compiler's two dialects and the JavaScript details of flagd-core's engine that answers depend on:
// kept where JsonLogic is silent, refused where JsonLogic is clear (each case checked against flagd-core).
import t from 'tap';
import { RuleCompiler } from '../../src/targeting/compile-rule.js';
import { newScope } from '../../src/targeting/scope.js';
import { bothAnswers } from './flagd-core-oracle.js';

function run(rule: unknown, data: Record<string, unknown>): unknown {
  const problems: unknown[] = [];
  const compiled = new RuleCompiler(problems as never[], 'f').compile(rule, ['flags', 'f', 'targeting']);
  if (problems.length > 0) throw new Error(JSON.stringify(problems));
  const scope = newScope();
  scope.data = data;
  return compiled(scope);
}

function flag(targeting: unknown) {
  return { flags: { f: { state: 'ENABLED', variants: { yes: 'Y', no: 'N', true: 'T', false: 'F' }, defaultVariant: 'no', targeting } } };
}

t.test('JsonLogic truthiness: [] and {} are false, "0" is true', async (t) => {
  t.equal(run({ if: [{ var: 'x' }, 'yes', 'no'] }, { x: [] }), 'no');
  t.equal(run({ if: [{ var: 'x' }, 'yes', 'no'] }, { x: {} }), 'no');
  t.equal(run({ if: [{ var: 'x' }, 'yes', 'no'] }, { x: '0' }), 'yes');
  t.equal(run({ '!!': [{ var: 'x' }] }, { x: [0] }), true);
});

t.test('comparisons: strings as strings, else numbers, else an error', async (t) => {
  t.equal(run({ '<': [{ var: 'a' }, { var: 'b' }] }, { a: '10', b: '9' }), true, 'two strings compare as text');
  t.equal(run({ '<': [{ var: 'a' }, 9] }, { a: '10' }), false, 'a number and a numeric string compare as numbers');
  t.equal(run({ '==': [{ var: 'a' }, 0] }, { a: null }), true, 'null == 0');
  t.throws(() => run({ '<': [{ var: 'a' }, 1] }, { a: 'abc' }), 'a non-numeric string against a number');
});

t.test("flagd-core's shared `prev`: a right operand that is a var decides the coercion (kept)", async (t) => {
  // The generated code is `(prev = "abc") > compareCheck(prev = var n, prev)`: checked against n itself.
  const rule = { if: [{ '>': ['abc', { var: 'n' }] }, 'yes', 'no'] };
  t.equal(run(rule, { n: 0 }), 'no', 'false, where JsonLogic would fail on "abc" as a number');
  const { ours, theirs } = bothAnswers(flag(rule), 'f', 'string', { n: 0 });
  t.same(ours, theirs);
  t.equal(ours.variant, 'no');
});

t.test('`cat` of an `and`: flagd-core answers by JavaScript precedence, we by JsonLogic (a known difference)', async (t) => {
  // flagd-core's code is `'' + !truthy(prev = x) ? prev : ...`: the concatenation becomes the condition.
  const rule = { cat: ['y', { and: [{ var: 'x' }, 'es'] }] };
  const { ours, theirs } = bothAnswers(flag(rule), 'f', 'string', { x: true });
  t.equal(ours.variant, 'yes');
  t.equal(theirs.variant, 'true', "flagd-core: ('' + 'y' + !truthy(x)) is a non-empty string, so the answer is x itself");
});

t.test('an `if` of one or two operands runs in the interpreted dialect (flagd-core hands it to its interpreter)', async (t) => {
  // Interpreted `cat` skips null; compiled `cat` writes "null".
  t.equal(run({ if: [true, { cat: ['a', { var: 'none' }] }, null] }, {}), 'anull');
  t.equal(run({ if: [true, { cat: ['a', { var: 'none' }] }] }, {}), 'a');
  for (const rule of [{ if: [true, { cat: ['ye', { var: 'none' }, 's'] }, null] }, { if: [true, { cat: ['ye', { var: 'none' }, 's'] }] }]) {
    const { ours, theirs } = bothAnswers(flag(rule), 'f', 'string', {});
    t.same(ours, theirs, JSON.stringify(rule));
  }
});
