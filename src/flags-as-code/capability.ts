// Flags as code as a capability (src/capability/capability.ts): a flag file applied in one writer
// command (docs/flags-as-code.md). It audits nothing of its own: each change is audited by the flag,
// environment or audience command that makes it.
import { defineCapability } from '../capability/capability.js';
import { commandTable } from '../writer/command.js';
import { flagsApply } from './apply-commands.js';
import { kFlagsAsCodeCli } from './cli.js';
import { kFlagsAsCodeApiRoutes } from './routes.js';

export const kFlagsAsCodeCommands = commandTable({ flagsApply });

export const kFlagsAsCode = defineCapability({
  name: 'flags-as-code',
  commands: kFlagsAsCodeCommands,
  routes: kFlagsAsCodeApiRoutes,
  cli: kFlagsAsCodeCli,
});
