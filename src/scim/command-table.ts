// The scim capability's writer commands by name (src/writer/command.ts): what its routes, console
// routes and command line call by value, and what the writer looks up by name.
import { commandTable } from '../writer/command.js';
import { scimDisable, scimEnable, scimGroupRole, scimGroupWrite, scimUserWrite } from './scim-commands.js';

export const kScimCommands = commandTable({ scimEnable, scimDisable, scimGroupRole, scimUserWrite, scimGroupWrite });
