// The web console's JSON API for release plans (docs/release-plans.md): a flag's scheduled change and
// rollout made from its page, a scheduled change cancelled, a rollout paused, resumed, skipped or rolled
// back. Each is one of the capability's writer commands, given the signed-in user.
import type { ApiCall, ApiRoute } from '../console-route/call.js';
import { compileForm, JsonObject } from '../console-route/forms.js';
import { projectAccess } from '../console-route/access.js';
import { flagAccess } from '../flags/flag-lookups.js';
import { kReleasePlanCommands } from './command-table.js';
import { kRolloutActions, offeredRolloutActions, rolloutView, scheduleView } from './schemas.js';
import { getRollout, getSchedule, listFlagRollouts, listFlagSchedules } from './records.js';
import { kDefaultPage, kMaxPageBytes } from './list-pages.js';
import { describeGuard } from './guards.js';
import { guardReadingText, stepText } from './schedule-text.js';

/** A scheduled change ({at, patch}) or a rollout ({steps, guard}): the API's body, checked by the writer as the API's. */
const kPlanForm = compileForm(JsonObject);

/** A plan (scheduled change, rollout) acted on by id: another project's reads as none, as an unknown id does (the writer's 404). */
function checkPlanAccess(call: ApiCall, plan: { projectId: string } | undefined): void {
  if (plan !== undefined) projectAccess(call.store, call.user, plan.projectId, call.now);
}

/** The flag page's scheduled changes and rollouts: the newest page of each (the API and CLI list them all). */
const kFlagPageLists = { limit: kDefaultPage, maxBytes: kMaxPageBytes, after: null, newestFirst: true } as const;

/** GET flags/:flagId/plans: what the flag page shows of the flag's release plans. */
export function flagPlansView(call: ApiCall) {
  const { flag, access } = flagAccess(call.store, call.user, call.params.flagId!, call.now);
  return {
    // The flag's scheduled changes (docs/release-plans.md), pending and done, by due time: the page of the
    // latest due (the pending ones and the last done), as the Management API pages them.
    schedules: listFlagSchedules(call.store, flag.id, kFlagPageLists).items.reverse().map(scheduleView),
    // Its latest progressive rollouts (docs/release-plans.md), oldest first, each with the actions the page offers.
    rollouts: listFlagRollouts(call.store, flag.id, kFlagPageLists)
      .items.reverse()
      .map((p) => ({
        ...rolloutView(p),
        actions: offeredRolloutActions(access, p),
        // As the CLI writes them, so the page declares no second text of a step or a reading.
        stepLabels: p.steps.map(stepText),
        guardLine: p.guard ? `${describeGuard(p.guard)}; last reading: ${guardReadingText(p)}` : null,
      })),
  };
}

export const kReleasePlanConsoleRoutes: readonly ApiRoute[] = [
  { method: 'GET', pattern: 'flags/:flagId/plans', run: flagPlansView },
  {
    // A scheduled change: the JSON body {at, patch} as the API's, `env` as its query parameter.
    method: 'POST',
    pattern: 'flags/:flagId/schedules',
    async run(call) {
      const { flag } = flagAccess(call.store, call.user, call.params.flagId!, call.now);
      const change = await call.writer.call(kReleasePlanCommands.scheduleCreate, {
        flagId: flag.id,
        env: call.query.get('env'),
        body: kPlanForm.read(call.received),
        principal: call.principal,
      });
      return scheduleView(change);
    },
  },
  {
    method: 'POST',
    pattern: 'schedules/:scheduleId/cancel',
    async run(call) {
      checkPlanAccess(call, getSchedule(call.store, call.params.scheduleId!));
      return scheduleView(
        await call.writer.call(kReleasePlanCommands.scheduleCancel, {
          scheduleId: call.params.scheduleId!,
          principal: call.principal,
        }),
      );
    },
  },
  {
    // A progressive rollout: the JSON body {steps, guard} as the API's (the page's table writes it), `env` as its query parameter.
    method: 'POST',
    pattern: 'flags/:flagId/rollouts',
    async run(call) {
      const { flag } = flagAccess(call.store, call.user, call.params.flagId!, call.now);
      const plan = await call.writer.call(kReleasePlanCommands.rolloutStart, {
        flagId: flag.id,
        env: call.query.get('env'),
        body: kPlanForm.read(call.received),
        principal: call.principal,
        guardMetrics: call.config.prometheusMetrics,
      });
      return rolloutView(plan);
    },
  },
  ...kRolloutActions.map(
    (action): ApiRoute => ({
      method: 'POST',
      pattern: `rollouts/:rolloutId/${action}`,
      async run(call) {
        checkPlanAccess(call, getRollout(call.store, call.params.rolloutId!));
        return rolloutView(
          await call.writer.call(kReleasePlanCommands.rolloutAct, {
            rolloutId: call.params.rolloutId!,
            action,
            principal: call.principal,
          }),
        );
      },
    }),
  ),
];
