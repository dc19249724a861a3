// The mail capability's writer commands by name (src/writer/command.ts): what its routes, console
// routes, command line and background work call by value, and what the writer looks up by name.
import { commandTable } from '../writer/command.js';
import { mailClaim, mailRelease, mailResult } from './mail-commands.js';

export const kMailCommands = commandTable({ mailClaim, mailRelease, mailResult });
