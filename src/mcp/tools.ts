// The MCP server's tools, each declared once: a Management API route (or two) it runs, from whose
// declaration its description and input schema are derived (the route's summary, its path and query
// parameters, its request body's TypeBox schema under `body`), so no schema is written twice. Two
// tools narrow what they derive: create_flag takes no `enabled` (a flag an agent creates is off until
// a person turns it on), find_stale_flags asks for one stage. evaluate_flags runs the console's
// playground, for the token's project. Every tool runs as its token: a write needs a write token, and
// in a guarded environment every write is held as a change request (src/approvals), never applied.
import type { ManagementRouteSpec } from '../capability/capability.js';
import { kApprovalApiRoutes } from '../approvals/routes.js';
import { kCodeRefApiRoutes } from '../code-refs/routes.js';
import { kExperimentApiRoutes } from '../experiments/routes.js';
import { PlaygroundRequest, playgroundView } from '../evaluation/console-routes.js';
import { FlagwireError } from '../errors.js';
import { kFlagApiRoutes, kLifecycleApiRoutes } from '../flags/routes.js';
import { requireEnvironmentAllowed } from '../model/environments.js';
import { type AuthContext, requireWrite } from '../model/records/token-access.js';
import { EnvironmentState, FlagCreate } from '../model/schemas.js';
import { kReleasePlanApiRoutes } from '../release-plans/routes.js';
import { type TSchema, Type } from '../typebox.js';
import { callRoute, refusedAnswer, type RouteAnswer, type RouteCallDeps, type RouteInput } from './route-call.js';

/** A JSON Schema object as a tool lists it: plain data, TypeBox's symbols dropped. */
export type JsonSchemaObject = { readonly type: 'object'; readonly [key: string]: unknown };

export interface McpTool {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: JsonSchemaObject;
  /** Whether it may change anything: a read token is refused it (INSUFFICIENT_PERMISSION, the API's own refusal). */
  readonly writes: boolean;
  run(args: Readonly<Record<string, unknown>>, auth: AuthContext, deps: RouteCallDeps): Promise<RouteAnswer>;
}

interface Parameter {
  readonly name: string;
  readonly in: string;
  readonly required?: boolean;
  readonly description?: string;
}

interface RouteToolOptions {
  /** The body's schema when it is not the route's own (narrowed). */
  readonly body?: TSchema;
  /** Query values the tool sets itself (not asked of the agent). */
  readonly fixedQuery?: Readonly<Record<string, string>>;
  /** The body as sent, made from the one the agent gave. */
  readonly shapeBody?: (body: unknown) => unknown;
  /** Said after the route's summary. */
  readonly note?: string;
}

/** A tool running `route`: its input schema and description derived from the route's declaration. */
function routeTool(name: string, title: string, route: ManagementRouteSpec, options: RouteToolOptions = {}): McpTool {
  const docs = route.docs!;
  const fixed = options.fixedQuery ?? {};
  const parameters = ((docs.parameters ?? []) as Parameter[]).filter((p) => (p.in === 'path' || p.in === 'query') && !(p.name in fixed));
  const bodySchema = options.body ?? docs.request?.schema;
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const p of parameters) {
    properties[p.name] = { type: 'string', ...(p.description === undefined ? {} : { description: p.description }) };
    if (p.in === 'path' || p.required === true) required.push(p.name);
  }
  if (bodySchema !== undefined) {
    properties.body = plainSchema(bodySchema);
    if (docs.request?.required === true) required.push('body');
  }
  const writes = route.handler.kind === 'write' && route.handler.permission !== 'read';
  return {
    name,
    title,
    description: `${docs.summary}.${options.note === undefined ? '' : ` ${options.note}`}`,
    inputSchema: { type: 'object', properties, required, additionalProperties: false },
    writes,
    run: async (args, auth, deps) => {
      let input: RouteInput;
      try {
        // As the API: a read token is refused a write before anything of the request is read.
        if (writes) requireWrite(auth);
        input = routeInput(args, parameters, fixed);
      } catch (err) {
        return refusedAnswer(err, deps);
      }
      const body = options.shapeBody === undefined ? input.body : options.shapeBody(input.body);
      return callRoute(route, { ...input, body }, auth, deps);
    },
  };
}

/** The tool's arguments as the route takes them; a parameter that is no string is refused as the API refuses a bad query. */
function routeInput(
  args: Readonly<Record<string, unknown>>,
  parameters: readonly Parameter[],
  fixed: Readonly<Record<string, string>>,
): RouteInput {
  const params: Record<string, string> = {};
  const query: Record<string, string> = { ...fixed };
  for (const p of parameters) {
    const value = args[p.name];
    if (value === undefined) {
      if (p.in === 'path') throw new FlagwireError('INVALID_REQUEST', `"${p.name}" is required.`);
      continue;
    }
    if (typeof value !== 'string') throw new FlagwireError('INVALID_REQUEST', `"${p.name}" must be a string.`);
    (p.in === 'path' ? params : query)[p.name] = value;
  }
  return { params, query, body: args.body };
}

