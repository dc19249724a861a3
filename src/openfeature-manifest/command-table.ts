// The OpenFeature manifest capability's writer commands by name (src/writer/command.ts): what its routes, console
// routes and command line call by value, and what the writer looks up by name.
import { commandTable } from '../writer/command.js';
import { manifestFlagCreate, manifestFlagDelete, manifestFlagUpdate } from './manifest-commands.js';

export const kManifestCommands = commandTable({ manifestFlagCreate, manifestFlagUpdate, manifestFlagDelete });
