// The tokens capability's writer commands by name (src/writer/command.ts): what its routes, console
// routes and command line call by value, and what the writer looks up by name.
import { commandTable } from '../writer/command.js';
import { recordActivity } from './activity-commands.js';
import { tokenCreate, tokenRevoke, tokenRotate } from './token-commands.js';

export const kTokenCommands = commandTable({ tokenCreate, tokenRotate, tokenRevoke, recordActivity });
