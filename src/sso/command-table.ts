// The sso capability's writer commands by name (src/writer/command.ts): what its routes, console
// routes and command line call by value, and what the writer looks up by name.
import { commandTable } from '../writer/command.js';
import { ssoRemove, ssoSet, ssoSignIn, ssoStateUse } from './sso-commands.js';

export const kSsoCommands = commandTable({ ssoSet, ssoRemove, ssoStateUse, ssoSignIn });
