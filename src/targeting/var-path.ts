// `var` and `missing`: reading a dotted name out of the context.
//
// A name is split on dots (`user.address.country`); `\.` is a literal dot and `\\` a backslash, as
// json-logic-engine splits it. The three readers below are json-logic-engine's three ways of walking a
// path; they agree on ordinary contexts and differ on odd ones (an intermediate value that is 0, "" or
// false; a null found at the end with a default given):
//   compiled   `context?.a?.b ?? default`: a null or missing value gives the default.
//   walk       the interpreter's `var` method: a missing step gives the default, a null at the end stays null.
//   chained    the interpreter's shortcut for 1 to 3 steps: `data.a && data.a.b`, so a falsy step is the answer.
import { rootValue, type Scope, wholeContext } from './scope.js';

/** json-logic-engine's splitPath: dots separate, `\.` and `\/` are literal, `\\` is one backslash. */
export function splitPath(text: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '\\') {
      const next = text[i + 1];
      if (next === '.' || next === '/') {
        current += next;
        i++;
      } else if (next === '\\') {
        current += '\\';
        i++;
      } else current += '\\';
    } else if (char === '.') {
      parts.push(current);
      current = '';
    } else current += char;
  }
  // "." is [''] and not ['', '']; ".h" is ['', 'h'] (the engine's rule, kept).
  if (parts.length !== text.length) parts.push(current);
  return parts;
}

type Reader = (scope: Scope) => unknown;

function step(value: unknown, name: string): unknown {
  return (value as Record<string, unknown>)[name];
}

function noFunction(value: unknown): unknown {
  return typeof value === 'function' ? null : value;
}

/** The whole context (a var of the empty name). */
export function readWhole(scope: Scope): unknown {
  return wholeContext(scope);
}

/** The compiled reader; it leaves its value in the scope's `prev`, as the generated code does. */
export function compiledReader(steps: readonly string[], fallback: unknown): Reader {
  const first = steps[0]!;
  if (steps.length === 1) {
    return (scope) => {
      const value = rootValue(scope, first) ?? fallback;
      scope.prev = value;
      return noFunction(value);
    };
  }
  return (scope) => {
    let value = rootValue(scope, first);
    for (let i = 1; i < steps.length && value !== null && value !== undefined; i++) value = step(value, steps[i]!);
    value ??= fallback;
    scope.prev = value;
    return noFunction(value);
  };
}

export function walkReader(steps: readonly string[], fallback: unknown): Reader {
  const first = steps[0]!;
  return (scope) => {
    let value = rootValue(scope, first);
    if (value === undefined) return fallback;
    for (let i = 1; i < steps.length; i++) {
      if (value === null || value === undefined) return fallback;
      value = step(value, steps[i]!);
      if (value === undefined) return fallback;
    }
    return noFunction(value);
  };
}

/** The interpreter's shortcut for a name of one, two or three steps (other lengths use walkReader). */
export function chainedReader(steps: readonly string[]): Reader {
  const [a, b, c] = steps as [string, string?, string?];
  const answer = (value: unknown) => (value === undefined || typeof value === 'function' ? null : value);
  if (b === undefined) return (scope) => answer(rootValue(scope, a));
  if (c === undefined) {
    return (scope) => {
      const x = rootValue(scope, a);
      return answer(x && step(x, b));
    };
  }
  return (scope) => {
    const x = rootValue(scope, a);
    const y = x && step(x, b);
    return answer(y && step(y, c));
  };
}

/** `missing`: whether a dotted name is absent (a falsy step on the way counts as absent, null at the end does not). */
export function isMissing(scope: Scope, steps: readonly string[]): boolean {
  let value: unknown = rootValue(scope, steps[0]!);
  if (value === undefined) return true;
  for (let i = 1; i < steps.length; i++) {
    if (!value) return true;
    value = step(value, steps[i]!);
    if (value === undefined) return true;
  }
  return false;
}
