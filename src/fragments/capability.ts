// Shared fragments as a capability (src/capability/capability.ts; issue 47): a project's named rules,
// flagd's `$evaluators`, which a flag's rule uses as `{"$ref": "NAME"}`. Made, changed and deleted by
// the Management API, the web console and the command line (fragment-commands.ts), and imported with a
// flagd file's flags (flagd-import-commands.ts). Their records, and their references replaced for every
// reader of a rule, are the flags' (src/flags/records/fragment-records.ts, fragment-resolve.ts, declared by
// the flags capability): flagd keeps them in the flags' own document, and the flag checks and evaluation
// read them.
import { defineCapability } from '../capability/capability.js';
import { kFragmentAuditActions } from './audit-actions.js';
import { kFragmentCommands } from './command-table.js';
import { FragmentBody, FragmentCreate, FragmentDeleted, FragmentList, FragmentUpdate } from './schemas.js';

export const kFragments = defineCapability({
  name: 'fragments',
  commands: kFragmentCommands,
  routes: async () => (await import('./routes.js')).kFragmentApiRoutes,
  schemas: { FragmentCreate, FragmentUpdate, Fragment: FragmentBody, FragmentList, FragmentDeleted },
  consoleRoutes: async () => (await import('./console-routes.js')).kFragmentConsoleRoutes,
  cli: async () => (await import('./cli.js')).kFragmentCli,
  auditActions: kFragmentAuditActions,
  webhookEvent: 'flag',
});
