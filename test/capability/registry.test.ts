// The tables derived from the one list of capabilities (src/capabilities.ts): the writer's commands by
// name, the command line's index, the web console's JSON API, the Management API's routes (their labels
// and OpenAPI paths), the audit actions and the webhook event each is sent as. Each is checked against
// the declarations, so a capability that is listed is in every table, once. The store's lists, derived
// from the record kinds the capabilities declare, are test/store/store-layout.test.ts (each database
// declared by one owner; a kind declared once is recorded, copied and exported) and
// test/store/replica.test.ts ("a full copy of an empty source").
import t from 'tap';
import {
  auditActionEvents,
  capabilityCommands,
  kAuditActionEvents,
  kCapabilityCommands,
  kCapabilityList,
  webhookEventOf,
} from '../../src/capabilities.js';
import { cliCommands, kCliCommands } from '../../src/cli/commands.js';
import type { WebhookEvent } from '../../src/capability/webhook-events.js';
import { openApiComponents, openApiPaths } from '../../src/openapi/document.js';
import { kAllRoutes, kRouteLabels, routeNumber, routeNumbers, routeTable } from '../../src/all-routes.js';
import { kStreamRoutes } from '../../src/stream/routes.js';
import { openApiPath, routeLabel } from '../../src/routes/route-table.js';
import { kApiRoutes } from '../../src/web-console/api.js';
import { isCommandName } from '../../src/writer/thread/commands.js';
import { kWidgets, WidgetBody } from '../helpers/widgets.js';
import { loadPart } from '../../src/capability/capability.js';

/** The names in `names` given more than once. */
function twice(names: readonly string[]): string[] {
  return names.filter((name, i) => names.indexOf(name) !== i);
}

t.test("every capability's commands are the writer's by name, each name declared once", async (t) => {
  const names = kCapabilityList.flatMap((c) => Object.values(c.commands ?? {}).map((command) => command.name));
  t.ok(names.length > 0);
  for (const name of names) t.ok(isCommandName(name), `${name} runs by name`);
  for (const c of kCapabilityList)
    for (const [key, command] of Object.entries(c.commands ?? {})) t.equal(command.name, key, `${c.name}: ${key} is its name on the wire`);
});

t.test("every capability's command-line commands are in the index, in the capabilities' order, each once", async (t) => {
  const declared = (await loadPart(kCapabilityList, 'cli')).flatMap((commands) => commands ?? []);
  t.ok(declared.length > 0);
  const places = declared.map((command) => kCliCommands.indexOf(command));
  t.notOk(places.includes(-1), 'each is in the index');
  t.strictSame(
    places,
    [...places].sort((a, b) => a - b),
    'in the order src/capabilities.ts lists their capabilities',
  );
  t.strictSame(twice(kCliCommands.map((command) => command.name)), [], 'no command-line name declared twice');
});

t.test("every capability's console routes are in the console's JSON API, each method and pattern once", async (t) => {
  const declared = (await loadPart(kCapabilityList, 'consoleRoutes')).flatMap((routes) => routes ?? []);
  t.ok(declared.length > 0);
  for (const route of declared) t.ok(kApiRoutes.includes(route), `${route.method} /console/api/${route.pattern}`);
  for (const route of kApiRoutes) t.ok(declared.includes(route), `${route.method} /console/api/${route.pattern} is a capability's`);
  for (const pattern of ['session', 'home', 'projects/:projectId/playground'])
    t.ok(
      declared.some((route) => route.pattern === pattern),
      `${pattern}: declared by a capability`,
    );
  t.strictSame(twice(kApiRoutes.map((route) => `${route.method} ${route.pattern}`)), [], 'no console route declared twice');
});

t.test("every capability's Management API routes are in the route table, labelled and documented", async (t) => {
  const paths = openApiPaths();
  for (const [name, route] of (await loadPart(kCapabilityList, 'routes')).flatMap((routes) => Object.entries(routes ?? {}))) {
    t.equal(kAllRoutes[name], route, `${name} is in the route table`);
    t.equal(kRouteLabels[routeNumber(name)], routeLabel(route), `${name} is labelled by its derived number`);
    const method = route.method === 'del' ? 'delete' : route.method;
    t.ok(paths[openApiPath(route.pattern)]?.[method], `${name} is in the OpenAPI paths`);
  }
});

