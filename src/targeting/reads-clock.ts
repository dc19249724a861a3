// Whether a rule can read the evaluation's time (`$flagd.timestamp`), so that its answer for one context
// may change while nothing stored changes. The OFREP bulk ETag (src/ofrep/evaluate.ts) names what decides
// an answer instead of hashing its bytes; a project with such a rule has its answers' bytes hashed instead.
//
// Only `var` reads the context (`missing` and `missing_some` read it too, but `$flagd.timestamp` is never
// missing, whatever the time), and its name is always a literal (operators/context.ts refuses any other):
// a rule reads the clock where a `var`'s path starts at `$flagd` (`$flagd.timestamp`, or `$flagd` itself,
// the object holding it) other than `$flagd.flagKey`, or is "" (the whole context, `$flagd` included).
// Anything else under a `var` key is taken to read it too: never a false "no".
import { splitPath } from './var-path.js';

/** Every object already walked: a project's fragments are the same objects in every rule that names them. */
const kWalked = new WeakMap<object, boolean>();

export function readsClock(logic: unknown): boolean {
  if (logic === null || typeof logic !== 'object') return false;
  const known = kWalked.get(logic);
  if (known !== undefined) return known;
  let reads = false;
  if (Array.isArray(logic)) {
    for (const item of logic) if (readsClock(item)) reads = true;
  } else {
    for (const [op, args] of Object.entries(logic)) {
      if (op === 'var' && varReadsClock(args)) reads = true;
      if (readsClock(args)) reads = true;
    }
  }
  kWalked.set(logic, reads);
  return reads;
}

function varReadsClock(args: unknown): boolean {
  const name = typeof args === 'string' ? args : Array.isArray(args) ? args[0] : undefined;
  if (typeof name !== 'string') return true;
  if (name === '') return true;
  const steps = splitPath(name);
  return steps[0] === '$flagd' && !(steps.length === 2 && steps[1] === 'flagKey');
}
