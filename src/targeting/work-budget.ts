// Bounded work per evaluation (issue 42, docs/operations.md: Evaluation work). A rule runs once per node,
// so what it costs beyond its own size comes from the operators whose work grows with their operands'
// values: those that build a list or a string at run time (merge, cat, substr, the whole-context `var`)
// and those that scan a value read from the context (`in` over a computed list or string, the `+` and
// `-` that sum a list, `fractional`'s hashed key, comparisons of long strings, starts_with/ends_with, the
// truthiness of an object of many keys). Each charges what it reads or builds, in units (one
// list item or one UTF-16 code unit each), before it does the work, against one budget per evaluation;
// a list or string it would make longer than its own bound ends the evaluation as well. Ending an
// evaluation is throwing kOverBudget, which evaluate.ts answers as the flag's "work limit" error (the
// caller's default, errorCode GENERAL, the OpenFeature way).
//
// One counter per thread (evaluations never interleave on one), a number decremented in place: a plain
// rule that calls none of these operators never touches it, and no evaluation allocates for it.
//
// An eval worker also bounds a batch (startBatchBudget): its evaluations together may spend
// kBatchWorkBudget, and once that is spent each later one of the batch still gets kWorkFloor, which no
// ordinary rule reaches. So a batch's rule work is bounded whatever its requests ask (bulk requests
// evaluate every flag of a project), far inside the batcher's 5 s stuck-batch timeout, whose 500 would
// fall on every request of the batch, other projects' included: one project's heavy rules can then only
// make heavy rules of the same batch answer the work-limit error, never a plain flag or a plain rule.

/** Units one evaluation may spend (what that bounds in time: bench/RESULTS.md, Bounded evaluation work). */
export const kWorkBudget = 100_000;
/** The longest list an operator may make at run time (merge). */
export const kMaxBuiltItems = 10_000;
/** The longest string an operator may make at run time (cat, substr), in UTF-16 code units. */
export const kMaxBuiltChars = 65_536;
/** Units one batch's evaluations may spend together: twenty evaluations' worth. */
export const kBatchWorkBudget = 20 * kWorkBudget;
/** Units each evaluation gets once its batch's budget is spent. */
export const kWorkFloor = 1_000;
/** Strings this long or shorter are compared (==, <, starts_with, ...), and objects of this many keys tested, without a charge. */
export const kUnchargedLength = 64;
/** What a number, boolean, null or object costs when cat writes it: the longest number's text. */
const kScalarChars = 24;

/** Thrown when an evaluation overruns; never anything else's value (compared by identity). */
export const kOverBudget: unique symbol = Symbol('evaluation work limit');

// Small integers only (never Infinity or a fraction): V8 keeps them in place, where a double stored in
// a module variable would be a new heap number each time, an allocation per evaluation.
let left = kWorkBudget;
/** What the current evaluation was given. */
let granted = kWorkBudget;
/** Whether this thread's evaluations run in eval-worker batches, and what the current batch has left. */
let batched = false;
let batchLeft = kBatchWorkBudget;

/** A new batch of an eval worker: kBatchWorkBudget for its evaluations together. */
export function startBatchBudget(): void {
  batched = true;
  batchLeft = kBatchWorkBudget;
  granted = kWorkBudget;
}

/**
 * A new evaluation: the whole budget, or what its batch has left (at least kWorkFloor), which the last
 * evaluation that spent anything worked out (settleWorkBudget): one store here.
 */
export function beginWorkBudget(): void {
  left = granted;
}

/**
 * A constant folded at load: the whole budget, whatever a batch has left. (A worker compiles a stored
 * flag within a batch; what its constants evaluate to must not depend on that batch.)
 */
export function resetWorkBudget(): void {
  left = kWorkBudget;
}

/** The evaluation is over: what it spent comes off its batch's budget, and sets what the next one gets. */
export function settleWorkBudget(): void {
  if (left === granted || !batched) return;
  batchLeft -= granted - left;
  granted = Math.max(kWorkFloor, Math.min(kWorkBudget, batchLeft));
}

/** Units the last evaluation outside a batch spent (tests read it). */
export function workSpent(): number {
  return granted - left;
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
