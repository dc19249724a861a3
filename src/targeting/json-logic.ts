// JsonLogic's value semantics as flagd-core applies them (json-logic-engine 5.0.7, the engine flagd-core
// pins): truthiness, the coercions of comparisons and arithmetic, `cat`, `in`, `substr`. Compiled rules
// (compile-rule.ts) call these; nothing here walks a rule.
//
// Two dialects. json-logic-engine runs a rule in one of two ways and they disagree on odd inputs:
//   compiled     what flagd-core's `engine.build(rule)` generates: every rule, at evaluation time.
//   interpreted  the engine's optimizer and built-in methods: what `build` uses to fold a constant
//                sub-expression at load time, and what runs below an `if` of one or two arguments
//                (the compiler has no template for those and hands them to the interpreter).
// Where they differ the function takes the dialect or exists twice; each difference is named where it is.
//
// The operators that build a list or a string charge it to the evaluation's budget first (work-budget.ts).
import { charge, chargeList, chargeString, kUnchargedLength, kMaxBuiltChars, kOverBudget, textLength } from './work-budget.js';

/**
 * json-logic-engine throws NaN (the number) for a value it cannot use as a number. We throw the same:
 * an evaluation that throws anything ends in flagd-core's GENERAL error, so only the fact matters.
 */
function fail(): never {
  throw Number.NaN;
}

/** json-logic-engine's `truthy`: JavaScript's, except that an empty array or empty plain object is false. */
export function isTruthy(value: unknown): boolean {
  if (!value) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') {
    const object = value as Record<PropertyKey, unknown>;
    if (object[Symbol.iterator]) {
      if ('length' in object && object.length === 0) return false;
      if ('size' in object && object.size === 0) return false;
    }
    // A prototype-less object has no constructor: the engine throws here, and so do we.
    if ((object.constructor as { name: string }).name === 'Object') return countKeys(object) > 0;
  }
  return true;
}

/**
 * How many keys `object` has: listed to be counted (V8 has no cheaper way for a large object), so a
 * large one is charged after the fact (work-budget.ts), one of up to kUnchargedLength keys is not. A
 * context's object has at most 10,000 keys (src/evaluation/engine/context-bounds.ts): one step past the budget is bounded.
 */
function countKeys(object: object): number {
  const count = Object.keys(object).length;
  if (count > kUnchargedLength) charge(count);
  return count;
}

/**
 * A string about to be read as a number: JavaScript parses all of it (4 s for 30,000 comparisons of a
 * 32,000-character context string with a number), so a long one is charged (work-budget.ts).
 */
function chargeNumberText(value: unknown): void {
  if (typeof value === 'string' && value.length > kUnchargedLength) charge(value.length);
}

/** chargeNumberText, answering the value. */
function chargedNumberText<T>(value: T): T {
  chargeNumberText(value);
  return value;
}

/** json-logic-engine's `precoerceNumber`: NaN and objects cannot become numbers (thrown); the rest passes. */
export function precoerce(value: unknown): unknown {
  chargeNumberText(value);
  if (Number.isNaN(value)) fail();
  if (!value) return value;
  if (typeof value === 'object') fail();
  return value;
}

function isStringOrNull(value: unknown): boolean {
  return typeof value === 'string' || value === null;
}

/**
 * The right operand of a compiled comparison `a OP b` (the engine's `compareCheck(b, a)`): two strings
 * (or nulls) compare as they are; otherwise both must be number-like (else it throws), and null beside
 * a falsy value is replaced so that `null == 0` holds as JavaScript's `0 == 0` would.
 */
export function compareOperand(b: unknown, a: unknown): unknown {
  if (isStringOrNull(b) && isStringOrNull(a)) return b;
  if (Number.isNaN(+(precoerce(b) as number)) && a !== null) fail();
  if (Number.isNaN(+(precoerce(a) as number))) fail();
  if (a === null && !b) return null;
  if (b === null && !a) return 0;
  return b;
}

