// Flag usage (docs/operations.md: Flag usage): what the eval workers counted, merged into each flag's totals.
// Its command is declared here, below the capabilities, so the engine's usage recorder (src/evaluation/engine/usage.ts)
// sends it without importing the flags capability, which registers it among its commands (src/flags/command-table.ts).
import { type FlagUsage, recordedUsage } from '../../model/flags.js';
import type { StoreWriter } from '../../store/interfaces.js';
import { commandTable } from '../../writer/command.js';
import { getFlag, getUsage, putUsage } from './flag-store.js';

/** Evaluations of one flag counted since the last flush, and the latest one's time. */
export type UsageCount = FlagUsage;

/**
 * Adds each count to the flag's totals and its hour: the one write of counted usage, whoever counted it
 * (the eval workers, a provider's or a relay's report: src/usage-reports). A flag deleted since it was
 * evaluated is skipped, and so is one outside `projectId` when it is given (a report's token is of one
 * project). Returns how many flags it counted.
 */
export function addCounts(w: StoreWriter, counts: readonly UsageCount[], projectId: string | null = null): number {
  let flags = 0;
  for (const count of counts) {
    const flag = getFlag(w, count.flagId);
    if (flag === undefined || (projectId !== null && flag.projectId !== projectId)) continue;
    putUsage(w, recordedUsage(getUsage(w, count.flagId), count));
    flags++;
  }
  return flags;
}

function recordUsage(w: StoreWriter, input: { counts: UsageCount[] }): { flags: number } {
  return { flags: addCounts(w, input.counts) };
}

export const kUsageCommands = commandTable({ recordUsage });
