// The orgs capability's writer commands by name (src/writer/command.ts): what its routes, console
// routes and command line call by value, and what the writer looks up by name.
import { commandTable } from '../writer/command.js';
import { orgAddMember, orgCreate, orgUpdate, userCreate } from './org-commands.js';

export const kOrgCommands = commandTable({ orgCreate, orgUpdate, userCreate, orgAddMember });
