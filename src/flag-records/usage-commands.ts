// Flag usage (docs/operations.md: Flag usage): what the eval workers counted, merged into each flag's totals.
// Its command is declared here, below the capabilities, so the engine's usage recorder (src/eval-engine/usage.ts)
// sends it without importing the flags capability, which registers it among its commands (src/flags/command-table.ts).
import { type FlagUsage, recordedUsage } from '../model/flags.js';
import type { StoreWriter } from '../store/interfaces.js';
import { commandTable } from '../writer/command.js';
import { getFlag, getUsage, putUsage } from './flag-store.js';

/** Evaluations of one flag counted since the last flush, and the latest one's time. */
export type UsageCount = FlagUsage;

/** Adds each count to the flag's totals and its hour; a flag deleted since it was evaluated is skipped. */
function recordUsage(w: StoreWriter, input: { counts: UsageCount[] }): { flags: number } {
  let flags = 0;
  for (const count of input.counts) {
    if (getFlag(w, count.flagId) === undefined) continue;
    putUsage(w, recordedUsage(getUsage(w, count.flagId), count));
    flags++;
  }
  return { flags };
}

export const kUsageCommands = commandTable({ recordUsage });
