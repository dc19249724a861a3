// Bounded work per evaluation (issue 42, item 2; src/targeting/work-budget.ts): each operator that builds
// or scans a value at run time, at its limit (answered as before) and one past it (the caller's default:
// ERROR, GENERAL, a message naming the limit); the budget is per evaluation; constants folded at load
// are held to the same bounds.
import t from 'tap';
import type { TestContext } from '../helpers/cli.js';
import { compileFlag, overBudgetMessage, type Resolution } from '../../src/targeting/compiled-flag.js';
import type { DefinitionProblem } from '../../src/targeting/problems.js';
import { evaluateFlag } from '../../src/targeting/evaluate.js';
import {
  kBatchWorkBudget,
  kMaxBuiltChars,
  kMaxBuiltItems,
  kWorkBudget,
  kUnchargedLength,
  kWorkFloor,
  startBatchBudget,
  workSpent,
} from '../../src/targeting/work-budget.js';

const kVariants = { a: 'A', b: 'B' };

function evaluate(targeting: Record<string, unknown>, context: Record<string, unknown>): Resolution {
  const problems: DefinitionProblem[] = [];
  const flag = compileFlag(
    'bounded',
    { state: 'ENABLED', variants: kVariants, defaultVariant: 'b', targeting, metadata: {} },
    {},
    problems,
  );
  if (problems.length > 0) throw new Error(`rule refused: ${JSON.stringify(problems)}`);
  return evaluateFlag(flag, context, 0);
}

/** A rule naming "a" when `inner` evaluates (whatever its value), so only the bound decides the answer. */
const naming = (inner: unknown) => ({ if: [{ '!!': [[inner]] }, 'a', 'b'] });
const list = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);
const repeat = <T>(n: number, item: T): T[] => Array.from({ length: n }, () => item);

function isOverBudget(t: TestContext, r: Resolution, what: string) {
  t.same(
    { reason: r.reason, errorCode: r.errorCode, errorMessage: r.errorMessage, value: r.value },
    { reason: 'ERROR', errorCode: 'GENERAL', errorMessage: overBudgetMessage('bounded'), value: undefined },
    `${what}: the caller's default, GENERAL, naming the limit`,
  );
}

function isAnswered(t: TestContext, r: Resolution, what: string) {
  t.same([r.reason, r.variant], ['TARGETING_MATCH', 'a'], `${what}: answered`);
}

t.test('the message names every limit and where they are explained', async (t) => {
  const message = overBudgetMessage('f');
  for (const figure of [kWorkBudget, kMaxBuiltItems, kMaxBuiltChars]) t.match(message, String(figure));
  t.match(message, /docs\/operations\.md/);
});

t.test('merge: a list of kMaxBuiltItems is made, one item more is not', async (t) => {
  const half = kMaxBuiltItems / 2;
  isAnswered(t, evaluate(naming({ merge: [{ var: 'l' }, { var: 'l' }] }), { l: list(half) }), `${kMaxBuiltItems} items`);
  isOverBudget(t, evaluate(naming({ merge: [{ var: 'l' }, { var: 'l' }, 'x'] }), { l: list(half) }), `${kMaxBuiltItems + 1} items`);
});

t.test('cat: a string of kMaxBuiltChars is made, one character more is not (both dialects)', async (t) => {
  const half = 'x'.repeat(kMaxBuiltChars / 2);
  const at = { cat: [{ var: 's' }, { var: 's' }] };
  const over = { cat: [{ var: 's' }, { var: 's' }, 'y'] };
  isAnswered(t, evaluate(naming(at), { s: half }), 'compiled, at the limit');
  isOverBudget(t, evaluate(naming(over), { s: half }), 'compiled, one past');
  // An `if` of two operands runs them in the interpreted dialect (json-logic.ts).
  const interpreted = (inner: unknown) => ({ if: [{ '!!': [[inner]] }, 'a'] });
  isAnswered(t, evaluate(interpreted(at), { s: half }), 'interpreted, at the limit');
  isOverBudget(t, evaluate(interpreted(over), { s: half }), 'interpreted, one past');
});

