// The experiments capability's writer commands by name (src/writer/command.ts): what its routes and
// command line call by value, and what the writer looks up by name.
import { commandTable } from '../writer/command.js';
import {
  experimentCreate,
  experimentDelete,
  experimentLook,
  experimentStart,
  experimentStop,
  experimentUpdate,
} from './experiment-commands.js';

export const kExperimentCommands = commandTable({
  experimentCreate,
  experimentUpdate,
  experimentStart,
  experimentStop,
  experimentDelete,
  experimentLook,
});
