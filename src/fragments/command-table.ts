// The fragments capability's writer commands by name (src/writer/command.ts): what its routes, console
// routes and command line call by value, and what the writer looks up by name.
import { commandTable } from '../writer/command.js';
import { fragmentCreate, fragmentDelete, fragmentUpdate } from './fragment-commands.js';

export const kFragmentCommands = commandTable({ fragmentCreate, fragmentUpdate, fragmentDelete });
