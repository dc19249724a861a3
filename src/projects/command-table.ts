// The projects capability's writer commands by name (src/writer/command.ts): what its routes, console
// routes and command line call by value, and what the writer looks up by name.
import { commandTable } from '../writer/command.js';
import { audienceCreate, audienceUpdate, envAdd, envProtect, envRename, projectCreate } from './project-commands.js';

export const kProjectCommands = commandTable({ projectCreate, envAdd, envRename, envProtect, audienceCreate, audienceUpdate });
