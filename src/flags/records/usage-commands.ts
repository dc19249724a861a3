// Flag usage (docs/operations.md: Flag usage): what the eval workers counted, merged into each flag's totals.
// Its command is declared here, below the capabilities, so the engine's usage recorder (src/evaluation/engine/usage.ts)
// sends it without importing the flags capability, which registers it among its commands (src/flags/command-table.ts).
import { type Flag, kSingleState, recordedUsage, type UsageCount } from '../../model/flags.js';
import { getProject } from '../../model/records/project-records.js';
import type { StoreReader, StoreWriter } from '../../store/interfaces.js';
import { commandTable } from '../../writer/command.js';
import { getEnvironmentUsage, getFlag, getUsage, putEnvironmentUsage, putUsage } from './flag-store.js';

export type { UsageCount };

/**
 * Adds each count to the flag's totals and to its environment's, each in the count's hour: the one write
 * of counted usage, whoever counted it (the eval workers, Unleash's SDKs, a provider's or a relay's
 * report: src/usage-reports). A single flag's count is its one state's (kSingleState), whatever
 * environment it names; a group flag's count that names no environment adds to the totals only (docs/decisions.md: Usage per environment). A flag deleted since it was evaluated is
 * skipped, and so is one outside `projectId` when it is given (a report's token is of one project).
 * Returns how many counts it added.
 */
export function addCounts(w: StoreWriter, counts: readonly UsageCount[], projectId: string | null = null): number {
  let added = 0;
  for (const count of counts) {
    const flag = getFlag(w, count.flagId);
    if (flag === undefined || (projectId !== null && flag.projectId !== projectId)) continue;
    putUsage(w, recordedUsage(getUsage(w, count.flagId), count));
    const environment = environmentCounted(w, flag, count.environment);
    if (environment !== null)
      putEnvironmentUsage(w, { ...recordedUsage(getEnvironmentUsage(w, flag.id, environment), count), environment });
    added++;
  }
  return added;
}

/** The environment a count of `flag` in `named` is kept under, or null: none (addCounts). */
function environmentCounted(r: Pick<StoreReader, 'getKeyed'>, flag: Flag, named: string): string | null {
  if (flag.kind === 'flag') return kSingleState;
  return getProject(r, flag.projectId)?.environments.includes(named) === true ? named : null;
}

function recordUsage(w: StoreWriter, input: { counts: UsageCount[] }): { flags: number } {
  return { flags: addCounts(w, input.counts) };
}

export const kUsageCommands = commandTable({ recordUsage });
