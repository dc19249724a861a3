// The flags as code capability's writer commands by name (src/writer/command.ts): what its routes, console
// routes, command line and background work call by value, and what the writer looks up by name.
import { commandTable } from '../writer/command.js';
import { flagsApply } from './apply-commands.js';

export const kFlagsAsCodeCommands = commandTable({ flagsApply });