t.test('cat of a list: its text is measured (commas included) before it is made', async (t) => {
  // n items of "ab": 2n characters and n - 1 commas.
  const items = (n: number) => repeat(n, 'ab');
  const fits = Math.floor((kMaxBuiltChars + 1) / 3);
  isAnswered(t, evaluate(naming({ cat: [{ var: 'l' }] }), { l: items(fits) }), 'a list whose text fits');
  isOverBudget(t, evaluate(naming({ cat: [{ var: 'l' }] }), { l: items(fits + 1) }), 'one item more');
  // Nested lists are walked too: 200 lists of 200 items of 2 characters is 119,999 characters.
  isOverBudget(t, evaluate(naming({ cat: [{ var: 'l' }] }), { l: repeat(200, items(200)) }), 'nested lists');
});

t.test('substr: what it answers is charged, up to kMaxBuiltChars', async (t) => {
  const s = 'x'.repeat(kMaxBuiltChars + 1);
  isAnswered(t, evaluate(naming({ substr: [{ var: 's' }, 1] }), { s }), 'the whole string but one');
  isOverBudget(t, evaluate(naming({ substr: [{ var: 's' }, 0] }), { s }), 'one character longer');
});

t.test('the budget is per evaluation: kWorkBudget units are spent, one more is not', async (t) => {
  const rounds = kWorkBudget / kMaxBuiltItems;
  const merges = repeat(rounds, { merge: [{ var: 'l' }] });
  const l = list(kMaxBuiltItems);
  isAnswered(t, evaluate({ if: [{ and: merges }, 'a', 'b'] }, { l }), `${rounds} lists of ${kMaxBuiltItems}`);
  t.equal(workSpent(), kWorkBudget, 'every unit of the budget spent');
  // (A merge of constants is folded at load, so the one item more is read from the context too.)
  isOverBudget(t, evaluate({ if: [{ and: [...merges, { merge: [{ var: 'x' }] }] }, 'a', 'b'] }, { l, x: 'x' }), 'one item more');
  isAnswered(t, evaluate({ if: [{ and: merges }, 'a', 'b'] }, { l }), 'the next evaluation has the whole budget again');
});

t.test('in: a computed list or string is charged by its length, one written in the rule is not', async (t) => {
  const rounds = kWorkBudget / kMaxBuiltItems;
  const l = list(kMaxBuiltItems);
  const scans = (n: number) => ({ if: [{ and: repeat(n, { '!': { in: ['zz', { var: 'l' }] } }) }, 'a', 'b'] });
  isAnswered(t, evaluate(scans(rounds), { l }), `${rounds} scans of a context list`);
  isOverBudget(t, evaluate(scans(rounds + 1), { l }), 'one scan more');
  const s = 'x'.repeat(kWorkBudget / 2);
  isOverBudget(t, evaluate({ if: [{ and: repeat(3, { '!': { in: ['zz', { var: 's' }] } }) }, 'a', 'b'] }, { s }), 'string scans');
  // A literal list is part of the rule, whose size bounds its scans: 30 scans of 10,000 items are not charged.
  const literal = { if: [{ and: repeat(30, { '!': { in: [{ var: 'x' }, l] } }) }, 'a', 'b'] };
  isAnswered(t, evaluate(literal, { x: 'zz' }), 'literal lists');
  t.equal(workSpent(), 0, 'nothing charged');
});

t.test('the whole context, a summed list and a fractional key are charged', async (t) => {
  const wide = Object.fromEntries(list(kMaxBuiltItems + 1).map((k) => [k, 1]));
  isOverBudget(t, evaluate(naming({ var: '' }), wide), `{"var": ""} of ${kMaxBuiltItems + 1} keys`);
  const numbers = repeat(kWorkBudget / 2 + 1, 1);
  // `+` of one operand below a two-operand `if` sums the list (the interpreted dialect).
  isOverBudget(t, evaluate({ if: [{ '+': [{ var: 'n' }] }, { if: [{ '+': [{ var: 'n' }] }, 'a'] }] }, { n: numbers }), 'summed lists');
  isOverBudget(
    t,
    evaluate({ fractional: [{ var: 'k' }, ['a', 1], ['b', 1]] }, { k: 'x'.repeat(kWorkBudget + 1) }),
    'a fractional key longer than the budget',
  );
  t.same(evaluate({ fractional: [{ var: 'k' }, ['a', 1], ['a', 1]] }, { k: 'x'.repeat(kWorkBudget) }).variant, 'a', 'at the budget');
});

t.test('a constant folded at load is held to the same bounds: the definition is refused', async (t) => {
  const problems: DefinitionProblem[] = [];
  const targeting = { if: [{ var: 'x' }, { merge: [list(kMaxBuiltItems), ['x']] }, 'b'] };
  compileFlag('bounded', { state: 'ENABLED', variants: kVariants, defaultVariant: 'b', targeting, metadata: {} }, {}, problems);
  t.equal(problems.length, 1, 'one problem');
  t.match(problems[0]!.message, /merge/);
});

