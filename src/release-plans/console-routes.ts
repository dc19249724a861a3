// The web console's JSON API for release plans (docs/release-plans.md): a flag's scheduled change and
// rollout made from its page, a scheduled change cancelled, a rollout paused, resumed, skipped or rolled
// back. Each is one of the capability's writer commands, given the signed-in user.
import type { ApiCall, ApiRoute } from '../console-route/call.js';
import { compileForm, JsonObject } from '../console-route/forms.js';
import { projectAccess } from '../console-route/access.js';
import { flagAccess } from '../flags/flag-lookups.js';
import { kReleasePlanCommands } from './command-table.js';
import { kRolloutActions, rolloutView, scheduleView } from './schemas.js';
import { getRollout, getSchedule } from './plan-store.js';

/** A scheduled change ({at, patch}) or a rollout ({steps, guard}): the API's body, checked by the writer as the API's. */
const kPlanForm = compileForm(JsonObject);

/** A plan (scheduled change, rollout) acted on by id: another project's reads as none, as an unknown id does (the writer's 404). */
function checkPlanAccess(call: ApiCall, plan: { projectId: string } | undefined): void {
  if (plan !== undefined) projectAccess(call.store, call.user, plan.projectId, call.now);
}

export const kReleasePlanConsoleRoutes: readonly ApiRoute[] = [
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
        principal: { kind: 'user', userId: call.user.id },
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
          principal: { kind: 'user', userId: call.user.id },
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
        principal: { kind: 'user', userId: call.user.id },
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
            principal: { kind: 'user', userId: call.user.id },
          }),
        );
      },
    }),
  ),
];
