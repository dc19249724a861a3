// Release plans as a capability (src/capability/capability.ts): scheduled changes and progressive
// rollouts (docs/release-plans.md), made and acted on by people and tokens, and run by the node's
// scheduler through scheduleRun, rolloutAdvance and rolloutGuardRecord.
import { defineCapability } from '../capability/capability.js';
import { commandTable } from '../writer/command.js';
import { kReleasePlanAuditActions } from './plan-actors.js';
import {
  apiRolloutAct,
  apiRolloutStart,
  consoleRolloutAct,
  consoleRolloutStart,
  rolloutAdvance,
  rolloutGuardRecord,
} from './rollout-commands.js';
import { apiScheduleCancel, apiScheduleCreate, consoleScheduleCancel, consoleScheduleCreate, scheduleRun } from './schedule-commands.js';

export const kReleasePlanCommands = commandTable({
  consoleScheduleCreate,
  apiScheduleCreate,
  consoleScheduleCancel,
  apiScheduleCancel,
  scheduleRun,
  consoleRolloutStart,
  apiRolloutStart,
  consoleRolloutAct,
  apiRolloutAct,
  rolloutAdvance,
  rolloutGuardRecord,
});

export const kReleasePlans = defineCapability({
  name: 'release-plans',
  commands: kReleasePlanCommands,
  auditActions: kReleasePlanAuditActions,
});
