// The flags capability's writer commands by name (src/writer/command.ts): what its routes, console
// routes, command line and background work call by value, and what the writer looks up by name. Usage's and
// flag set reads' commands are declared below the capabilities (src/flags/records), where evaluation and
// the sync service send them.
import { commandTable } from '../writer/command.js';
import { flagCohorts, flagCreate, flagDelete, flagDescribe, flagPatch, flagRename, flagTags } from './flag-commands.js';
import { kUsageCommands } from './records/usage-commands.js';
import { kFlagSetReadCommands } from './records/flag-set-read-commands.js';
import { flagArchive, flagLifecycle, flagRestore } from './lifecycle-commands.js';

export const kFlagCommands = {
  ...commandTable({
    flagCreate,
    flagPatch,
    flagRename,
    flagDescribe,
    flagTags,
    flagCohorts,
    flagDelete,
    flagLifecycle,
    flagArchive,
    flagRestore,
  }),
  ...kUsageCommands,
  ...kFlagSetReadCommands,
};
