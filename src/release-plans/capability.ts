// Release plans as a capability (src/capability/capability.ts): scheduled changes and progressive
// rollouts (docs/release-plans.md), made and acted on by a token, a user or the operator (one command
// per verb, given the Principal), and run by the node's scheduler through scheduleRun, rolloutAdvance
// and rolloutGuardRecord.
import { defineCapability } from '../capability/capability.js';
import { commandTable } from '../writer/command.js';
import { kReleasePlanCli } from './cli.js';
import { kReleasePlanConsoleRoutes } from './console-routes.js';
import { kReleasePlanAuditActions } from './plan-actors.js';
import { rolloutAct, rolloutAdvance, rolloutGuardRecord, rolloutStart } from './rollout-commands.js';
import { kReleasePlanApiRoutes } from './routes.js';
import { scheduleCancel, scheduleCreate, scheduleRun } from './schedule-commands.js';

export const kReleasePlanCommands = commandTable({
  scheduleCreate,
  scheduleCancel,
  scheduleRun,
  rolloutStart,
  rolloutAct,
  rolloutAdvance,
  rolloutGuardRecord,
});

export const kReleasePlans = defineCapability({
  name: 'release-plans',
  commands: kReleasePlanCommands,
  routes: kReleasePlanApiRoutes,
  consoleRoutes: kReleasePlanConsoleRoutes,
  cli: kReleasePlanCli,
  auditActions: kReleasePlanAuditActions,
  webhookEvent: 'plan',
});
