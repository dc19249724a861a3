// Code references as a capability (issue 99 items 4 and 5; docs/code-refs.md): flag keys found in source
// code by the command line (tree-sitter grammars, loaded when a scan runs), pushed by CI over the
// Management API for a branch and commit, read back by flag and as keys that are no flags (the API, the
// web console); and a flag's TypeScript and JavaScript call sites rewritten to the path it keeps.
import { defineCapability } from '../capability/capability.js';
import { kCodeRefCommands } from './command-table.js';
import { kCodeRefRecords } from './records.js';
import { CodeRefsMissing, CodeRefsOfFlag, CodeRefsPush, CodeRefsPushed } from './schemas.js';

export const kCodeRefs = defineCapability({
  name: 'code-refs',
  databases: ['codeRefs'],
  records: [kCodeRefRecords],
  commands: kCodeRefCommands,
  routes: async () => (await import('./routes.js')).kCodeRefApiRoutes,
  consoleRoutes: async () => (await import('./console-routes.js')).kCodeRefConsoleRoutes,
  schemas: { CodeRefsPush, CodeRefsPushed, CodeRefsOfFlag, CodeRefsMissing },
  cli: async () => (await import('./cli.js')).kCodeRefCli,
});
