// The release plans capability's Management API routes: a flag's changes scheduled, listed and
// cancelled, and its progressive rollouts started, listed and acted on (docs/release-plans.md).
import { tokenPrincipal } from '../routes/route-helpers.js';
import { precheckFlagChange } from '../flags/flag-lookups.js';
import type { ManagementRouteSpec } from '../capability/capability.js';
import { FlagwireError } from '../errors.js';
import { apiErrors, changeRequested, json, kEnvParam, kPageParams, pathParam, queryParam } from '../routes/openapi-parts.js';
import { kReleasePlanCommands } from './command-table.js';
import { pageAnswer, pageRequest } from './list-pages.js';
import {
  kRolloutActions,
  RolloutBody,
  RolloutCreate,
  RolloutList,
  type RolloutAction,
  rolloutView,
  ScheduleCreate,
  ScheduledChangeBody,
  ScheduleList,
  scheduleView,
} from './schemas.js';
import { listRollouts, listSchedules } from './records.js';

export const kReleasePlanApiRoutes: Readonly<Record<string, ManagementRouteSpec>> = {
  // Scheduled changes.
  apiScheduleFlag: {
    method: 'post',
    pattern: '/api/v1/flags/:flag_id/schedules',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'scheduleFlagChange',
      tag: 'Management API',
      summary: 'Schedule a change of a flag: a PATCH body applied at a given time, audited as plan:<id>',
      parameters: [pathParam('flag_id', 'Flag id'), kEnvParam],
      request: { schema: ScheduleCreate, required: true },
      responses: {
        '201': json(ScheduledChangeBody, 'Scheduled'),
        ...changeRequested(),
        ...apiErrors([400, 401, 402, 403, 404, 413, 429, 500, 503]),
      },
    },
    handler: {
      kind: 'write',
      precheck: precheckFlagChange,
      async run(request, auth, received, release, deps) {
        const input = { principal: tokenPrincipal(auth), flagId: request.flagId!, env: request.query.get('env'), received };
        const { value, storeRevision } = await deps.writer.callAt(kReleasePlanCommands.scheduleCreate, input, release);
        return { status: 201, value: scheduleView(value), storeRevision };
      },
    },
  },
  apiListSchedules: {
    method: 'get',
    pattern: '/api/v1/schedules',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'listSchedules',
      tag: 'Management API',
      summary: "The token's project's scheduled changes, pending and done, by due time, a page at a time",
      parameters: [...kPageParams, queryParam('status', 'pending: only the changes still to apply')],
      responses: { '200': json(ScheduleList, 'The scheduled changes'), ...apiErrors([400, 401, 402, 429, 500]) },
    },
    handler: {
      kind: 'read',
      run(request, auth, { store }) {
        const { status } = Object.fromEntries(request.query);
        if (status !== undefined && status !== 'pending')
          throw new FlagwireError('INVALID_REQUEST', `status must be pending (or left out, for every change), not "${status}"`);
        const page = pageRequest(request.query.get('limit'), request.query.get('after'));
        return pageAnswer('schedules', listSchedules(store, auth.project.id, { ...page, pendingOnly: status === 'pending' }), scheduleView);
      },
    },
  },
  apiCancelSchedule: {
    method: 'post',
    pattern: '/api/v1/schedules/:schedule_id/cancel',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'cancelSchedule',
      tag: 'Management API',
      summary: 'Cancel a pending scheduled change',
      parameters: [pathParam('schedule_id', 'Scheduled change id')],
      responses: {
        '200': json(ScheduledChangeBody, 'Cancelled'),
        ...apiErrors([400, 401, 402, 403, 404, 429, 500, 503]),
      },
    },
    handler: {
      kind: 'write',
      async run(request, auth, _received, release, deps) {
        const input = { principal: tokenPrincipal(auth), scheduleId: request.params.schedule_id! };
        const { value, storeRevision } = await deps.writer.callAt(kReleasePlanCommands.scheduleCancel, input, release);
        return { status: 200, value: scheduleView(value), storeRevision };
      },
    },
  },
  // Progressive rollouts.
  apiStartRollout: {
    method: 'post',
    pattern: '/api/v1/flags/:flag_id/rollouts',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'startRollout',
      tag: 'Management API',
      summary:
        "Start a progressive rollout of a flag's traffic percentage, or of its typed variants' weights: the first step now, each next one after its hold",
      parameters: [pathParam('flag_id', 'Flag id'), kEnvParam],
      request: { schema: RolloutCreate, required: true },
      responses: { '201': json(RolloutBody, 'Started'), ...changeRequested(), ...apiErrors([400, 401, 402, 403, 404, 413, 429, 500, 503]) },
    },
    handler: {
      kind: 'write',
      precheck: precheckFlagChange,
      async run(request, auth, received, release, deps) {
        const { flagId } = request;
        const input = {
          principal: tokenPrincipal(auth),
          flagId: flagId!,
          env: request.query.get('env'),
          received,
          guardMetrics: deps.config.prometheusMetrics,
        };
        const { value, storeRevision } = await deps.writer.callAt(kReleasePlanCommands.rolloutStart, input, release);
        return { status: 201, value: rolloutView(value), storeRevision };
      },
    },
  },
  apiListRollouts: {
    method: 'get',
    pattern: '/api/v1/rollouts',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'listRollouts',
      tag: 'Management API',
      summary: "The token's project's rollouts, oldest first, a page at a time",
      parameters: kPageParams,
      responses: { '200': json(RolloutList, 'The rollouts'), ...apiErrors([400, 401, 402, 429, 500]) },
    },
    handler: {
      kind: 'read',
      run(request, auth, { store }) {
        const page = pageRequest(request.query.get('limit'), request.query.get('after'));
        return pageAnswer('rollouts', listRollouts(store, auth.project.id, page), rolloutView);
      },
    },
  },
  apiActOnRollout: {
    method: 'post',
    pattern: '/api/v1/rollouts/:rollout_id/:action',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'actOnRollout',
      tag: 'Management API',
      summary: 'Pause, resume, skip a step of, or roll back a rollout',
      parameters: [pathParam('rollout_id', 'Rollout id'), pathParam('action', 'pause, resume, skip or rollback')],
      responses: { '200': json(RolloutBody, 'Done'), ...changeRequested(), ...apiErrors([400, 401, 402, 403, 404, 429, 500, 503]) },
    },
    handler: {
      kind: 'write',
      async run(request, auth, _received, release, deps) {
        const action = request.params.action!;
        if (!(kRolloutActions as readonly string[]).includes(action))
          throw new FlagwireError('NOT_FOUND', `There is no rollout action "${action}"; the actions are ${kRolloutActions.join(', ')}.`);
        const input = { principal: tokenPrincipal(auth), rolloutId: request.params.rollout_id!, action: action as RolloutAction };
        const { value, storeRevision } = await deps.writer.callAt(kReleasePlanCommands.rolloutAct, input, release);
        return { status: 200, value: rolloutView(value), storeRevision };
      },
    },
  },
};
