// The route declarations (src/routes/route-table.ts, and each capability's: src/all-routes.ts) and what is derived from them: the metrics' labels,
// the OpenAPI paths, the uWS registration and the Management API's dispatch. test/openapi checks the
// running server registers exactly the declared routes.
import t from 'tap';
import type { TemplatedApp } from 'uWebSockets.js';
import { kRoutes, openApiMethod, openApiPath, registerRoutes, routeLabel, type RouteDeclaration } from '../../src/routes/route-table.js';
import { kEvaluationApiRoutes } from '../../src/evaluation/engine/evaluation-api-routes.js';
import { kAllRoutes, kManagementRoutes, kRouteLabels, matchManagementRoute, routeNumber } from '../../src/all-routes.js';
import { compilePattern, matchPath, matchesShape } from '../../src/http/route-pattern.js';
import { openApiPaths } from '../../src/openapi/document.js';
import { kCapabilityList } from '../../src/capabilities.js';
import { loadPart } from '../../src/capability/capability.js';

/** What a browser asks of the origin itself, not part of any API (docs/decisions.md: The origin's root). */
const kAskedByBrowsers = ['/', '/favicon.ico'];
const routes = Object.entries(kAllRoutes) as (readonly [string, RouteDeclaration])[];

t.test('every counted route is labelled by its derived number, and every label is a route, once', async (t) => {
  for (const [name, route] of routes) {
    if (route.counted === false) {
      t.ok(
        route.pattern.startsWith('/console') ||
          kAskedByBrowsers.includes(route.pattern) ||
          route.auth === 'test' ||
          route.method === 'options',
        `${name}: only the console (and what browsers ask of the origin), test hooks and preflights go uncounted`,
      );
      continue;
    }
    t.equal(kRouteLabels[routeNumber(name)], routeLabel(route), name);
  }
  for (let i = 0; i < kRouteLabels.length; i++)
    t.ok(
      routes.some(([name, r]) => r.counted !== false && routeNumber(name) === i),
      `label ${i} has a route`,
    );
  t.equal(new Set(kRouteLabels).size, kRouteLabels.length, 'no label has two numbers');
  t.throws(() => routeNumber('consolePage'), /no counted route is named consolePage/, 'an uncounted route has no number');
  t.ok(kRouteLabels.length <= 256, "numbers fit the evaluation batch's u8");
});

t.test('every route with docs is one operation of the OpenAPI paths, and there are no others', async (t) => {
  const paths = openApiPaths();
  let operations = 0;
  for (const ops of Object.values(paths)) operations += Object.keys(ops).length;
  const documented = routes.filter(([, r]) => r.docs !== undefined);
  t.equal(operations, documented.length);
  for (const [name, route] of documented) {
    const op = paths[openApiPath(route.pattern)]?.[openApiMethod(route.method)] as { operationId: string; security: unknown[] } | undefined;
    t.equal(op?.operationId, route.docs?.operationId, name);
    const security = route.auth === 'token' ? [{ bearerAuth: [] }] : route.auth === 'clientKey' ? [{ clientKeyAuth: [] }] : [];
    t.same(op?.security, security, `${name}: security from its auth`);
  }
  for (const [name, route] of routes)
    if (route.auth === 'none' && route.docs === undefined)
      t.ok(
        route.pattern.includes('*') || route.pattern.startsWith('/console') || kAskedByBrowsers.includes(route.pattern),
        `${name}: a public route without docs is a catch-all, the console's or one browsers ask of the origin`,
      );
});

t.test('registerRoutes attaches each handler at its declared method and pattern, in the order given', async (t) => {
  const calls: string[] = [];
  const record = (method: string) => (pattern: string) => calls.push(`${method} ${pattern}`);
  const app = { get: record('get'), post: record('post'), any: record('any'), options: record('options') } as unknown as TemplatedApp;
  const noop = () => {};
  registerRoutes(app, kEvaluationApiRoutes, { evaluateProject: noop, evaluateFlag: noop });
  registerRoutes(app, kRoutes, { openApi: noop, unmatched: noop });
  t.same(calls, ['get /v1/flags/project/:project_id', 'get /v1/flags/:flag_id', 'get /api/v1/openapi.json', 'any /*']);
});

