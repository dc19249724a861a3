// A typed flag's weighted split, flagd's `{"fractional": [bucketBy?, [variant, weight], ...]}`, as a
// rollout by variant weights writes it step by step (src/release-plans/rollout-weights.ts) and as the
// web console's flag list shows it at a glance. Pure.

type Targeting = Record<string, unknown>;

/**
 * The arguments a split keeps from one step to the next (its bucketing expression, or none), or null when `targeting`
 * is neither {} nor a bare `fractional`: one key, an array whose elements after an optional first
 * non-bucket are all buckets (arrays).
 */
export function keptArguments(targeting: Targeting): unknown[] | null {
  const keys = Object.keys(targeting);
  if (keys.length === 0) return [];
  const args = targeting.fractional;
  if (keys.length !== 1 || !Array.isArray(args)) return null;
  const first = args.length > 0 && !Array.isArray(args[0]) ? 1 : 0;
  return args.slice(first).every(Array.isArray) ? args.slice(0, first) : null;
}

/** The targeting a step sets, given the targeting the rollout started from (checked by weightTargetProblems). */
export function weightsTargeting(initial: Targeting, weights: Readonly<Record<string, number>>): Targeting {
  return { fractional: [...(keptArguments(initial) ?? []), ...Object.entries(weights)] };
}

/** A step's weights as people read and write them (`flag rollout --steps`): `on=10/off=90`. */
export function weightsText(weights: Readonly<Record<string, number>>): string {
  return Object.entries(weights)
    .map(([name, weight]) => `${name}=${weight}`)
    .join('/');
}

/**
 * A bare split's weights as weightsText writes them (a bucket without a weight weighs 1); null for any
 * other rule. Also the web console's flag list, which shows a split at a glance.
 */
export function splitWeights(targeting: Targeting): string | null {
  const kept = keptArguments(targeting);
  if (kept === null || Object.keys(targeting).length === 0) return null;
  const buckets = (targeting.fractional as unknown[][]).slice(kept.length);
  return buckets
    .map((b) => `${typeof b[0] === 'string' ? b[0] : JSON.stringify(b[0])}=${b.length > 1 ? JSON.stringify(b[1]) : 1}`)
    .join('/');
}
