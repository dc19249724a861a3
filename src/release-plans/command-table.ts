// The release plans capability's writer commands by name (src/writer/command.ts): what its routes, console
// routes, command line and background work call by value, and what the writer looks up by name.
import { commandTable } from '../writer/command.js';
import { rolloutAct, rolloutAdvance, rolloutGuardRecord, rolloutStart } from './rollout-commands.js';
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
