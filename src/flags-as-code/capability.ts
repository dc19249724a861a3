// Flags as code as a capability (src/capability/capability.ts): a flag file applied in one writer
// command (docs/flags-as-code.md). It audits nothing of its own: each change is audited by the flag,
// environment or audience command that makes it.
import { defineCapability } from '../capability/capability.js';
import { kFlagsAsCodeCommands } from './command-table.js';
import { FlagFile } from './flag-file.js';
import { PlanResult } from './schemas.js';

export const kFlagsAsCode = defineCapability({
  name: 'flags-as-code',
  commands: kFlagsAsCodeCommands,
  routes: async () => (await import('./routes.js')).kFlagsAsCodeApiRoutes,
  schemas: { FlagFile, PlanResult },
  cli: async () => (await import('./cli.js')).kFlagsAsCodeCli,
  // Loaded when a node starts it (as mail's mailer is: src/mail/capability.ts says why). Before the node
  // listens, so its first answers reflect the file; after the release plans' scheduler, listed before
  // this capability: the file is applied over the changes that fell due while the node was down.
  background: [
    {
      name: 'file-follower',
      phase: 'before listening',
      runsOnRelay: false,
      start: async (node) => (await import('./background.js')).followFlagsFile(node),
    },
  ],
});
