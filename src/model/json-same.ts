// Whether two values are the same as JSON: the one equality by which the approvals gate and a change
// request's diff tell what a write moved (src/approvals/gate.ts, record-diff.ts) and a running
// experiment's allocation is held (src/experiments/allocation.ts).

/**
 * Whether two values are the same, as JSON says (key order aside): a key whose value is undefined is
 * absent, an undefined array item and a non-finite number are null. Compared in place rather than as two
 * canonical JSON strings: the gate compares every field a write moves, on every write to a guarded project.
 */
export function same(a: unknown, b: unknown): boolean {
  const x = jsonValue(a);
  const y = jsonValue(b);
  if (x === y) return true;
  if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
  if (Array.isArray(x) || Array.isArray(y)) {
    if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!same(x[i], y[i])) return false;
    return true;
  }
  const xs = x as Record<string, unknown>;
  const ys = y as Record<string, unknown>;
  let count = 0;
  for (const key of Object.keys(xs)) {
    if (xs[key] === undefined) continue;
    count++;
    if (ys[key] === undefined || !same(xs[key], ys[key])) return false;
  }
  for (const key of Object.keys(ys)) if (ys[key] !== undefined) count--;
  return count === 0;
}

/** A value as JSON writes it: undefined, NaN and the infinities as null. */
function jsonValue(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === 'number' && !Number.isFinite(value)) return null;
  return value;
}
