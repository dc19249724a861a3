// Shared fragments as a capability (src/capability/capability.ts; issue 47): a project's named rules,
// flagd's `$evaluators`, which a flag's rule uses as `{"$ref": "NAME"}` (records.ts). Made, changed and
// deleted by the Management API, the web console and the command line (fragment-commands.ts); read by
// the flag checks and by evaluation's compile, with their references replaced (resolve.ts).
import { defineCapability } from '../capability/capability.js';
import { kFragmentAuditActions } from './audit-actions.js';
import { kFragmentCli } from './cli.js';
import { kFragmentCommands } from './command-table.js';
import { kFragmentConsoleRoutes } from './console-routes.js';
import { kFragmentRecords } from './records.js';
import { kFragmentApiRoutes } from './routes.js';
import { FragmentBody, FragmentCreate, FragmentDeleted, FragmentList, FragmentUpdate } from './schemas.js';
import { kFragmentEnvironmentState } from './environment-state.js';

export const kFragments = defineCapability({
  name: 'fragments',
  databases: ['fragments'],
  records: [kFragmentRecords],
  commands: kFragmentCommands,
  routes: kFragmentApiRoutes,
  schemas: { FragmentCreate, FragmentUpdate, Fragment: FragmentBody, FragmentList, FragmentDeleted },
  consoleRoutes: kFragmentConsoleRoutes,
  cli: kFragmentCli,
  auditActions: kFragmentAuditActions,
  webhookEvent: 'flag',
  environmentState: [kFragmentEnvironmentState],
});