/** The interpreter's comparison: strings (or nulls) as they are, anything else as numbers (or it throws). */
export function interpretedOperands(a: unknown, b: unknown): boolean {
  if (isStringOrNull(a) && isStringOrNull(b)) return false;
  if (Number.isNaN(+(precoerce(a) as number))) fail();
  if (Number.isNaN(+(precoerce(b) as number)) && a !== null) fail();
  return true;
}

/** The six ordering and loose-equality operators, and the two strict ones, as JavaScript applies them. */
export type Comparison = (a: unknown, b: unknown) => boolean;
/* Loose comparisons are what JsonLogic specifies: the engine generates `a == b`, `a < b` on raw values. */
export const kComparisons: Readonly<Record<string, Comparison>> = {
  // biome-ignore lint/suspicious/noDoubleEquals: JsonLogic's == is JavaScript's loose equality.
  '==': (a, b) => chargeCompared(a, b) == b,
  '===': (a, b) => chargeCompared(a, b) === b,
  // biome-ignore lint/suspicious/noDoubleEquals: JsonLogic's != is JavaScript's loose inequality.
  '!=': (a, b) => chargeCompared(a, b) != b,
  '!==': (a, b) => chargeCompared(a, b) !== b,
  '<': (a, b) => (chargeCompared(a, b) as number) < (b as number),
  '<=': (a, b) => (chargeCompared(a, b) as number) <= (b as number),
  '>': (a, b) => (chargeCompared(a, b) as number) > (b as number),
  '>=': (a, b) => (chargeCompared(a, b) as number) >= (b as number),
};

/**
 * Two strings are compared character by character (V8: up to the first difference): two long ones are
 * charged the shorter's length (work-budget.ts), so thousands of comparisons of a context's long
 * strings stay bounded. Strings of up to kUnchargedLength characters are not: their comparisons are bounded by
 * the rule's size, and ordinary rules never reach the budget. Answers `a`.
 */
export function chargeCompared(a: unknown, b: unknown): unknown {
  if (typeof a === 'string' && typeof b === 'string' && a.length > kUnchargedLength && b.length > kUnchargedLength)
    charge(Math.min(a.length, b.length));
  return a;
}

/** `in`: membership in an array, or substring of a string; a falsy haystack holds nothing. */
export function includes(needle: unknown, haystack: unknown): boolean {
  // Anything else truthy (a number, an object) has no `includes`: the engine throws a TypeError, so do we.
  return ((haystack || []) as { includes(x: unknown): boolean }).includes(needle);
}

/**
 * The interpreter's `cat`: null and undefined are skipped. (The compiled `cat` is `'' + a + b ...`,
 * which writes them as "null" and "undefined": compile-rule.ts builds that one inline.)
 */
export function catInterpreted(parts: readonly unknown[]): string {
  let out = '';
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (part === null || part === undefined) continue;
    out = appendText(out, part);
  }
  return out;
}

/** `out + part`, charged (and bounded) before the text is made: every `cat` concatenates through it. */
export function appendText(out: string, part: unknown): string {
  const length = textLength(part);
  if (out.length + length > kMaxBuiltChars) throw kOverBudget;
  charge(length);
  return out + part;
}

/** `substr` as the engine defines it: String#substr, with a negative length counted from the end. */
export function substr(text: unknown, from: unknown, length: unknown): string {
  // A non-string has no `substr`: a TypeError, as in the engine.
  const s = text as { substr(from: unknown, length?: unknown): string };
  let out: string;
  if ((length as number) < 0) {
    const rest = s.substr(from);
    out = rest.substr(0, rest.length + (length as number));
  } else out = s.substr(from, length);
  // V8 answers a slice without copying; charged as made all the same (it is never longer than `text`).
  chargeString(out.length);
  return out;
}

/** `max` and `min`: numbers only, at least one (else it throws). */
export function extreme(values: readonly unknown[], max: boolean): number {
  if (values.length === 0 || typeof values[0] !== 'number') fail();
  let best = values[0] as number;
  for (let i = 1; i < values.length; i++) {
    const v = values[i];
    if (typeof v !== 'number') fail();
    if (max ? v > best : v < best) best = v;
  }
  return best;
}

