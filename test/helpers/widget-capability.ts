// A capability that exists only in tests (docs/architecture.md, "Adding a capability"): kinds of record
// of its own (one with lookups, hanging off flags), a writer command, Management API routes, a
// command-line command, an audit action, an OpenAPI schema and a port it listens on, declared here and
// nowhere else.
//
// The tests list it after the real capabilities through the same derivations as src/capabilities.ts
// (test/helpers/widgets.ts), and a server, a relay or the command line started with
// FLAGWIRE_TEST_HOOKS=1 and FLAGWIRE_TEST_CAPABILITY naming this module's URL runs with it as its one
// registration line (src/capabilities.ts): test/capability/served-capability.test.ts. So this module
// must not import src/capabilities.ts, which loads it.
import { createServer } from 'node:net';
import { type Principal, actorFor, tokenProject } from '../../src/actor/audit-actor.js';
import type { RunningWork } from '../../src/capability/background-work.js';
import { defineCapability, type ManagementRouteSpec } from '../../src/capability/capability.js';
import { command } from '../../src/cli/command/cli-command.js';
import { FlagwireError } from '../../src/errors.js';
import { requireProjectFlag } from '../../src/flags/flag-lookups.js';
import { randomId } from '../../src/model/ids.js';
import { parseJsonObject, type ReceivedBody } from '../../src/model/request-body.js';
import type { PortSetting } from '../../src/port-setting.js';
import { compileValidator } from '../../src/model/validation.js';
import type { NewAuditEntry, StoreWriter } from '../../src/store/interfaces.js';
import { keyedRecords } from '../../src/store/record-kinds.js';
import { Type } from '../../src/typebox.js';
import { commandTable } from '../../src/writer/command.js';
import { apiErrors, json } from '../../src/routes/openapi-parts.js';

export interface Widget {
  id: string;
  orgId: string;
  size: number;
  /** The flag it hangs off, if any: deleted with it. */
  flagId?: string;
}

/**
 * Widgets, in a database of their own, keyed by id; sent to relays; found by organisation and by flag;
 * deleted with the flag they hang off (a capability's lifecycle, KeyedKind.hangsOff).
 */
export const kWidgetRecords = keyedRecords<Widget>()({
  name: 'widget',
  database: 'widgets',
  relayed: true,
  key: (w) => w.id,
  deletedAs: 'widgetDeleted',
  indexes: {
    org: { keysOf: (w) => [w.orgId] },
    flag: { keysOf: (w) => (w.flagId === undefined ? [] : [w.flagId]) },
  },
  hangsOff: { kind: 'flag', via: 'flag', onDelete: 'cascade' },
});
/**
 * Drafts of widgets: copied to every node, never exported by migrate-to-postgres, never sent to relays;
 * a flag with a draft hanging off it cannot be deleted (HangsOff `refuse`).
 */
export const kWidgetDraftRecords = keyedRecords<Widget>()({
  name: 'widgetDraft',
  database: 'widgetDrafts',
  relayed: false,
  key: (w) => w.id,
  exported: false,
  deletedAs: 'widgetDraftDeleted',
  indexes: { flag: { keysOf: (w) => (w.flagId === undefined ? [] : [w.flagId]) } },
  hangsOff: { kind: 'flag', via: 'flag', onDelete: 'refuse', refusal: 'widget drafts hang off this flag: delete them first' },
});

/** A widget as its routes and the OpenAPI document say it. */
export const WidgetBody = Type.Object({
  id: Type.String(),
  orgId: Type.String(),
  size: Type.Number(),
  flagId: Type.Optional(Type.String()),
});

const WidgetList = Type.Object({ widgets: Type.Array(WidgetBody) });