t.test(
  "every capability's other routes (service and hosted: evaluation's) are in the route table, numbered, and given their numbers",
  async (t) => {
    const [service, hosted] = await Promise.all([loadPart(kCapabilityList, 'serviceRoutes'), loadPart(kCapabilityList, 'hostedRoutes')]);
    const declared = [...service, ...hosted].flatMap((routes) => Object.entries(routes ?? {}));
    t.ok(
      declared.some(([name]) => name === 'evaluateFlag'),
      "the Evaluation API's routes are a capability's",
    );
    for (const [name, route] of declared) {
      t.equal(kAllRoutes[name], route, `${name} is in the route table`);
      t.equal(kRouteLabels[routeNumber(name)], routeLabel(route), `${name} is labelled by its derived number`);
    }
    t.same(routeNumbers(kStreamRoutes), { stream: routeNumber('stream'), ofrepStream: routeNumber('ofrepStream') });
    t.throws(
      () => routeNumbers({ stream: { ...kStreamRoutes.stream } }),
      /route stream is not declared by a capability/,
      'a copy is not the declaration',
    );
  },
);

t.test(
  "a capability's command, command-line command, audit action and OpenAPI schema reach the derived tables from its declaration alone",
  async (t) => {
    const withWidgets = [...kCapabilityList, kWidgets];
    const commands = capabilityCommands(withWidgets);
    t.equal(commands.get('widgetCreate'), kWidgets.commands!.widgetCreate, "the writer's commands by name hold its command");
    t.equal(commands.size, kCapabilityCommands.size + 1, 'one command more');
    const cli = await cliCommands(withWidgets);
    t.strictSame(
      cli.map((c) => c.name),
      [...kCliCommands.slice(0, -1).map((c) => c.name), 'widget list', kCliCommands.at(-1)!.name],
      "the command line's index holds its command, after the capabilities listed before it and before migrate-to-postgres",
    );
    const events = auditActionEvents(withWidgets);
    t.equal(events.get('widget.create'), 'flag', 'its audit action, sent to webhooks as the event it names');
    t.equal(events.size, kAuditActionEvents.size + 1);
    const components = openApiComponents(withWidgets);
    t.equal(components.get('Widget'), WidgetBody, 'its schema is an OpenAPI component');
    t.equal(components.size, openApiComponents().size + Object.keys(kWidgets.schemas!).length, 'one component per schema it declares');
    t.throws(
      () => capabilityCommands([...withWidgets, kWidgets]),
      /writer command widgetCreate is declared twice/,
      'declared twice: an error',
    );
  },
);

t.test('a route declared by a capability gets a number and a metrics label from its declaration alone', async (t) => {
  const today = await routeTable(kCapabilityList);
  const withWidgets = await routeTable([...kCapabilityList, kWidgets]);
  const number = withWidgets.numbers.get('apiListWidgets');
  t.ok(number !== undefined, 'the test-only route is numbered');
  t.equal(withWidgets.labels[number!], '/api/v1/widgets', 'and labelled by its pattern');
  t.equal(withWidgets.routes.apiListWidgets, (await kWidgets.routes()).apiListWidgets, 'in the table of every route');
  t.equal(withWidgets.labels.length, today.labels.length + 1, 'one label more (its two routes share a pattern)');
  t.equal(new Set(withWidgets.numbers.values()).size, withWidgets.labels.length, 'every label numbered, each once');
  for (const [name, n] of today.numbers)
    t.equal(withWidgets.labels[withWidgets.numbers.get(name)!], today.labels[n], `${name} keeps its label`);
  t.equal(today.numbers.get('apiListFlags'), today.numbers.get('apiCreateFlag'), "a path's routes share their label's number");
  await t.rejects(routeTable([...kCapabilityList, kWidgets, kWidgets]), /route apiListWidgets is declared twice/);
});

t.test('the webhook events are the families docs/webhooks.md names', async (t) => {
  // What a receiver subscribed to `flag`, `token` or `plan` hears of (docs/webhooks.md, "What is sent"):
  // flags, environments, audiences, shared fragments and experiments; tokens; scheduled changes and rollouts.
  // Webhooks' own changes, memberships, client keys, a project's events settings, SCIM's and single sign-on's go to none.
  const kFamilies: Readonly<Record<string, WebhookEvent | null>> = {
    flag: 'flag',
    env: 'flag',
    audience: 'flag',
    fragment: 'flag',
    experiment: 'flag',
    token: 'token',
    'client-key': null,
    events: null,
    schedule: 'plan',
    rollout: 'plan',
    webhook: null,
    member: null,
    scim: null,
    sso: null,
    approvals: 'request',
    request: 'request',
  };
  for (const action of kAuditActionEvents.keys()) {
    const family = action.slice(0, action.indexOf('.'));
    t.ok(Object.hasOwn(kFamilies, family), `${action}: a family the docs name`);
    t.equal(webhookEventOf(action), kFamilies[family], action);
  }
  t.equal(webhookEventOf('session.start'), null, 'an action no capability declares goes to no webhook');
});
