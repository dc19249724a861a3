// The OpenFeature CLI's manifest API against a real server, checked against the CLI's own documents
// (test/fixtures/openfeature-cli: its OpenAPI document api/v0/sync.yaml and the manifest file's JSON schema):
// a project's flags of every type read as the manifest; a flag created, updated and deleted by a write
// token through the flags' own commands; a read token refused every write; every refusal in the
// document's ErrorResponse, which the CLI's client decodes (a path no route has in the Management API's
// envelope); a guarded environment's write held as a change request that changes nothing until approved;
// bad bodies refused 400, naming their fields; another project's flags never reached.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import t, { type Test } from 'tap';
import { parse } from 'yaml';
import { principalOf } from '../../src/actor/audit-actor.js';
import { cli } from '../helpers/cli.js';
import { call, type Reply } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';

const fixture = (name: string) =>
  readFileSync(fileURLToPath(new URL(`../../../test/fixtures/openfeature-cli/${name}`, import.meta.url)), 'utf8');

/**
 * The document's components as JSON schemas, with its one widening (docs/openfeature-cli.md): `float`,
 * which the CLI's push sends and its pull parses though the enum omits it, with a default value that is
 * a number but not an integer (beside the document's integer, so its oneOf still takes one branch).
 */
const document = parse(fixture('sync.yaml')) as { components: { schemas: Record<string, any> } };
const components = structuredClone(document.components.schemas);
components.ManifestFlag.properties.type.enum.push('float');
components.FlagDefaultValue.oneOf.push({ type: 'number', not: { type: 'integer' } });
const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addSchema({ $id: 'sync', components: { schemas: components } });
const shape = (name: string): ValidateFunction => ajv.compile({ $ref: `sync#/components/schemas/${name}` });
const kManifest = shape('ManifestEnvelope');
const kFlagResponse = shape('ManifestFlagResponse');
const kArchived = shape('ArchiveResponse');
const kErrorResponse = shape('ErrorResponse');
/** The manifest file the CLI's pull writes (schema/v0/flag-manifest.json), from which it generates accessors. */
const kManifestFile = ajv.compile(JSON.parse(fixture('flag-manifest.json')));

/** Asserts `value` is of the documented shape, naming its problems if not. */
function conforms(t: Test, check: ValidateFunction, value: unknown, what: string): void {
  t.ok(check(value), `${what} is of the documented shape${check.errors ? `: ${ajv.errorsText(check.errors)}` : ''}`);
}

const { server, world } = await startWorldServer(t);
const { ids, secrets } = world;
const base = server.baseUrl;
const api = (method: string, path: string, token: string, body?: unknown) => call(base, method, path, { token, body });
const manifest = (token: string, query = '') => api('GET', `/openfeature/v0/manifest${query}`, token);
const flagPath = (key: string) => `/openfeature/v0/manifest/flags/${encodeURIComponent(key)}`;

/**
 * A refusal in the document's ErrorResponse: Flagwire's detail as its message, its title as its code, with
 * the docs link and the store revision every Management API answer names. Its error, for more checks.
 */
