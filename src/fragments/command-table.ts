// The fragments capability's writer commands by name (src/writer/command.ts): what its routes, console
// routes and command line call by value, and what the writer looks up by name.
import { commandTable } from '../writer/command.js';
import { flagsImport } from './flagd-import-commands.js';
import { fragmentCreate, fragmentDelete, fragmentUpdate } from './fragment-commands.js';

// flagsImport: a flagd file's flags and its $evaluators, made in one transaction.
export const kFragmentCommands = commandTable({ flagsImport, fragmentCreate, fragmentUpdate, fragmentDelete });
