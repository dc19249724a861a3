// Black-box: GET /api/v1/openapi.json is public, a valid OpenAPI 3.1 document, generated from the
// schemas the code uses, and documents every declared route (src/all-routes.ts); the server
// registers exactly the declared routes.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { FlagList, FlagRepresentation, PatchResult } from '../../src/flags/representation-shapes.js';
import { TokenDescription } from '../../src/tokens/representation.js';
import { ErrorEnvelope, ErrorBody as EvalErrorBody } from '../../src/error-schemas.js';
import { kConsoleOnlyErrors, kErrors, type ErrorCode } from '../../src/errors.js';
import { EvalFlag, EvalFlagList } from '../../src/model/eval-shapes.js';
import { FlagCreate, FlagPatch } from '../../src/model/schemas.js';
import { OfrepBulkSuccess, OfrepEvaluationFailure, OfrepEvaluationSuccess } from '../../src/model/ofrep-schemas.js';
import { ManifestErrorResponse } from '../../src/openfeature-manifest/schemas.js';
import { Health, ReadinessBody as Readiness } from '../../src/model/probes.js';
import { kAllRoutes, kManagementRoutesOutsideApi } from '../../src/all-routes.js';
import { openApiPath } from '../../src/routes/route-table.js';
import { kCapabilityList } from '../../src/capabilities.js';
import { openApiComponents, resolved } from '../../src/openapi/document.js';
import { ref } from '../../src/routes/openapi-parts.js';
import { Type } from '../../src/typebox.js';
import { call } from '../helpers/http.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';

