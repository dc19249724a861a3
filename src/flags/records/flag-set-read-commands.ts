// Flag set reads (flag-set-read-records.ts) as a writer command. Declared below the capabilities, as
// usage's is, so the sync capability's recorder (src/sync/read-recorder.ts) sends it without importing the
// flags capability, which registers it among its commands (src/flags/command-table.ts).
import { getProject } from '../../model/records/project-records.js';
import type { StoreWriter } from '../../store/interfaces.js';
import { commandTable } from '../../writer/command.js';
import { type FlagSetReadMark, flagSetIdOf, kEveryKey, kEveryProject, kFlagSetReadRecords, kSinceKey } from './flag-set-read-records.js';

/**
 * Each set's latest read raised to the marks' (two nodes flush in any order, and the writer runs one
 * command at a time on every node: the latest wins, exactly), and the first call on a store says since
 * when reads are recorded. A set of a project deleted since is skipped; kEveryProject's mark is every set's.
 */
function recordFlagSetReads(w: StoreWriter, input: { reads: FlagSetReadMark[] }, now: number): { sets: number } {
  if (w.getKeyed(kFlagSetReadRecords, kSinceKey) === undefined)
    w.putKeyed(kFlagSetReadRecords, { flagSetId: kSinceKey, projectId: '', lastReadAt: now });
  let sets = 0;
  for (const mark of input.reads) {
    const every = mark.projectId === kEveryProject;
    if (!every && getProject(w, mark.projectId) === undefined) continue;
    const flagSetId = every ? kEveryKey : flagSetIdOf(mark.projectId, mark.environment);
    const stored = w.getKeyed(kFlagSetReadRecords, flagSetId);
    if (stored !== undefined && stored.lastReadAt >= mark.at) continue;
    w.putKeyed(kFlagSetReadRecords, { flagSetId, projectId: every ? '' : mark.projectId, lastReadAt: mark.at });
    sets++;
  }
  return { sets };
}

export const kFlagSetReadCommands = commandTable({ recordFlagSetReads });