/** What POST /api/v1/widgets takes. */
const WidgetCreate = Type.Object(
  { size: Type.Integer({ minimum: 0 }), flagId: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
const kCreateValidator = compileValidator(WidgetCreate, { quoteKeys: false });

export interface WidgetCreateInput {
  principal: Extract<Principal, { kind: 'token' }>;
  received: ReceivedBody;
}

/** A widget made in the token's project's organisation, hanging off a flag of that project if it names one; audited. */
function widgetCreate(w: StoreWriter, input: WidgetCreateInput, now: number): Widget {
  const project = tokenProject(w, input.principal, now);
  const actor = actorFor(w, input.principal, project, 'editFlags', now);
  const parsed = parseJsonObject(input.received, 'create');
  if (!parsed.ok) throw new FlagwireError('INVALID_REQUEST', parsed.problem);
  const body = parsed.value;
  if (!kCreateValidator.check(body)) throw new FlagwireError('INVALID_REQUEST', kCreateValidator.problems(body).join('; '));
  if (project.orgId === null) throw new FlagwireError('INVALID_REQUEST', 'widgets belong to organisations: this is a personal project');
  if (body.flagId !== undefined) requireProjectFlag(w, project.id, body.flagId);
  const widget: Widget = {
    id: `wdg_${randomId(12)}`,
    orgId: project.orgId,
    size: body.size,
    ...(body.flagId === undefined ? {} : { flagId: body.flagId }),
  };
  w.putKeyed(kWidgetRecords, widget);
  // The action is declared below, but this capability is not in src/capabilities.ts's list, whose
  // declared actions type what appendAudit takes.
  const action = 'widget.create' as NewAuditEntry['action'];
  w.appendAudit({
    at: now,
    projectId: project.id,
    actor: actor.id,
    actorName: actor.name,
    action,
    flagId: body.flagId ?? null,
    env: null,
    changes: { widget: { before: null, after: widget } },
  });
  return widget;
}

const kWidgetCommands = commandTable({ widgetCreate });

// Declared as every capability's route is: no route number anywhere. One value, as a capability's routes
// module exports it: every load of the routes gives the same declarations.
const kWidgetRoutes = {
  apiListWidgets: {
    method: 'get',
    pattern: '/api/v1/widgets',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'listWidgets',
      tag: 'Management API',
      summary: "The widgets of the token's project's organisation",
      responses: { '200': json(WidgetList, 'The widgets'), ...apiErrors([401, 429, 500]) },
    },
    handler: {
      kind: 'read',
      run: (_request, auth, { store }) => ({
        widgets: auth.project.orgId === null ? [] : store.listKeyedBy(kWidgetRecords, 'org', [auth.project.orgId]),
      }),
    },
  },
  apiCreateWidget: {
    method: 'post',
    pattern: '/api/v1/widgets',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'createWidget',
      tag: 'Management API',
      summary: 'Make a widget, hanging off a flag of the project if it names one',
      request: { schema: WidgetCreate, required: true },
      responses: { '201': json(WidgetBody, 'Made'), ...apiErrors([400, 401, 403, 404, 413, 429, 500, 503]) },
    },
    handler: {
      kind: 'write',
      async run(_request, auth, received, release, deps) {
        const principal = { kind: 'token', tokenId: auth.token.id } as const;
        const value = await deps.writer.call(kWidgetCommands.widgetCreate, { principal, received }, release);
        return { status: 201, value };
      },
    },
  },
} satisfies Readonly<Record<string, ManagementRouteSpec>>;

const kWidgetCli = [
  command({
    name: 'widget list',
    usage: 'widget list',
    summary: 'every widget -> {widgets}',
    positionals: [],
    options: {},
    run: (_args, ctx) => ctx.read((r) => ({ widgets: r.listKeyed(kWidgetRecords) })),
    human: (result: { widgets: Widget[] }) => result.widgets.map((w) => `${w.id} ${w.size}`).join('\n'),
  }),
];

/**
 * A port the widgets listen on, read from FLAGWIRE_TEST_WIDGET_PORT (0 or unset: none): a listening
 * service declared in the capability alone, which start-up tries before anything starts as it tries the
 * sync port (test/capability/served-capability.test.ts).
 */
const kWidgetPort: PortSetting = {
  setting: 'FLAGWIRE_TEST_WIDGET_PORT',
  whenTaken: 'choose another port, or 0 for none',
  port: () => Number(process.env.FLAGWIRE_TEST_WIDGET_PORT ?? '0'),
};

/** Listens on `port` until stopped; null (nothing runs) when it is 0. */
async function listenOnWidgetPort(port: number): Promise<RunningWork | null> {
  if (port === 0) return null;
  const server = createServer((socket) => socket.end());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port, exclusive: true }, resolve);
  });
  return { stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

export const kWidgets = defineCapability({
  name: 'widgets',
  databases: ['widgets', 'widgetDrafts'],
  records: [kWidgetRecords, kWidgetDraftRecords],
  commands: kWidgetCommands,
  // Loaded on use, as every capability's command-line commands and routes are (OnUse, src/capability/capability.ts).
  cli: async () => kWidgetCli,
  schemas: { Widget: WidgetBody, WidgetList, WidgetCreate },
  auditActions: ['widget.create'],
  webhookEvent: 'flag',
  routes: async () => kWidgetRoutes,
  background: [
    {
      name: 'widget port',
      phase: 'before listening',
      runsOnRelay: true,
      listensOn: kWidgetPort,
      start: async (node) => listenOnWidgetPort(kWidgetPort.port(node.config)),
    },
  ],
});

/** What FLAGWIRE_TEST_CAPABILITY loads (src/capabilities.ts). */
export const testCapability = kWidgets;
