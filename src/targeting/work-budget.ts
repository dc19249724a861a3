// Bounded work per evaluation (issue 42, docs/operations.md: Evaluation work). A rule runs once per node,
// so what it costs beyond its own size comes from the operators whose work grows with their operands'
// values: those that build a list or a string at run time (merge, cat, substr, the whole-context `var`)
// and those that scan a value read from the context (`in` over a computed list or string, the `+` and
// `-` that sum a list, `fractional`'s hashed key). Each charges what it reads or builds, in units (one
// list item or one UTF-16 code unit each), before it does the work, against one budget per evaluation;
// a list or string it would make longer than its own bound ends the evaluation as well. Ending an
// evaluation is throwing kOverBudget, which evaluate.ts answers as the flag's "work limit" error (the
// caller's default, errorCode GENERAL, the OpenFeature way).
//
// One counter per thread (evaluations never interleave on one), a number decremented in place: a plain
// rule that calls none of these operators never touches it, and no evaluation allocates for it.

/** Units one evaluation may spend: about a millisecond of work at most (bench/RESULTS.md: bounded work). */
export const kWorkBudget = 100_000;
/** The longest list an operator may make at run time (merge). */
export const kMaxBuiltItems = 10_000;
/** The longest string an operator may make at run time (cat, substr), in UTF-16 code units. */
export const kMaxBuiltChars = 65_536;
/** What a number, boolean, null or object costs when cat writes it: the longest number's text. */
const kScalarChars = 24;

/** Thrown when an evaluation overruns; never anything else's value (compared by identity). */
export const kOverBudget: unique symbol = Symbol('evaluation work limit');

let left = kWorkBudget;

/** A new evaluation (or a constant folded at load): the whole budget again. */
export function resetWorkBudget(): void {
  left = kWorkBudget;
}

/** Units spent since the last reset (tests and the bench read it). */
export function workSpent(): number {
  return kWorkBudget - left;
}

/** Spends `units`; past the budget the evaluation ends. */
export function charge(units: number): void {
  left -= units;
  if (left < 0) throw kOverBudget;
}

/** A list of `items` about to be made: charged, and refused past kMaxBuiltItems. */
export function chargeList(items: number): void {
  if (items > kMaxBuiltItems) throw kOverBudget;
  charge(items);
}

/** A string of `chars` about to be made: charged, and refused past kMaxBuiltChars. */
export function chargeString(chars: number): void {
  if (chars > kMaxBuiltChars) throw kOverBudget;
  charge(chars);
}

/**
 * The length of `value` written as text (cat, JavaScript's String(value)), at most: a string's length,
 * an array's items' texts joined by commas (walked, each item charged as it is visited, so a deep or
 * long array ends the evaluation before its text is made), kScalarChars for anything else.
 */
export function textLength(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (!Array.isArray(value)) return kScalarChars;
  charge(value.length);
  let total = value.length;
  for (let i = 0; i < value.length; i++) {
    const item = value[i];
    // null and undefined items are written as nothing.
    if (item !== null && item !== undefined) total += textLength(item);
    if (total > kMaxBuiltChars) throw kOverBudget;
  }
  return total;
}
