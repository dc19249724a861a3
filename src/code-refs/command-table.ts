// The code references capability's writer command by name (src/writer/command.ts): what its route and
// command line call by value, and what the writer looks up by name.
import { commandTable } from '../writer/command.js';
import { codeRefsPush } from './code-ref-commands.js';

export const kCodeRefCommands = commandTable({ codeRefsPush });