/** `merge`: arrays flattened one level, other values kept. */
export function merge(values: readonly unknown[]): unknown[] {
  let items = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    items += Array.isArray(v) ? v.length : 1;
  }
  chargeList(items);
  const out: unknown[] = [];
  for (const v of values) {
    if (Array.isArray(v)) for (const item of v) out.push(item);
    else out.push(v);
  }
  return out;
}

// ── Arithmetic, compiled dialect ──────────────────────────────────────────────────────────────────
// The engine's compiler turns each operand into a number while it builds the function (a literal
// string that is not a number, or a literal array, fails the whole rule there: compile-rule.ts) and
// wraps every operand computed at evaluation time as `+precoerceNumber(x)`. The result is checked once.

/** An operand computed at evaluation time, as the compiled code coerces it. */
export function toNumberCompiled(value: unknown): number {
  return +(precoerce(value) as number);
}

/** The compiled result check: NaN throws. */
export function checkNumber(value: number): number {
  if (Number.isNaN(value)) fail();
  return value;
}

/** A compiled divisor: zero (or anything falsy once a number) throws, as `precoerceNumber(x || NaN)`. */
export function divisorCompiled(value: number): number {
  return checkNumber(value || Number.NaN);
}

// ── Arithmetic, interpreted dialect ───────────────────────────────────────────────────────────────
// The engine's methods, given the evaluated operands. `+`, `-` are "unary-optimised": an operation with
// one operand is given that operand's value, not a one-element array, so `{"+": [{"var": "list"}]}`
// sums the list here and throws in the compiled dialect.

/** Whether an operand is an object (which arithmetic refuses); a long string one is charged as read. */
function objectOperand(value: unknown): boolean {
  chargeNumberText(value);
  return !!value && typeof value === 'object';
}

export function addInterpreted(data: unknown): number {
  if (!data) return 0;
  if (typeof data === 'string' || typeof data === 'number' || typeof data === 'boolean')
    return precoerce(+chargedNumberText(data)) as number;
  if (!Array.isArray(data)) fail();
  let sum = 0;
  for (let i = 0; i < data.length; i++) {
    if (objectOperand(data[i])) fail();
    sum += +data[i];
  }
  return checkNumber(sum);
}

export function subtractInterpreted(data: unknown): number {
  if (!data) return 0;
  if (typeof data === 'string' || typeof data === 'number' || typeof data === 'boolean')
    return precoerce(-chargedNumberText(data)) as number;
  if (!Array.isArray(data)) fail();
  if (objectOperand(data[0])) fail();
  if (data.length === 0) fail();
  // One operand: negated without a NaN check (the engine's own inconsistency, kept).
  if (data.length === 1) return -data[0];
  let result = data[0] as number;
  for (let i = 1; i < data.length; i++) {
    if (objectOperand(data[i])) fail();
    result -= +data[i];
  }
  return checkNumber(result);
}

export function multiplyInterpreted(data: readonly unknown[]): number {
  if (data.length === 0) return 1;
  let product = 1;
  for (let i = 0; i < data.length; i++) {
    if (objectOperand(data[i])) fail();
    product *= +(data[i] as number);
  }
  return checkNumber(product);
}

export function divideInterpreted(data: readonly unknown[]): number {
  if (objectOperand(data[0])) fail();
  if (data.length === 0) fail();
  if (data.length === 1) {
    if (!+(data[0] as number)) fail();
    return 1 / +(data[0] as number);
  }
  let result = +(data[0] as number);
  for (let i = 1; i < data.length; i++) {
    if (objectOperand(data[i]) || !data[i]) fail();
    result /= +(data[i] as number);
  }
  if (Number.isNaN(result) || result === Number.POSITIVE_INFINITY) fail();
  return result;
}

export function moduloInterpreted(data: readonly unknown[]): number {
  if (objectOperand(data[0])) fail();
  if (data.length < 2) fail();
  let result = +(data[0] as number);
  for (let i = 1; i < data.length; i++) {
    if (objectOperand(data[i])) fail();
    result %= +(data[i] as number);
  }
  return checkNumber(result);
}
