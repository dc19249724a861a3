// The rollout form's table and guard (rollout-section.ts) as the body of POST /api/v1/flags/{id}/rollouts
// (docs/release-plans.md): pure, so a unit test checks the conversion without a page. It only writes down
// what was typed: a number as a number, anything else as typed, a blank left out, so the server's rules
// (schemas.ts RolloutCreate, rollout-commands.ts, guards.ts) and their texts judge every value.
import { formNumber } from './dom.js';

/** The units a hold or an interval is typed in, as --steps writes them, and their length. */
export const kTimeUnits = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
export type TimeUnit = keyof typeof kTimeUnits;
export const kTimeUnitNames: Readonly<Record<TimeUnit, string>> = { s: 'seconds', m: 'minutes', h: 'hours', d: 'days' };

/** A time typed as an amount and a unit. */
export interface TypedTime {
  amount: string;
  unit: TimeUnit;
}

/** One row of the steps' table: its percentage, or a weight per variant (by name), and its hold (none on the last). */
export interface StepRow {
  percentage: string;
  weights: Record<string, string>;
  hold: TypedTime;
}

/** What the guard's fields hold; `source` none: no guard. */
export interface GuardFields {
  source: 'none' | 'prometheus' | 'flagwire';
  expression: string;
  min: string;
  max: string;
  interval: TypedTime;
  onBreach: 'pause' | 'rollback';
}

/** The request body, as typed: what the server checks. */
export interface RolloutRequest {
  steps: Record<string, unknown>[];
  guard?: Record<string, unknown>;
}

/** A time in ms: an amount that is a number times its unit; anything else as typed. */
function timeMs(time: TypedTime): number | string {
  const amount = formNumber(time.amount);
  return typeof amount === 'number' ? Math.round(amount * kTimeUnits[time.unit]) : amount;
}

/**
 * The body for `rows`: by percentage (`variants` null), or by the weights of `variants` (a blank weight
 * names no bucket, as a step that leaves a variant out). Every step but the last has its hold when one
 * was typed; the last is held for good, so its hold is never sent.
 */
export function rolloutRequest(rows: readonly StepRow[], variants: readonly string[] | null, guard: GuardFields): RolloutRequest {
  const steps = rows.map((row, i) => {
    const step: Record<string, unknown> =
      variants === null
        ? { trafficPercentage: formNumber(row.percentage) }
        : {
            variantWeights: Object.fromEntries(
              variants.filter((v) => (row.weights[v] ?? '').trim() !== '').map((v) => [v, formNumber(row.weights[v]!)]),
            ),
          };
    if (i < rows.length - 1 && row.hold.amount.trim() !== '') step.holdMs = timeMs(row.hold);
    return step;
  });
  return guard.source === 'none' ? { steps } : { steps, guard: guardRequest(guard) };
}

function guardRequest(fields: GuardFields): Record<string, unknown> {
  const guard: Record<string, unknown> = { [fields.source]: fields.expression.trim() };
  if (fields.min.trim() !== '') guard.min = formNumber(fields.min);
  if (fields.max.trim() !== '') guard.max = formNumber(fields.max);
  if (fields.interval.amount.trim() !== '') guard.intervalMs = timeMs(fields.interval);
  guard.onBreach = fields.onBreach;
  return guard;
}
