// Property (issue 42, item 7): no rule and no OFREP context the API accepts costs more than the stated
// limit to evaluate. Rules are drawn from the operators that build or scan values at run time (merge,
// cat, substr, in, and the reads of ==, starts_with) over `var`s of a context that OFREP accepts (src/ofrep/context.ts parses it, as the
// route does): long strings and lists, nested lists. The cost is measured independently of the budget's
// own counting, by a plain evaluator below that adds up what each operation computed at evaluation builds
// or scans (list items, string characters). An evaluation that answers is one whose cost was within
// kWorkBudget, and whose lists and strings were within their bounds; one past them answers the flag's
// work-limit error; none throws. Counted, not timed (speed is measured in bench/).
import fc from 'fast-check';
import t from 'tap';
import { OfrepContext } from '../../src/ofrep/context.js';
import { compileFlag, overBudgetMessage } from '../../src/targeting/compiled-flag.js';
import { evaluateFlag } from '../../src/targeting/evaluate.js';
import type { DefinitionProblem } from '../../src/targeting/problems.js';
import { kMaxBuiltChars, kMaxBuiltItems, kUnchargedLength, kWorkBudget } from '../../src/targeting/work-budget.js';

const kRuns = 500;

/** A context OFREP accepts: long strings and lists (of short strings, or of lists), under its limits. */
const contextArbitrary = fc.record({
  s: fc.nat({ max: 30_000 }).map((n) => 'x'.repeat(n)),
  t: fc.nat({ max: 8_000 }).map((n) => 'y'.repeat(n)),
  l: fc.nat({ max: 4_000 }).map((n) => Array.from({ length: n }, (_, i) => String(i % 10))),
  nested: fc.tuple(fc.nat({ max: 40 }), fc.nat({ max: 40 })).map(([a, b]) => Array.from({ length: a }, () => Array(b).fill('n'))),
});

type Expr = unknown;
const { expr } = fc.letrec<{ expr: Expr }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<Expr>({ var: 's' }, { var: 't' }, { var: 'l' }, { var: 'nested' }, 'lit', ['a', 'b']),
    fc.array(tie('expr'), { minLength: 1, maxLength: 12 }).map((args) => ({ merge: args })),
    fc.array(tie('expr'), { minLength: 1, maxLength: 12 }).map((args) => ({ cat: args })),
    fc.tuple(tie('expr'), fc.integer({ min: -5, max: 5 })).map(([text, from]) => ({ substr: [text, from] })),
    fc.tuple(fc.constantFrom('0', 'x', 'zz'), tie('expr')).map(([needle, hay]) => ({ in: [needle, hay] })),
    fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => ({ '==': [a, b] })),
    fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => ({ starts_with: [a, b] })),
  ),
}));

/** Whether `e` reads the context (else the compiler folds it at load: it costs nothing per evaluation). */
function readsContext(e: Expr): boolean {
  if (Array.isArray(e)) return e.some(readsContext);
  if (e === null || typeof e !== 'object') return false;
  const [op, args] = Object.entries(e)[0]!;
  return op === 'var' || readsContext(args);
}

class TooLong extends Error {}

/**
 * The value of `e` as JsonLogic computes it (the compiled dialect), adding to `cost.units` the list
 * items and string characters each operation computed at evaluation made or scanned; a list or string
 * past its bound throws TooLong.
 */
function reference(e: Expr, context: Record<string, unknown>, cost: { units: number }): unknown {
  if (Array.isArray(e)) return e.map((item) => reference(item, context, cost));
  if (e === null || typeof e !== 'object') return e;
  const [op, raw] = Object.entries(e)[0]!;
  if (op === 'var') return context[raw as string];
  const args = (raw as Expr[]).map((a) => reference(a, context, cost));
  const counted = readsContext(e);
  let out: unknown;
  let size: number;
  switch (op) {
    case 'merge': {
      out = args.flatMap((a) => (Array.isArray(a) ? a : [a]));
      size = (out as unknown[]).length;
      if (size > kMaxBuiltItems) throw new TooLong();
      break;
    }
    case 'cat':
      out = args.map((a) => `${a}`).join('');
      size = (out as string).length;
      if (size > kMaxBuiltChars) throw new TooLong();
      break;
    case 'substr':
      out = (args[0] as string).substr(args[1] as number);
      size = (out as string).length;
      break;
    case '==': {
      // Two strings are read up to the first difference: the shorter's length at most. Anything else
      // beside a string (a list) fails in the compiled dialect: not compared here.
      const [a, b] = args;
      if (typeof a !== 'string' || typeof b !== 'string') throw new Error('not two strings');
      out = a === b;
      size = Math.min(a.length, b.length);
      // Reads this short are the stated allowance: bounded by the rule's size, never charged.
      if (size <= kUnchargedLength) size = 0;
      break;
    }
    case 'starts_with': {
      const [text, part] = args;
      out = typeof text === 'string' && typeof part === 'string' ? text.startsWith(part) : null;
      // Two strings are read up to the part's length; anything else is not compared at all.
      size = typeof text === 'string' && typeof part === 'string' && part.length > kUnchargedLength ? part.length : 0;
      break;
    }
    default: {
      const hay = args[1] as string | unknown[];
      out = hay.includes(args[0] as string);
      size = readsContext((raw as Expr[])[1]) ? hay.length : 0;
    }
  }
  if (counted) cost.units += size;
  return out;
}

t.test('no accepted rule and context costs more than the work budget', async (t) => {
  const parsed = new OfrepContext();
  let answered = 0;
  let refused = 0;
  fc.assert(
    fc.property(expr, contextArbitrary, (rule, raw) => {
      // Accepted by the API: the rule compiles without a problem, the context passes OFREP's parser.
      const problems: DefinitionProblem[] = [];
      const targeting = { if: [{ '!!': [[rule]] }, 'a', 'b'] };
      const flag = compileFlag(
        'prop',
        { state: 'ENABLED', variants: { a: 'A', b: 'B' }, defaultVariant: 'b', targeting, metadata: {} },
        {},
        problems,
      );
      if (problems.length > 0) return true;
      if (!parsed.parse(JSON.stringify({ context: raw }))) throw new Error(`OFREP refused the context: ${parsed.errorDetails}`);
      const context = parsed.ruleData();
      const cost = { units: 0 };
      let tooLong = false;
      let fails = false;
      try {
        reference(rule, context as Record<string, unknown>, cost);
      } catch (err) {
        if (err instanceof TooLong) tooLong = true;
        else fails = true;
      }
      const answer = evaluateFlag(flag, context, 0);
      if (answer.errorMessage === overBudgetMessage('prop')) refused++;
      // Answered: the work was within every bound. (A rule that fails on its own, substr of a list or
      // `in` a number, is not answered: only the budget's refusals and answers are counted here.)
      if (answer.reason === 'TARGETING_MATCH' && !fails) {
        answered++;
        if (tooLong) throw new Error(`a list or string past its bound was made for ${JSON.stringify(rule)}`);
        if (cost.units > kWorkBudget) throw new Error(`${cost.units} units > ${kWorkBudget} for ${JSON.stringify(rule)}`);
      }
      return true;
    }),
    { numRuns: kRuns },
  );
  t.ok(answered > kRuns / 10, `most rules answered (${answered})`);
  t.ok(refused > 0, `some went past the limits and were refused (${refused})`);
});