t.test('long strings compared and objects of many keys tested are charged; short ones are not', async (t) => {
  const rounds = kWorkBudget / kMaxBuiltItems;
  /** Two strings of `n` characters that differ in the last. */
  const pair = (n: number) => ({ s: `${'x'.repeat(n - 1)}a`, u: `${'x'.repeat(n - 1)}b` });
  const long = pair(kMaxBuiltItems);
  const all = (n: number, test: unknown) => ({ if: [{ and: repeat(n, test) }, 'a', 'b'] });
  const differ = { '!=': [{ var: 's' }, { var: 'u' }] };
  isAnswered(t, evaluate(all(rounds, differ), long), `${rounds} comparisons of ${kMaxBuiltItems} characters`);
  isOverBudget(t, evaluate(all(rounds + 1, differ), long), 'one more');
  const starts = { '!': { starts_with: [{ var: 's' }, { var: 'u' }] } };
  isAnswered(t, evaluate(all(rounds, starts), long), `${rounds} starts_with of ${kMaxBuiltItems} characters`);
  isOverBudget(t, evaluate(all(rounds + 1, starts), long), 'one more');
  // A string read as a number (JavaScript parses all of it): "111…1" < 5 is false, so every one runs.
  const digits = { n: '1'.repeat(kMaxBuiltItems) };
  const below = { '!': { '<': [{ var: 'n' }, 5] } };
  isAnswered(t, evaluate(all(rounds, below), digits), `${rounds} numbers of ${kMaxBuiltItems} digits compared`);
  isOverBudget(t, evaluate(all(rounds + 1, below), digits), 'one more');
  const wide = { o: Object.fromEntries(list(kMaxBuiltItems).map((k) => [k, 1])) };
  isAnswered(t, evaluate(all(rounds, { '!!': [{ var: 'o' }] }), wide), `${rounds} tests of an object of ${kMaxBuiltItems} keys`);
  isOverBudget(t, evaluate(all(rounds + 1, { '!!': [{ var: 'o' }] }), wide), 'one more');
  // At kUnchargedLength, nothing is charged however often.
  const short = pair(kUnchargedLength);
  const small = { o: Object.fromEntries(list(kUnchargedLength).map((k) => [k, 1])) };
  isAnswered(t, evaluate(all(1000, differ), short), `1,000 comparisons of ${kUnchargedLength} characters`);
  t.equal(workSpent(), 0, 'nothing charged');
  isAnswered(t, evaluate(all(1000, starts), short), `1,000 starts_with of ${kUnchargedLength} characters`);
  t.equal(workSpent(), 0, 'nothing charged');
  isAnswered(t, evaluate(all(1000, { '!!': [{ var: 'o' }] }), small), `1,000 tests of an object of ${kUnchargedLength} keys`);
  t.equal(workSpent(), 0, 'nothing charged');
});

// Last in this file: a batch's budget, once started, stays on this thread (as in an eval worker).
t.test('a batch: its evaluations together spend kBatchWorkBudget; past it each gets kWorkFloor', async (t) => {
  const l = list(kMaxBuiltItems);
  const heavy = { if: [{ and: repeat(kWorkBudget / kMaxBuiltItems, { merge: [{ var: 'l' }] }) }, 'a', 'b'] };
  const scan = { if: [{ '!': { in: ['zz', { var: 'm' }] } }, 'a', 'b'] };
  const light = (n: number) => evaluate(scan, { m: list(n) });
  startBatchBudget();
  const rounds = kBatchWorkBudget / kWorkBudget;
  for (let i = 0; i < rounds; i++) isAnswered(t, evaluate(heavy, { l }), `heavy evaluation ${i + 1} of ${rounds}`);
  isOverBudget(t, evaluate(heavy, { l }), 'one more: the batch has spent its budget');
  isAnswered(t, light(kWorkFloor), `a rule that scans ${kWorkFloor} items still answers`);
  isOverBudget(t, light(kWorkFloor + 1), 'one item more does not');
  isAnswered(t, evaluate({ if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'a', 'b'] }, { plan: 'pro' }), 'a rule that builds nothing answers');
  startBatchBudget();
  isAnswered(t, evaluate(heavy, { l }), 'the next batch has the whole budget again');
});