const dataDir = tempDataDir();
const world = buildWorld(dataDir);
const server = await startTestServer({ dataDir, env: { FLAGWIRE_TEST_HOOKS: '1', FLAGWIRE_RATE_LIMIT: '3' } });
t.teardown(async () => {
  await server.stop();
  await world.store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const res = await fetch(`${server.baseUrl}/api/v1/openapi.json`);
const doc = (await res.json()) as any;

t.test('served without a token, as JSON, and not rate limited', async (t) => {
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/json');
  t.equal(res.headers.get('access-control-allow-origin'), '*');
  for (let i = 0; i < 5; i++) t.equal((await fetch(`${server.baseUrl}/api/v1/openapi.json`)).status, 200);
  const statuses = [];
  for (let i = 0; i < 5; i++) statuses.push((await call(server.baseUrl, 'GET', '/api/v1/flags', { token: world.secrets.read })).status);
  t.equal(statuses.at(-1), 429, 'the Management API behind it is rate limited as before');
});

t.test('a valid OpenAPI 3.1 document', async (t) => {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(doc));
  t.same(result.errors ?? [], []);
  t.ok(result.valid);
  t.equal(validator.version, '3.1');
  t.equal(doc.openapi, '3.1.0');
});

t.test('every registered route is declared, every declared route registered, and every documented one in the document', async (t) => {
  const routes = (await call(server.baseUrl, 'GET', '/__test/routes')).json as { method: string; pattern: string }[];
  t.ok(routes.length > 10);
  const registered = new Set(routes.map(({ method, pattern }) => `${method} ${pattern}`));
  t.equal(registered.size, routes.length, 'no route registered twice');
  const declared = new Set<string>();
  const expectedDocs = new Set<string>();
  for (const route of Object.values(kAllRoutes)) {
    const method = route.method === 'del' ? 'delete' : route.method;
    if (route.via !== 'management') declared.add(`${method} ${route.pattern}`);
    if (route.docs) expectedDocs.add(`${method} ${openApiPath(route.pattern)}`);
  }
  // A Management API route outside /api/v1 (the native snapshot) has a uWS entry of its own.
  for (const route of kManagementRoutesOutsideApi) declared.add(`${route.method === 'del' ? 'delete' : route.method} ${route.pattern}`);
  for (const route of registered) t.ok(declared.has(route), `declared: ${route}`);
  for (const route of declared) t.ok(registered.has(route), `registered: ${route}`);
  const documented = new Set<string>();
  for (const [path, ops] of Object.entries(doc.paths as Record<string, object>))
    for (const m of Object.keys(ops)) documented.add(`${m} ${path}`);
  t.same([...documented].sort(), [...expectedDocs].sort());
  for (const path of ['/ofrep/v1/evaluate/flags', '/metrics', '/ready', '/v1/stream/project/{project_id}']) t.ok(doc.paths[path], path);
});

t.test("generated from the code's schemas, not a second copy", async (t) => {
  const plain = (schema: TSchema) => JSON.parse(JSON.stringify(schema));
  t.same(doc.components.schemas.FlagCreate, plain(FlagCreate));
  t.same(doc.components.schemas.FlagPatch, plain(FlagPatch));
  const create = doc.paths['/api/v1/flags'].post;
  t.same(create.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/FlagCreate' });
});

t.test("each capability's components are its own declarations (schemas), under the names it gives them", async (t) => {
  const plain = (schema: TSchema) => JSON.parse(JSON.stringify(schema));
  let declared = 0;
  for (const capability of kCapabilityList) {
    for (const [name, schema] of Object.entries(capability.schemas ?? {})) {
      declared++;
      t.same(doc.components.schemas[name], plain(schema), `${capability.name}: ${name}`);
    }
  }
  t.ok(declared >= 20, `the capabilities declare ${declared} components`);
  t.equal(Object.keys(doc.components.schemas).length, openApiComponents().size, 'the service and the capabilities: no other');
  // A route naming a schema that no one declares: the document refuses to be built, naming it.
  const undeclared = Type.Object({}, { description: 'an undeclared body' });
  t.throws(() => resolved({ schema: ref(undeclared) }, new Map()), /names an OpenAPI schema no one declares \("an undeclared body"\)/);
  t.same(resolved({ schema: ref(FlagCreate) }, new Map([[FlagCreate, 'FlagCreate']])), {
    schema: { $ref: '#/components/schemas/FlagCreate' },
  });
});

t.test('typed variants (issue 25) are in the request bodies and in both forms of the representation', async (t) => {
  const { FlagCreate: create, FlagPatch: patch, FlagRepresentation: representation } = doc.components.schemas;
  const [flat, environments] = representation.anyOf;
  for (const key of ['variants', 'defaultVariant', 'targeting']) {
    t.ok(create.properties[key], `FlagCreate.${key}`);
    t.ok(create.properties.environments.patternProperties['^(.*)$'].properties[key], `FlagCreate.environments.*.${key}`);
    t.ok(patch.properties[key], `FlagPatch.${key}`);
    t.ok(flat.properties[key] && !flat.required.includes(key), `flat form: optional ${key}`);
    const entry = environments.properties.environments.patternProperties['^(.*)$'];
    t.ok(entry.properties[key] && !entry.required.includes(key), `environments form: optional ${key}`);
  }
});

t.test('the error envelope and every status of the error table', async (t) => {
  const api = [
    '/api/v1/token',
    '/api/v1/flags',
    '/api/v1/flags/{flag_id}',
    '/api/v1/export',
    '/api/v1/plan',
    '/api/v1/apply',
    '/api/v1/flags/{flag_id}/schedules',
    '/api/v1/schedules',
    '/api/v1/schedules/{schedule_id}/cancel',
    '/api/v1/flags/{flag_id}/rollouts',
    '/api/v1/rollouts',
    '/api/v1/rollouts/{rollout_id}/{action}',
  ].flatMap((p) => Object.values(doc.paths[p]) as any[]);
  const statuses = new Set(api.flatMap((op) => Object.keys(op.responses)));
  for (const [code, { status, title }] of Object.entries(kErrors)) {
    const described = api.some((op) => op.responses[String(status)]?.description.includes(title));
    if (kConsoleOnlyErrors.has(code as ErrorCode)) {
      t.notOk(described, `web console error "${title}" is not a Management API response`);
      continue;
    }
    t.ok(statuses.has(String(status)), `status ${status}`);
    t.ok(described, `title "${title}" named`);
  }
  for (const op of api) {
    t.same(op.security, [{ bearerAuth: [] }]);
    for (const [status, response] of Object.entries(op.responses) as [string, any][]) {
      if (Number(status) >= 400)
        t.same(response.content['application/json'].schema, { $ref: '#/components/schemas/ErrorEnvelope' }, status);
    }
  }
  t.same(doc.paths['/v1/flags/{flag_id}'].get.security, [], 'the Evaluation API needs no credentials');
});

t.test("the OpenFeature CLI's manifest routes declare their refusals in its ErrorResponse, not the envelope", async (t) => {
  const ops = ['/openfeature/v0/manifest', '/openfeature/v0/manifest/flags', '/openfeature/v0/manifest/flags/{key}'].flatMap(
    (p) => Object.values(doc.paths[p]) as any[],
  );
  t.equal(ops.length, 4);
  for (const op of ops) {
    for (const [status, response] of Object.entries(op.responses) as [string, any][]) {
      if (Number(status) >= 400)
        t.same(response.content['application/json'].schema, { $ref: '#/components/schemas/ManifestErrorResponse' }, status);
    }
  }
});

t.test('the response schemas describe what the server really sends', async (t) => {
  const check = async (schema: TSchema, method: string, path: string, opts: Parameters<typeof call>[3] = {}) => {
    const r = await call(server.baseUrl, method, path, opts);
    t.ok(
      Value.Check(schema, r.json),
      `${method} ${path} ${r.status}: ${[...Value.Errors(schema, r.json)].map((e) => `${e.path} ${e.message}`).join('; ')}`,
    );
    return r;
  };
  // The rate limit is 3 a minute per address: move the server's clock two minutes on (the window slides) between calls.
  const nextMinute = () => call(server.baseUrl, 'POST', '/__test/clock?advance=121');
  const { ids, secrets } = world;
  await nextMinute();
  await check(TokenDescription, 'GET', '/api/v1/token', { token: secrets.multiRead });
  await check(FlagList, 'GET', '/api/v1/flags', { token: secrets.multiRead });
  await check(FlagRepresentation, 'GET', `/api/v1/flags/${ids.groupFlag}?env=staging`, { token: secrets.multiRead });
  await nextMinute();
  await check(PatchResult, 'PATCH', `/api/v1/flags/${ids.flag}`, { token: secrets.write, body: { trafficPercentage: 60 } });
  await check(FlagRepresentation, 'POST', '/api/v1/flags', { token: secrets.multiWrite, body: { name: 'openapi-made' } });
  await check(ErrorEnvelope, 'GET', '/api/v1/flags/flg_nope', { token: secrets.write });
  await nextMinute();
  const manifestRefusal = await check(ManifestErrorResponse, 'DELETE', '/openfeature/v0/manifest/flags/nope', { token: secrets.write });
  t.equal(manifestRefusal.status, 404, manifestRefusal.text);
  await check(EvalFlag, 'GET', `/v1/flags/${ids.flag}?targetingKey=u1`);
  await check(EvalFlagList, 'GET', `/v1/flags/project/${ids.single}`);
  await check(EvalErrorBody, 'GET', '/v1/flags/flg_nope');
  await check(OfrepEvaluationSuccess, 'POST', `/ofrep/v1/evaluate/flags/${ids.flag}`, { body: { context: { targetingKey: 'u1' } } });
  await check(OfrepEvaluationFailure, 'POST', `/ofrep/v1/evaluate/flags/${ids.flag}`, { body: { context: {} } });
  await check(OfrepBulkSuccess, 'POST', '/ofrep/v1/evaluate/flags', { body: {}, headers: { 'x-flagwire-project': ids.single } });
  await check(Health, 'GET', '/health');
  await check(Readiness, 'GET', '/ready');
});

// Redocly's recommended rules (@redocly/cli lint, no config file): the served document has no error
// and no warning. Telemetry and the update check are off: the test never leaves this machine.
t.test('@redocly/cli lint with its recommended rules: 0 errors, 0 warnings', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'flagwire-lint-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(doc));
  const redocly = fileURLToPath(new URL('../../../node_modules/.bin/redocly', import.meta.url));
  const { stdout } = await new Promise<{ stdout: string }>((resolve) => {
    execFile(
      redocly,
      ['lint', file, '--extends', 'recommended', '--format', 'json'],
      {
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        maxBuffer: 1 << 26,
      },
      (_err, stdout) => resolve({ stdout }),
    );
  });
  const report = JSON.parse(stdout) as {
    totals: { errors: number; warnings: number };
    problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
  };
  const listed = report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`).join('\n');
  t.equal(report.totals.errors, 0, `no errors\n${listed}`);
  t.equal(report.totals.warnings, 0, `no warnings\n${listed}`);
});