t.test("the Management API's routes and their labels: by the path's shape, whatever the method", async (t) => {
  // In the capabilities' order (src/capabilities.ts), each one's routes in its declaration's order.
  const declared = (await loadPart(kCapabilityList, 'routes')).flatMap((routes) => Object.entries(routes ?? {}));
  t.ok(declared.length > 0);
  t.same(
    kManagementRoutes.map((r) => `${r.name}: ${r.method} ${r.path.pattern}`),
    declared.map(([name, r]) => `${name}: ${r.method === 'del' ? 'DELETE' : r.method.toUpperCase()} ${r.pattern}`),
  );
  // Each declared route is what its own method and path dispatch to, with its handler and its label.
  for (const [name, route] of declared) {
    const path = route.pattern.replace(/:(\w+)/g, 'p-$1');
    const method = route.method === 'del' ? 'DELETE' : route.method.toUpperCase();
    const match = matchManagementRoute(method, path);
    t.equal(match.route?.name, name, `${method} ${path} dispatches to ${name}`);
    t.equal(match.route?.handler, route.handler, `${name}: its declared handler`);
    t.equal(kRouteLabels[match.metric], routeLabel(route), `${name}: counted under its label`);
    const params = Object.fromEntries([...route.pattern.matchAll(/:(\w+)/g)].map(([, p]) => [p, `p-${p}`]));
    t.same(match.params, params, `${name}: its parameters`);
  }
  const label = (path: string) => kRouteLabels[matchManagementRoute('GET', path).metric];
  t.equal(label('/api/v1/token'), '/api/v1/token');
  t.equal(label('/api/v1/flags'), '/api/v1/flags');
  t.equal(label('/api/v1/flags/flg_1'), '/api/v1/flags/{flag_id}');
  t.equal(label('/api/v1/flags/%E0%A4%A'), '/api/v1/flags/{flag_id}', 'an undecodable id is still the flag route');
  for (const path of ['/api/v1/export', '/api/v1/plan', '/api/v1/apply', '/api/v1/schedules']) t.equal(label(path), path);
  t.equal(label('/api/v1/flags/flg_1/schedules'), '/api/v1/flags/{flag_id}/schedules');
  t.equal(label('/api/v1/schedules/sch_1/cancel'), '/api/v1/schedules/{schedule_id}/cancel');
  t.equal(label('/api/v1/rollouts'), '/api/v1/rollouts');
  t.equal(label('/api/v1/rollouts/rol_1/pause'), '/api/v1/rollouts/{rollout_id}/{action}');
  t.equal(label('/api/v1/webhooks'), '/api/v1/webhooks');
  t.equal(label('/api/v1/webhooks/whk_1/deliveries'), '/api/v1/webhooks/{webhook_id}/deliveries');
  t.equal(label('/api/v1/webhooks/whk_1/delete'), '/api/v1/webhooks/{webhook_id}/delete');
  t.equal(label('/api/v1/deliveries/msg_1/redeliver'), '/api/v1/deliveries/{delivery_id}/redeliver');
  t.equal(label('/api/v1/flags/flg_1/flagd'), '/api/v1/flags/{flag_id}/flagd');
  t.equal(label('/v1/snapshots/prj_1'), '/v1/snapshots/{project_id}', 'the snapshot route, outside /api/v1');
  t.equal(label('/api/v1/fragments/paying/delete'), '/api/v1/fragments/{name}/delete');
  for (const other of ['/api/v1/flags/', '/api/v1/flags/a/b', '/api/v1/token/', '/api/v1/nope', '/api/v1/'])
    t.equal(label(other), '/api/v1/*', other);
});

t.test("one match per Management API request: its route, parameters, a method 404's routes and its route number", async (t) => {
  const patch = matchManagementRoute('PATCH', '/api/v1/flags/flg%201');
  t.equal(patch.route?.name, 'apiPatchFlag');
  t.same(patch.params, { flag_id: 'flg 1' });
  t.equal(kRouteLabels[patch.metric], '/api/v1/flags/{flag_id}');
  const act = matchManagementRoute('POST', '/api/v1/rollouts/rol_1/pause');
  t.equal(act.route?.name, 'apiActOnRollout');
  t.same(act.params, { rollout_id: 'rol_1', action: 'pause' });
  const wrongMethod = matchManagementRoute('DELETE', '/api/v1/flags/flg_1');
  t.equal(wrongMethod.route, null);
  t.same(wrongMethod.params, {});
  t.same(
    wrongMethod.pathRoutes.map((r) => r.method),
    ['GET', 'PATCH'],
    'the methods the path accepts, in declaration order',
  );
  t.equal(kRouteLabels[wrongMethod.metric], '/api/v1/flags/{flag_id}');
  const undecodable = matchManagementRoute('GET', '/api/v1/flags/%E0%A4%A');
  t.equal(undecodable.route, null);
  t.same(undecodable.pathRoutes, [], 'no route of the path: its id cannot be decoded');
  t.equal(kRouteLabels[undecodable.metric], '/api/v1/flags/{flag_id}', 'still counted as the flag route');
  const none = matchManagementRoute('GET', '/api/v1/nope');
  t.equal(none.route, null);
  t.same(none.pathRoutes, []);
  t.equal(none.metric, routeNumber('management'));
  // Two routes of one path (one label): one number.
  t.equal(matchManagementRoute('GET', '/api/v1/webhooks').route?.name, 'apiListWebhooks');
  t.equal(matchManagementRoute('GET', '/api/v1/webhooks').metric, matchManagementRoute('POST', '/api/v1/webhooks').metric);
});

t.test('the path matcher', async (t) => {
  const p = compilePattern('flags/:flagId/rename');
  t.same(matchPath(p, 'flags/flg%201/rename'), { flagId: 'flg 1' });
  t.equal(matchPath(p, 'flags//rename'), null, 'a parameter is never empty');
  t.equal(matchPath(p, 'flags/%E0%A4%A/rename'), null, 'nor undecodable');
  t.ok(matchesShape(p, 'flags/%E0%A4%A/rename'), 'though it has the shape');
  t.equal(matchPath(p, 'flags/x'), null);
  t.same(matchPath(compilePattern('session'), 'session'), {});
});
