// The sessions capability's writer commands by name (src/writer/command.ts): what its routes, console
// routes, command line and background work call by value, and what the writer looks up by name.
import { commandTable } from '../writer/command.js';
import { sessionEnd, sessionStart, userPassword } from './session-commands.js';

export const kSessionCommands = commandTable({ userPassword, sessionStart, sessionEnd });
