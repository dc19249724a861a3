// Every command the writer applies, by name: the message protocol of the writer actor, and the
// functions the console runs in its own process. Each takes (store writer, input, now).
import { FlagwireError } from '../errors.js';
import { unicodeProblems } from '../model/validation.js';
import { recordActivity } from '../tokens/activity-commands.js';
import { seedDemo } from './demo-seed.js';
import { invitationAccept, invitationDecline, invitationJoin, orgInvite } from '../invitations/invitation-commands.js';
import { mailClaim, mailRelease, mailResult } from '../mail/mail-commands.js';
import {
  apiFlagCreate,
  apiFlagPatch,
  consoleFlagCreate,
  consoleFlagPatch,
  flagCohorts,
  flagCreate,
  flagDelete,
  flagDescribe,
  flagPatch,
  flagRename,
  flagTags,
} from '../flags/flag-commands.js';
import { orgAddMember, orgCreate, orgUpdate, userCreate } from '../orgs/org-commands.js';
import { audienceCreate, audienceUpdate, envAdd, envProtect, envRename, projectCreate } from '../projects/project-commands.js';
import { sessionEnd, sessionStart, userPassword } from '../sessions/session-commands.js';
import { tokenCreate, tokenRevoke, tokenRotate } from '../tokens/token-commands.js';
import { recordUsage } from '../flags/usage-commands.js';
import { flagsImport } from '../flags/import-commands.js';
import { apiFlagsApply, flagsApply } from '../flags-as-code/apply-commands.js';
import {
  apiScheduleCancel,
  apiScheduleCreate,
  consoleScheduleCancel,
  consoleScheduleCreate,
  scheduleRun,
} from '../release-plans/schedule-commands.js';
import {
  apiRolloutAct,
  apiRolloutStart,
  consoleRolloutAct,
  consoleRolloutStart,
  rolloutAdvance,
  rolloutGuardRecord,
} from '../release-plans/rollout-commands.js';
import {
  apiWebhookCreate,
  apiWebhookDelete,
  apiWebhookRedeliver,
  consoleWebhookCreate,
  consoleWebhookDelete,
  consoleWebhookRedeliver,
  queueWebhookDeliveries,
  webhookClaim,
  webhookClaimMany,
  webhookResult,
  webhookResultMany,
} from '../webhooks/webhook-commands.js';

export const kCommands = {
  orgCreate,
  orgUpdate,
  userCreate,
  orgAddMember,
  orgInvite,
  invitationAccept,
  invitationDecline,
  invitationJoin,
  userPassword,
  sessionStart,
  sessionEnd,
  projectCreate,
  envAdd,
  envRename,
  envProtect,
  audienceCreate,
  audienceUpdate,
  apiFlagCreate,
  apiFlagPatch,
  flagCreate,
  consoleFlagCreate,
  consoleFlagPatch,
  flagPatch,
  flagRename,
  flagDescribe,
  flagTags,
  flagCohorts,
  flagDelete,
  flagsImport,
  flagsApply,
  apiFlagsApply,
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
  apiWebhookCreate,
  consoleWebhookCreate,
  apiWebhookDelete,
  consoleWebhookDelete,
  apiWebhookRedeliver,
  consoleWebhookRedeliver,
  webhookClaim,
  webhookClaimMany,
  webhookResult,
  webhookResultMany,
  tokenCreate,
  tokenRotate,
  tokenRevoke,
  recordActivity,
  recordUsage,
  mailClaim,
  mailRelease,
  mailResult,
  seedDemo,
} as const;

export type Commands = typeof kCommands;
export type CommandName = keyof Commands;
export type CommandInput<N extends CommandName> = Parameters<Commands[N]>[1];
export type CommandOutput<N extends CommandName> = ReturnType<Commands[N]>;

export function isCommandName(name: unknown): name is CommandName {
  return typeof name === 'string' && Object.hasOwn(kCommands, name);
}

/**
 * Runs one command; the caller provides the transaction. Every string a command is given must be
 * valid Unicode (the rule in unicodeProblems), checked here once for all commands and callers: the
 * console, the demo seed and the API's structured inputs (an API body arrives as bytes, and its
 * strings are checked where it is parsed).
 */
export function runCommand<N extends CommandName>(
  w: Parameters<Commands[N]>[0],
  name: N,
  input: CommandInput<N>,
  now: number,
): CommandOutput<N> {
  const problems = unicodeProblems(input, { quoteKeys: false });
  if (problems.length > 0) throw new FlagwireError('INVALID_REQUEST', problems.join('; '));
  const fn = kCommands[name] as (w: Parameters<Commands[N]>[0], input: CommandInput<N>, now: number) => CommandOutput<N>;
  // Every change the command audits is offered to its project's webhooks in this same transaction: the
  // outbox holds a delivery exactly when the change was committed (src/webhooks/webhook-commands.ts).
  const { value, entries } = w.collectAudit(() => fn(w, input, now));
  if (entries.length > 0) queueWebhookDeliveries(w, entries, now);
  return value;
}
