// The Management API's handlers, one per route (src/routes/route-table.ts), run by its request pipeline
// (management.ts) once the token is authorised. A read answers 200 with what it returns; a write hands
// the body, as received, to the writer with the token's id: its commands authorise the
// token again in the transaction that applies the change, parse the body and apply every rule, and
// report all problems together (with the `env` problem of a patch).
import type { ManagementRouteName } from '../routes/route-table.js';
import { requireEnvironmentAllowed, requireEveryEnvironment, resolveEnvParam, type EnvRoute } from '../model/environments.js';
import { requirePatchTarget, requireProjectFlag, webhookNotFound } from '../model/lookups.js';
import { parseJsonObject, type ReceivedBody } from '../model/request-body.js';
import type { Config } from '../config.js';
import type { AuthContext } from '../model/token-access.js';
import type { Principal } from '../audit/audit-actor.js';
import type { SnapshotReader, StoreRevision } from '../store/interfaces.js';
import type { WriterClient } from '../writer/client.js';
import { flagList, patchResult, representFlag, tokenDescription } from '../model/representation.js';
import { FlagwireError } from '../errors.js';
import { kFlagCommands } from '../flags/capability.js';
import { type ExportFormat, exportProject, kExportFormats } from '../flags-as-code/export.js';
import { kFlagsAsCodeCommands } from '../flags-as-code/capability.js';
import { fileText } from '../flags-as-code/flag-file.js';
import type { Planner } from '../flags-as-code/planner.js';
import type { ProjectRevision } from '../flags-as-code/plan.js';
import { pageAnswer, pageRequest } from '../release-plans/list-pages.js';
import { kReleasePlanCommands } from '../release-plans/capability.js';
import { kRolloutActions, type RolloutAction, rolloutView, scheduleView } from '../release-plans/schemas.js';
import { kWebhookCommands } from '../webhooks/capability.js';
import { deliveryView, webhookView } from '../webhooks/schemas.js';
import { refuseUnreachableUrl } from '../webhooks/url-safety.js';
import { kKeptDeliveries, kWebhookWhat } from '../webhooks/webhook-commands.js';

/** What a handler gets: everything read off the request before the pipeline may go async. */
export interface ApiRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string;
  contentType: string;
  /** The flag route's id, decoded; null on the other routes. */
  flagId: string | null;
  /** The route's other path parameters, decoded (`schedule_id`, `rollout_id`, `action`). */
  params: Readonly<Record<string, string>>;
  /** The request's route number for the metrics (ManagementMatch.metric), matched with its route. */
  metric: number;
}

export interface HandlerDeps {
  store: SnapshotReader;
  writer: WriterClient;
  /** Where plans run: never on the front end's thread (planner.ts). */
  planner: Planner;
  config: Readonly<Pick<Config, 'webhookAllow' | 'prometheusMetrics'>>;
}

export interface ReadHandler {
  readonly kind: 'read';
  run(request: ApiRequest, auth: AuthContext, deps: HandlerDeps): unknown;
}

export interface WriteHandler {
  readonly kind: 'write';
  /** A POST that only reads (plan): a read token may call it. Absent: the route needs a write token. */
  readonly permission?: 'read';
  /** Checks made before the body is read (404 and 403 of a flag that cannot be patched). */
  precheck?(request: ApiRequest, auth: AuthContext, deps: HandlerDeps): void;
  /**
   * `release` frees the body's reservation: the writer calls it when it holds its copy no more.
   * `storeRevision`: the store revision the answer was computed at, a write's the one it committed at
   * (WriterClient.callAt); absent, the answer names this node's when it is sent.
   */
  run(
    request: ApiRequest,
    auth: AuthContext,
    received: ReceivedBody,
    release: () => void,
    deps: HandlerDeps,
  ): Promise<{ status: number; value: unknown; storeRevision?: StoreRevision }>;
}

export type ManagementHandler = ReadHandler | WriteHandler;

/** An answer already written as JSON text (an export: its bytes are the file's), sent as it is. */
export class JsonText {
  constructor(readonly text: string) {}
}

/** A true/false query parameter (absent: false); anything else is a 400 naming it. */
function booleanParam(query: URLSearchParams, name: string): boolean {
  const value = query.get(name);
  if (value === null || value === 'false') return false;
  if (value === 'true') return true;
  throw new FlagwireError('INVALID_REQUEST', `"${name}" must be true or false, not "${value}".`);
}

/** apply's `ifRevision`: a project revision from a plan (its `revision`), or null when absent. */
function projectRevisionParam(query: URLSearchParams): ProjectRevision | null {
  const value = query.get('ifRevision');
  if (value === null) return null;
  if (!/^\d{1,15}$/.test(value))
    throw new FlagwireError('INVALID_REQUEST', `"ifRevision" must be a revision number (from a plan), not "${value}".`);
  return Number(value);
}