function refused(t: Test, r: Reply, status: number, error: string, detail?: RegExp): any {
  t.equal(r.status, status, `${status} ${error}: ${r.text}`);
  conforms(t, kErrorResponse, r.json, 'the refusal');
  t.strictSame(Object.keys(r.json ?? {}), ['error'], 'the error response, nothing beside its error');
  const body = r.json?.error;
  t.equal(body?.status, status, 'its status');
  t.equal(body?.code, error, "Flagwire's title");
  t.match(body?.docs, /^https?:\/\/\S+#[a-z-]+$/, 'the docs link');
  if (detail) t.match(body?.message, detail);
  t.match(r.headers.get('flagwire-revision'), /^\d+$/, 'the store revision');
  return body;
}

/** A flag of the Management API by name in the token's project, or undefined. */
async function stored(token: string, name: string, env = ''): Promise<any> {
  const r = await api('GET', `/api/v1/flags?name=${encodeURIComponent(name)}${env}`, token);
  return r.json.flags[0];
}

// The single project's flags: its two boolean flags (checkout, banner) and one of every typed kind.
const typed = [
  { name: 'greeting', variants: { hello: 'Hello', hi: 'Hi' }, defaultVariant: 'hi' },
  { name: 'page-size', variants: { small: 10, large: 50 }, defaultVariant: 'large' },
  { name: 'ratio', variants: { low: 0.25, high: 0.75 }, defaultVariant: 'low' },
  { name: 'theme', variants: { dark: { bg: '#000' }, light: { bg: '#fff' } }, defaultVariant: 'dark' },
  { name: 'beta-on', variants: { on: true, off: false }, defaultVariant: 'on', description: 'Beta for everyone' },
  { name: 'no-default', variants: { a: 'A' }, defaultVariant: null },
];
for (const body of typed) {
  const r = await api('POST', '/api/v1/flags', secrets.write, body);
  if (r.status !== 201) throw new Error(`create ${body.name}: ${r.status} ${r.text}`);
}

t.test('GET reads every flag of the project as the documented manifest, with the token capabilities', async (t) => {
  const r = await manifest(secrets.read);
  t.equal(r.status, 200, r.text);
  conforms(t, kManifest, r.json, 'the manifest');
  t.equal(r.headers.get('x-manifest-capabilities'), 'read');
  const flag = (key: string, type: string, defaultValue: unknown, description = '') => ({
    key,
    name: key,
    type,
    description,
    defaultValue,
  });
  t.strictSame(r.json.flags, [
    flag('banner', 'boolean', false),
    flag('beta-on', 'boolean', true, 'Beta for everyone'),
    flag('checkout', 'boolean', false),
    flag('greeting', 'string', 'Hi'),
    flag('no-default', 'string', ''),
    flag('page-size', 'integer', 50),
    flag('ratio', 'float', 0.25),
    flag('theme', 'object', { bg: '#000' }),
  ]);
  t.equal((await manifest(secrets.write)).headers.get('x-manifest-capabilities'), 'read,write,delete');
  // The manifest file the CLI writes from it (flags keyed by key, `flagType`), as its own schema says it.
  const file = {
    flags: Object.fromEntries(
      r.json.flags.map((f: any) => [f.key, { flagType: f.type, defaultValue: f.defaultValue, description: f.description }]),
    ),
  };
  conforms(t, kManifestFile, file, 'the pulled manifest file');
});

t.test('POST creates, PUT updates, DELETE removes, each through the flags own rules', async (t) => {
  const maxItems = (description: string, defaultValue: number) => ({ key: 'max-items', type: 'integer', description, defaultValue });
  const created = await api('POST', '/openfeature/v0/manifest/flags', secrets.write, maxItems('Items per cart', 5));
  t.equal(created.status, 201, created.text);
  conforms(t, kFlagResponse, created.json, 'the created flag');
  t.match(created.json, { flag: { key: 'max-items', type: 'integer', defaultValue: 5, description: 'Items per cart' } });
  t.equal(created.headers.get('x-manifest-capabilities'), 'read,write,delete');
  t.match(await stored(secrets.read, 'max-items'), { variants: { default: 5 }, defaultVariant: 'default', enabled: false });

  const off = await api('POST', '/openfeature/v0/manifest/flags', secrets.write, { key: 'plain', type: 'boolean', defaultValue: false });
  t.equal(off.status, 201, off.text);
  t.notOk('variants' in (await stored(secrets.read, 'plain')), 'a boolean defaulting to false is a plain Flagwire flag');

  const updated = await api('PUT', flagPath('max-items'), secrets.write, maxItems('Items per basket', 8));
  t.equal(updated.status, 200, updated.text);
  conforms(t, kFlagResponse, updated.json, 'the updated flag');
  t.match(updated.json.flag, { defaultValue: 8, description: 'Items per basket' });
  t.match(await stored(secrets.read, 'max-items'), {
    variants: { default: 5, 'default-2': 8 },
    defaultVariant: 'default-2',
    description: 'Items per basket',
  });
  // A value one of its variants holds is chosen, not added again.
  const back = await api('PUT', flagPath('max-items'), secrets.write, { key: 'max-items', type: 'integer', defaultValue: 5 });
  t.equal(back.status, 200, back.text);
  t.match(await stored(secrets.read, 'max-items'), { variants: { default: 5, 'default-2': 8 }, defaultVariant: 'default' });

  const deleted = await api('DELETE', flagPath('max-items'), secrets.write);
  t.equal(deleted.status, 200, deleted.text);
  conforms(t, kArchived, deleted.json, 'the delete answer');
  t.equal(await stored(secrets.read, 'max-items'), undefined, 'deleted');
  t.notOk(
    (await manifest(secrets.read)).json.flags.some((f: any) => f.key === 'max-items'),
    'gone from the manifest',
  );
  refused(t, await api('DELETE', flagPath('max-items'), secrets.write), 404, 'Not found');
  refused(
    t,
    await api('PUT', flagPath('max-items'), secrets.write, { key: 'max-items', type: 'integer', defaultValue: 1 }),
    404,
    'Not found',
  );
});

t.test('a read token may read but never write', async (t) => {
  const before = (await manifest(secrets.read)).json;
  refused(
    t,
    await api('POST', '/openfeature/v0/manifest/flags', secrets.read, { key: 'x', type: 'boolean', defaultValue: true }),
    403,
    'Insufficient permission',
  );
  refused(
    t,
    await api('PUT', flagPath('banner'), secrets.read, { key: 'banner', type: 'boolean', defaultValue: true }),
    403,
    'Insufficient permission',
  );
  refused(t, await api('DELETE', flagPath('banner'), secrets.read), 403, 'Insufficient permission');
  refused(t, await call(base, 'GET', '/openfeature/v0/manifest'), 401, 'Missing bearer token');
  refused(t, await manifest('not-a-token'), 401, 'Malformed bearer token');
  t.strictSame((await manifest(secrets.read)).json, before, 'nothing changed');
  // A method no route of the path has is refused before any manifest route is matched: Flagwire's own 404.
  const unmatched = await api('GET', '/openfeature/v0/manifest/flags', secrets.read);
  t.equal(unmatched.status, 404, unmatched.text);
  t.equal(typeof unmatched.json?.error, 'string', "Flagwire's own error body, not the manifest's");
});

t.test('bad input is refused 400, naming the fields, nothing written', async (t) => {
  const before = (await manifest(secrets.read)).json;
  const post = (body: unknown) => api('POST', '/openfeature/v0/manifest/flags', secrets.write, body);
  const half = refused(
    t,
    await post({ key: 'half', type: 'integer', defaultValue: 1.5 }),
    400,
    'Invalid request',
    /defaultValue must be an integer/,
  );
  t.strictSame(half?.details, [{ field: 'defaultValue', message: half?.message }], 'the field it names');
  const untyped = refused(t, await post({ key: 'no-type', defaultValue: true }), 400, 'Invalid request', /type is required/);
  t.match(untyped?.details, [{ field: 'type', message: /type is required/ }]);
  refused(t, await post({ key: 'odd', type: 'date', defaultValue: 'x' }), 400, 'Invalid request', /type must be one of/);
  const extra = refused(
    t,
    await post({ key: 'extra', type: 'boolean', defaultValue: true, rules: [] }),
    400,
    'Invalid request',
    /unknown field "rules"/,
  );
  t.match(extra?.details, [{ field: 'rules', message: 'unknown field "rules"' }]);
  refused(
    t,
    await post({ key: 'named', name: 'Other', type: 'boolean', defaultValue: true }),
    400,
    'Invalid request',
    /name must be the same as key/,
  );
  const taken = refused(t, await post({ key: 'banner', type: 'boolean', defaultValue: true }), 400, 'Invalid request', /already exists/);
  t.notOk(taken !== undefined && 'details' in taken, 'no details where no field is named');
  const raw = await call(base, 'POST', '/openfeature/v0/manifest/flags', {
    token: secrets.write,
    raw: '{"key":',
    headers: { 'content-type': 'application/json' },
  });
  refused(t, raw, 400, 'Invalid request', /not valid JSON/);
  const large = await call(base, 'POST', '/openfeature/v0/manifest/flags', {
    token: secrets.write,
    raw: `{"key":"big","type":"string","defaultValue":"${'x'.repeat(1_100_000)}"}`,
    headers: { 'content-type': 'application/json' },
  });
  refused(t, large, 413, 'Request body too large');
  const put = (key: string, body: unknown) => api('PUT', flagPath(key), secrets.write, body);
  refused(t, await put('banner', { key: 'checkout', type: 'boolean', defaultValue: true }), 400, 'Invalid request', /must be the path's/);
  refused(
    t,
    await put('greeting', { key: 'greeting', type: 'integer', defaultValue: 3 }),
    400,
    'Invalid request',
    /does not change a flag's type/,
  );
  t.strictSame((await manifest(secrets.read)).json, before, 'nothing changed');
});

t.test("another project's flags are never read, changed or deleted", async (t) => {
  const other = await manifest(secrets.writeB);
  t.equal(other.status, 200, other.text);
  t.strictSame(
    other.json.flags.map((f: any) => f.key),
    ['checkout'],
    "project B's manifest holds its own flag only",
  );
  refused(
    t,
    await api('PUT', flagPath('greeting'), secrets.writeB, { key: 'greeting', type: 'string', defaultValue: 'Yo' }),
    404,
    'Not found',
  );
  refused(t, await api('DELETE', flagPath('greeting'), secrets.writeB), 404, 'Not found');
  // The same key in both projects: B's write changes B's flag alone.
  const b = await api('PUT', flagPath('checkout'), secrets.writeB, {
    key: 'checkout',
    type: 'boolean',
    defaultValue: true,
    description: 'B',
  });
  t.equal(b.status, 200, b.text);
  t.match(await stored(secrets.read, 'checkout'), { description: '' }, "the single project's checkout is untouched");
  t.notOk('variants' in (await stored(secrets.read, 'checkout')));
  t.match(
    (await manifest(secrets.read)).json.flags.find((f: any) => f.key === 'greeting'),
    { defaultValue: 'Hi' },
  );
});

t.test('a token limited to some environments reads those alone and writes nothing of every environment', async (t) => {
  const made = await api('POST', '/api/v1/flags', secrets.multiWrite, {
    name: 'prod-only',
    environments: { production: { variants: { p: 'production' }, defaultVariant: 'p' } },
  });
  t.equal(made.status, 201, made.text);
  const read = async (token: string, query = '') => (await manifest(token, query)).json.flags.find((f: any) => f.key === 'prod-only');
  t.match(await read(secrets.multiRead), { type: 'string', defaultValue: 'production' }, 'its first environment with variants');
  t.match(await read(secrets.multiRead, '?env=staging'), { type: 'boolean', defaultValue: false }, 'the environment asked for');
  t.match(await read(secrets.stagingWrite), { type: 'boolean', defaultValue: false }, "a staging token reads staging's");
  refused(t, await manifest(secrets.stagingWrite, '?env=production'), 403, 'Environment not permitted');
  const body = { key: 'prod-only', type: 'string', defaultValue: 'other' };
  refused(t, await api('PUT', flagPath('prod-only'), secrets.stagingWrite, body), 403, 'Environment not permitted');
  refused(t, await api('DELETE', flagPath('prod-only'), secrets.stagingWrite), 403, 'Environment not permitted');
  refused(t, await api('POST', '/openfeature/v0/manifest/flags', secrets.stagingWrite, { ...body, key: 'new' }), 403, 'Forbidden');
  t.match(await read(secrets.multiRead), { defaultValue: 'production' }, 'nothing changed');
  t.equal((await api('DELETE', flagPath('prod-only'), secrets.multiWrite)).status, 200, 'a token of every environment deletes it');
});

t.test('a write to a guarded environment opens a change request and changes nothing until approved', async (t) => {
  world.run('approvalsSet', { projectId: ids.multi, env: 'production', required: 1, bypassTokens: [], principal: principalOf(ids.admin) });
  const before = (await manifest(secrets.multiRead)).json;
  t.strictSame(
    before.flags.map((f: any) => f.key),
    ['search'],
  );

  const put = await api('PUT', flagPath('search'), secrets.multiWrite, { key: 'search', type: 'boolean', defaultValue: true });
  t.equal(put.status, 202, put.text);
  t.match(put.json, { changeRequest: { id: /^chr_/, status: 'pending', projectId: ids.multi, environments: ['production'] } });
  const posted = await api('POST', '/openfeature/v0/manifest/flags', secrets.multiWrite, {
    key: 'colour',
    type: 'string',
    defaultValue: 'red',
  });
  t.equal(posted.status, 202, posted.text);
  const deleted = await api('DELETE', flagPath('search'), secrets.multiWrite);
  t.equal(deleted.status, 202, deleted.text);
  t.equal(deleted.json.changeRequest.id, put.json.changeRequest.id, "the delete edits the author's request of that flag");
  t.equal(deleted.json.edited, true);
  t.strictSame((await manifest(secrets.multiRead)).json, before, 'nothing changed while the requests wait');
  t.notOk('variants' in (await stored(secrets.multiRead, 'search', '&env=production')), 'production unchanged');

  /** `flagwire request approve` by the editor of the version `request show` reads first. */
  const approve = async (requestId: string) => {
    const seen = (await cli(server.dataDir, ['request', 'show', requestId])).json;
    const approved = await cli(server.dataDir, ['request', 'approve', requestId, '--version', String(seen.version), '--as', ids.editor]);
    t.equal(approved.code, 0, approved.stderr);
  };
  // The request holding search's changes, its delete last: search goes, colour still waits for its own.
  await approve(put.json.changeRequest.id);
  t.strictSame((await manifest(secrets.multiRead)).json.flags, [], 'search deleted once approved; colour not yet');
  await approve(posted.json.changeRequest.id);
  const colour = { key: 'colour', name: 'colour', type: 'string', description: '', defaultValue: 'red' };
  t.strictSame((await manifest(secrets.multiRead)).json.flags, [colour], 'colour made once approved');
  t.match(await stored(secrets.multiRead, 'colour', '&env=production'), { variants: { default: 'red' }, defaultVariant: 'default' });
});

t.test("over the per-address rate limit, the CLI's ErrorResponse; the Management API's plain text beside it", async (t) => {
  const limited = await startWorldServer(t, { FLAGWIRE_RATE_LIMIT: '3' });
  const read = limited.world.secrets.read;
  for (let i = 0; i < 3; i++) t.equal((await call(limited.server.baseUrl, 'GET', '/openfeature/v0/manifest', { token: read })).status, 200);
  const r = await call(limited.server.baseUrl, 'GET', '/openfeature/v0/manifest', { token: read });
  const body = refused(t, r, 429, 'Too many requests', /wait a minute before retrying/);
  t.match(body?.docs, /#too-many-requests$/);
  t.equal(r.headers.get('retry-after'), '60');
  const plain = await call(limited.server.baseUrl, 'GET', '/api/v1/token', { token: read });
  t.equal(plain.status, 429);
  t.match(plain.headers.get('content-type'), /^text\/plain/, "the Management API's own routes keep the spec's plain 429");
});