/** A TypeBox schema as plain JSON Schema: its symbols (Kind, Optional) dropped. */
function plainSchema(schema: TSchema): JsonSchemaObject {
  return JSON.parse(JSON.stringify(schema)) as JsonSchemaObject;
}

/** FlagCreate without `enabled`, in the project and in each environment: an agent's flag is created off. */
const kCreateOff = (() => {
  const { enabled: _flat, environments: _environments, ...rest } = FlagCreate.properties;
  const { enabled: _env, ...state } = EnvironmentState.properties;
  return Type.Object(
    { ...rest, environments: Type.Optional(Type.Record(Type.String(), Type.Object(state, { additionalProperties: false }))) },
    { additionalProperties: false },
  );
})();

/** The body with `enabled: false` set wherever a flag's state is (the project's, each environment's). */
function createdOff(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const { environments } = body as { environments?: unknown };
  if (typeof environments !== 'object' || environments === null || Array.isArray(environments)) return { ...body, enabled: false };
  const off = Object.fromEntries(
    Object.entries(environments).map(([env, state]) => [
      env,
      typeof state === 'object' && state !== null ? { ...state, enabled: false } : state,
    ]),
  );
  return { ...body, environments: off };
}

const kGetFlag = routeTool('get_flag', 'Get a flag', kFlagApiRoutes.apiGetFlag!);

/** The playground's answer for the token's project: the context's every flag, with why. */
const kEvaluate: McpTool = {
  name: 'evaluate_flags',
  title: 'Evaluate and explain flags for a context',
  description:
    "Every flag of the token's project evaluated for one context, with why each gives what it gives (the console's playground; nothing is counted as an evaluation). `rule` tries an edited targeting rule without saving it.",
  inputSchema: plainSchema(PlaygroundRequest),
  writes: false,
  async run(args, auth, deps) {
    try {
      if (typeof args.env === 'string') requireEnvironmentAllowed(auth.token.environments, args.env);
      deps.store.resetReadTxn();
      return { kind: 'done', status: 200, value: playgroundView(deps.store, auth.project.id, { ...args }, deps.clock.now()) };
    } catch (err) {
      return refusedAnswer(err, deps);
    }
  },
};

/** Every tool, in the order tools/list lists them. */
export const kMcpTools: readonly McpTool[] = [
  routeTool('list_flags', 'List flags with their lifecycle stage', kLifecycleApiRoutes.apiListLifecycle!),
  {
    ...kGetFlag,
    description: `${kGetFlag.description} With its lifecycle: type, owner, lifetime and stage.`,
    async run(args, auth, deps) {
      const flag = await kGetFlag.run(args, auth, deps);
      if (flag.kind !== 'done') return flag;
      const lifecycle = await callRoute(
        kLifecycleApiRoutes.apiGetLifecycle!,
        { params: { flag_id: String(args.flag_id) }, query: {}, body: undefined },
        auth,
        deps,
      );
      if (lifecycle.kind !== 'done') return lifecycle;
      return { kind: 'done', status: 200, value: { flag: flag.value, lifecycle: lifecycle.value } };
    },
  },
  kEvaluate,
  routeTool('create_flag', 'Create a flag (off)', kFlagApiRoutes.apiCreateFlag!, {
    body: kCreateOff,
    shapeBody: createdOff,
    note: 'It is created off everywhere: a person turns it on.',
  }),
  routeTool('change_flag', "Change a flag's state or rollout", kFlagApiRoutes.apiPatchFlag!, {
    note: 'The rollout is `trafficPercentage`; in a guarded environment the change is held as a change request.',
  }),
  routeTool('start_rollout', 'Start a gradual rollout', kReleasePlanApiRoutes.apiStartRollout!),
  routeTool('schedule_change', "Schedule a flag's change (release plan)", kReleasePlanApiRoutes.apiScheduleFlag!),
  routeTool('list_experiments', 'List experiments', kExperimentApiRoutes.apiListExperiments!),
  routeTool('get_experiment_results', "An experiment's results and verdict", kExperimentApiRoutes.apiExperimentResults!),
  routeTool('find_stale_flags', 'Find flags ready to archive', kLifecycleApiRoutes.apiListLifecycle!, {
    fixedQuery: { stage: 'ready-to-archive' },
    note: 'Only those ready to archive: past their lifetime, not evaluated lately, and with no code reference. Clean one up with `flagwire refs cleanup FLAG --keep on|off`.',
  }),
  routeTool('find_code_refs', "A flag's references in code", kCodeRefApiRoutes.apiCodeRefsOfFlag!),
  routeTool('list_change_requests', 'List change requests', kApprovalApiRoutes.apiListChangeRequests!),
  routeTool('get_change_request', 'Get a change request', kApprovalApiRoutes.apiGetChangeRequest!),
  routeTool('comment_change_request', 'Comment on a change request', kApprovalApiRoutes.apiCommentChangeRequest!),
  routeTool('withdraw_change_request', 'Withdraw a change request', kApprovalApiRoutes.apiWithdrawChangeRequest!),
];