/** apply's `ifPlan`: the digest of a plan (a plan's `digest`), or null when absent. */
function planDigestParam(query: URLSearchParams): string | null {
  const value = query.get('ifPlan');
  if (value === null) return null;
  if (!/^[0-9a-f]{64}$/.test(value))
    throw new FlagwireError('INVALID_REQUEST', `"ifPlan" must be a plan's digest (64 hexadecimal digits, from a plan), not "${value}".`);
  return value;
}

/** Checks `env` of a read against the project and the token; returns the environment to read. */
function checkEnv(auth: AuthContext, env: string | null, route: EnvRoute): string | null {
  const resolved = resolveEnvParam(auth.project, env, false, route);
  requireEnvironmentAllowed(auth.token.environments, resolved);
  return resolved;
}

/**
 * A write to one flag (PATCH, a scheduled change, a rollout): 404 and 403 before its body is read for a
 * flag that cannot be changed (the writer checks both again, in the transaction that writes); a problem
 * with `env` itself is a 400, reported by the writer with the body's problems (spec: PATCH rule 9).
 */
function precheckFlagChange(request: ApiRequest, auth: AuthContext, { store }: HandlerDeps): void {
  requirePatchTarget(store, auth.project.id, request.flagId!, request.query.get('env'), auth.token.environments);
}

/**
 * A change to a webhook (make, delete, redeliver) by a token limited to some environments: the 403 before
 * the body is read or the URL resolved (the writer checks again, as it does for every webhook change).
 */
function precheckWebhookChange(_request: ApiRequest, auth: AuthContext): void {
  requireEveryEnvironment(auth.token.environments, kWebhookWhat);
}

/** The request's token as who asks: the writer authorises it again as it applies the change. */
function tokenPrincipal(auth: AuthContext): Principal {
  return { kind: 'token', tokenId: auth.token.id };
}

