// The client keys capability's writer commands by name (src/writer/command.ts): what its routes, console
// routes and command line call by value, and what the writer looks up by name.
import { commandTable } from '../writer/command.js';
import { clientKeyCreate, clientKeyRevoke } from './client-key-commands.js';

export const kClientKeyCommands = commandTable({ clientKeyCreate, clientKeyRevoke });
