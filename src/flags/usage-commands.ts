// Flag usage (docs/operations.md: Flag usage): what the eval workers counted, merged into each flag's totals.
import { type FlagUsage, recordedUsage } from './records.js';
import type { StoreWriter } from '../store/interfaces.js';

/** Evaluations of one flag counted since the last flush, and the latest one's time. */
export type UsageCount = FlagUsage;

/** Adds each count to the flag's totals and its hour; a flag deleted since it was evaluated is skipped. */
export function recordUsage(w: StoreWriter, input: { counts: UsageCount[] }): { flags: number } {
  let flags = 0;
  for (const count of input.counts) {
    if (w.getFlag(count.flagId) === undefined) continue;
    w.putUsage(recordedUsage(w.getUsage(count.flagId), count));
    flags++;
  }
  return { flags };
}