export const kManagementHandlers: Readonly<Record<ManagementRouteName, ManagementHandler>> = {
  apiToken: { kind: 'read', run: (_request, auth) => tokenDescription(auth.token, auth.project) },
  apiListFlags: {
    kind: 'read',
    run(request, auth, { store }) {
      // An environment-restricted token still lists every flag; naming an environment is checked.
      const resolved = checkEnv(auth, request.query.get('env'), 'list');
      const name = request.query.get('name');
      // `?name=` finds one flag by the index of names (unique in a project), not by reading every flag.
      const named = name === null ? undefined : store.findFlagByName(auth.project.id, name);
      const flags = name === null ? store.listFlags(auth.project.id) : named === undefined ? [] : [named];
      return flagList(flags, auth.project, resolved, (id) => store.getUsage(id));
    },
  },
  apiCreateFlag: {
    kind: 'write',
    async run(_request, auth, received, release, deps) {
      const { value: flag, storeRevision } = await deps.writer.callAt(
        kFlagCommands.flagCreate,
        { projectId: auth.project.id, principal: { kind: 'token', tokenId: auth.token.id }, received },
        release,
      );
      return { status: 201, value: representFlag(flag, auth.project, null, deps.store.getUsage(flag.id)), storeRevision };
    },
  },
  apiGetFlag: {
    kind: 'read',
    run(request, auth, { store }) {
      const flag = requireProjectFlag(store, auth.project.id, request.flagId!);
      return representFlag(flag, auth.project, checkEnv(auth, request.query.get('env'), 'flag'), store.getUsage(flag.id));
    },
  },
  apiPatchFlag: {
    kind: 'write',
    precheck: precheckFlagChange,
    async run(request, auth, received, release, deps) {
      const principal = { kind: 'token', tokenId: auth.token.id } as const;
      const input = { flagId: request.flagId!, env: request.query.get('env'), principal, received };
      const { value: result, storeRevision } = await deps.writer.callAt(kFlagCommands.flagPatch, input, release);
      return {
        status: 200,
        value: patchResult(result.changed, result.flag, input.env, deps.store.getUsage(result.flag.id)),
        storeRevision,
      };
    },
  },
  apiExport: {
    kind: 'read',
    run(request, auth, { store }) {
      const format = request.query.get('format') ?? 'flagwire';
      if (!(kExportFormats as readonly string[]).includes(format))
        throw new FlagwireError('INVALID_REQUEST', `"format" must be flagwire or flagd, not "${format}".`);
      // A read that names an environment is limited as every such read is (spec: GET /api/v1/flags).
      const env = request.query.get('env');
      requireEnvironmentAllowed(auth.token.environments, env);
      return new JsonText(fileText(exportProject(store, auth.project, { format: format as ExportFormat, env }, 'api')));
    },
  },
  apiPlan: {
    kind: 'write',
    permission: 'read',
    async run(request, auth, received, release, { planner }) {
      const { value, storeRevision } = await planner.plan(auth.project.id, received, booleanParam(request.query, 'prune'), release);
      return { status: 200, value, storeRevision };
    },
  },
  apiScheduleFlag: {
    kind: 'write',
    precheck: precheckFlagChange,
    async run(request, auth, received, release, deps) {
      const input = { principal: tokenPrincipal(auth), flagId: request.flagId!, env: request.query.get('env'), received };
      const { value, storeRevision } = await deps.writer.callAt(kReleasePlanCommands.scheduleCreate, input, release);
      return { status: 201, value: scheduleView(value), storeRevision };
    },
  },
  apiListSchedules: {
    kind: 'read',
    run(request, auth, { store }) {
      const { status } = Object.fromEntries(request.query);
      if (status !== undefined && status !== 'pending')
        throw new FlagwireError('INVALID_REQUEST', `status must be pending (or left out, for every change), not "${status}"`);
      const page = pageRequest(request.query.get('limit'), request.query.get('after'));
      return pageAnswer('schedules', store.listSchedules(auth.project.id, { ...page, pendingOnly: status === 'pending' }), scheduleView);
    },
  },
  apiCancelSchedule: {
    kind: 'write',
    async run(request, auth, _received, release, deps) {
      const input = { principal: tokenPrincipal(auth), scheduleId: request.params.schedule_id! };
      const { value, storeRevision } = await deps.writer.callAt(kReleasePlanCommands.scheduleCancel, input, release);
      return { status: 200, value: scheduleView(value), storeRevision };
    },
  },
  apiStartRollout: {
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
  apiListRollouts: {
    kind: 'read',
    run(request, auth, { store }) {
      const page = pageRequest(request.query.get('limit'), request.query.get('after'));
      return pageAnswer('rollouts', store.listRollouts(auth.project.id, page), rolloutView);
    },
  },
  apiActOnRollout: {
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
  apiCreateWebhook: {
    kind: 'write',
    precheck: precheckWebhookChange,
    async run(_request, auth, received, release, deps) {
      const parsed = parseJsonObject(received, 'create');
      await refuseUnreachableUrl(parsed.ok ? parsed.value.url : undefined, deps.config.webhookAllow);
      const input = { principal: { kind: 'token' as const, tokenId: auth.token.id }, projectId: auth.project.id, received };
      return { status: 201, value: await deps.writer.call(kWebhookCommands.webhookCreate, input, release) };
    },
  },
  apiListWebhooks: {
    kind: 'read',
    run: (_request, auth, { store }) => ({ webhooks: store.listWebhooks(auth.project.id).map(webhookView) }),
  },
  apiDeleteWebhook: {
    kind: 'write',
    precheck: precheckWebhookChange,
    async run(request, auth, _received, release, deps) {
      const input = { principal: { kind: 'token' as const, tokenId: auth.token.id }, webhookId: request.params.webhook_id! };
      return { status: 200, value: await deps.writer.call(kWebhookCommands.webhookDelete, input, release) };
    },
  },
  apiListDeliveries: {
    kind: 'read',
    run(request, auth, { store }) {
      const hook = store.getWebhook(request.params.webhook_id!);
      if (hook === undefined || hook.projectId !== auth.project.id) throw webhookNotFound();
      return { deliveries: store.listDeliveries(hook.id, kKeptDeliveries).map(deliveryView) };
    },
  },
  apiRedeliver: {
    kind: 'write',
    precheck: precheckWebhookChange,
    async run(request, auth, _received, release, deps) {
      const input = { principal: { kind: 'token' as const, tokenId: auth.token.id }, deliveryId: request.params.delivery_id! };
      return { status: 200, value: deliveryView(await deps.writer.call(kWebhookCommands.webhookRedeliver, input, release)) };
    },
  },
  apiApply: {
    kind: 'write',
    async run(request, auth, received, release, deps) {
      const prune = booleanParam(request.query, 'prune');
      const ifProjectRevision = projectRevisionParam(request.query);
      const ifPlan = planDigestParam(request.query);
      const input = {
        principal: { kind: 'token' as const, tokenId: auth.token.id },
        projectId: auth.project.id,
        received,
        prune,
        ifProjectRevision,
        ifPlan,
      };
      const { value, storeRevision } = await deps.writer.callAt(kFlagsAsCodeCommands.flagsApply, input, release);
      return { status: 200, value, storeRevision };
    },
  },
};
