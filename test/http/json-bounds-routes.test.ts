// Black-box: every route that takes a JSON body refuses one past the JSON bounds (src/http/json-bounds.ts)
// before it is parsed, with a 4xx in the route's own envelope that says which bound, and the server
// answers on: the routes are read from the served OpenAPI document, so a route added later is walked too.
// SCIM's routes (not in the document) answer in SCIM's error shape, and a small gzip events body that
// inflates to megabytes of `[[[[` is refused as it inflates, without the node growing (issue 96, item 4).
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import t, { type Test } from 'tap';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { kMaxJsonDepth, kMaxJsonElements } from '../../src/http/json-bounds.js';
import { experimentPlan } from '../helpers/experiment-plan.js';
import { call, type Reply } from '../helpers/http.js';
import { kNoEvalBodyBudget, startWorldServer } from '../helpers/world-server.js';
import { findUserByEmail } from '../../src/model/records/org-records.js';

// One client sends every route its large bodies within seconds: its evaluation body bytes per second
// (charged before the bound is checked) are lifted to their most, so each route answers its own bound.
const { server, world } = await startWorldServer(t, kNoEvalBodyBudget);
const base = server.baseUrl;

const kTooDeep = new RegExp(`deeper than ${kMaxJsonDepth} levels`);
const kTooMany = new RegExp(`more than ${kMaxJsonElements} JSON elements`);
/** An object whose one value nests 100,000 arrays: 200 KB, within the body cap. */
const kDeep = `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
/** An object whose one value is an array of 300,000 zeros: 600 KB, within the body cap. */
const kWide = `{"a":[${'0,'.repeat(300_000)}0]}`;

// An Owner's write token (single sign-on is an Owner's to change), and the records the routes' paths
// name, so that what each route refuses is the body, not its path or its token.
const ownerWrite = world.run('tokenCreate', {
  projectId: world.ids.single,
  principal: principalOf(world.ids.owner),
  name: 'bounds',
  permission: 'write',
}).secret;
const made = async (path: string, body: object) => {
  const reply = await call(base, 'POST', path, { token: ownerWrite, body });
  if (reply.status !== 201) throw new Error(`${path}: ${reply.status} ${reply.text}`);
  return reply.json;
};
const clientKey = await made('/api/v1/client-keys', { name: 'bounds', uses: ['events', 'frontend'] });
await made('/api/v1/fragments', { name: 'paying', rule: { '==': [{ var: 'plan' }, 'pro'] } });
const experiment = await made('/api/v1/experiments', experimentPlan(world.ids.flag, 1000));

/** The value each path parameter takes. */
const kParams: Record<string, string> = {
  flag_id: world.ids.flag,
  key: world.ids.flag,
  name: 'paying',
  experiment: experiment.key,
  request_id: 'anything',
  project_id: world.ids.single,
};
/** A relay's routes take a relay key, as GET /v1/relay does. */
const relayKey = world.run('relayKeyCreate', { name: 'bounds' }).secret;

/** Peak resident memory of the server's process (every thread of it), in bytes. */
function peakRss(): number {
  const status = readFileSync(`/proc/${server.proc.pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)![1]) * 1024;
}

/** The server still answers: a request of another kind, after the refusal. */
async function stillAnswers(t: Test): Promise<void> {
  t.equal((await call(base, 'GET', '/health')).status, 200, 'the server answers on');
}

t.test("every route of the OpenAPI document with a JSON body: a 4xx in the route's envelope naming the bound", async (t) => {
  const doc = (await call(base, 'GET', '/api/v1/openapi.json')).json;
  const schemas = doc.components.schemas as Record<string, { required?: string[] }>;
  let walked = 0;
  for (const [template, operations] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (operation.requestBody?.content?.['application/json'] === undefined) continue;
      walked++;
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(kParams[name] ?? 'anything'));
      const bearer = template.startsWith('/v1/relay/')
        ? relayKey
        : (operation.security ?? doc.security ?? []).some((s: object) => 'clientKeyAuth' in s)
          ? clientKey.secret
          : ownerWrite;
      // The 400's envelope, as the document names it: its required members are what the refusal must have.
      const envelope = schemas[(operation.responses['400'].content['application/json'].schema.$ref as string).split('/').pop()!]!;
      for (const [kind, body, detail] of [
        ['deep', kDeep, kTooDeep],
        ['wide', kWide, kTooMany],
      ] as const) {
        const reply: Reply = await call(base, method.toUpperCase(), path, {
          token: bearer,
          raw: body,
          headers: { 'content-type': 'application/json', 'x-flagwire-project': world.ids.single },
        });
        const what = `${method.toUpperCase()} ${template}, ${kind}`;
        t.ok(reply.status >= 400 && reply.status < 500, `${what}: ${reply.status} ${reply.text.slice(0, 300)}`);
        t.ok(
          (envelope.required ?? []).every((member) => reply.json?.[member] !== undefined),
          `${what}: the envelope's members (${envelope.required})`,
        );
        // The detail is a member of the envelope, or of its `error` object where the route speaks another
        // standard's shape (the OpenFeature CLI's ErrorResponse: `{error: {message}}`).
        const members = [...Object.values(reply.json ?? {}), ...Object.values(reply.json?.error ?? {})];
        t.ok(
          members.some((value) => typeof value === 'string' && detail.test(value)),
          `${what}: the detail names the bound: ${reply.text.slice(0, 300)}`,
        );
      }
    }
  }
  t.ok(walked >= 25, `${walked} routes walked`);
  await stillAnswers(t);
});

t.test("SCIM: a body nested deep, or 50,000 objects deep in name, is a 400 in SCIM's shape", async (t) => {
  const { secret } = world.run('scimEnable', { orgId: world.ids.orgB, principal: kOperator });
  const scim = (path: string, method: string, raw: string) =>
    call(base, method, `/scim/v2${path}`, { token: secret, raw, headers: { 'content-type': 'application/scim+json' } });
  const user = (name: string) => `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"deep@b.test","name":${name}}`;
  const nested = (depth: number) => `${'{"givenName":'.repeat(depth)}"x"${'}'.repeat(depth)}`;
  for (const [what, reply] of [
    ['10 KB of [ and ]', await scim('/Users', 'POST', `${'['.repeat(5000)}${']'.repeat(5000)}`)],
    ['50,000 objects in name', await scim('/Users', 'POST', user(nested(50_000)))],
    ['a wide name', await scim('/Users', 'POST', user(`[${'0,'.repeat(300_000)}0]`))],
    ['a PATCH nested deep', await scim(`/Users/${world.ids.ownerB}`, 'PATCH', kDeep)],
  ] as const) {
    t.equal(reply.status, 400, `${what}: ${reply.text.slice(0, 300)}`);
    t.match(
      reply.json,
      {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
        status: '400',
        scimType: 'invalidSyntax',
        detail: /deeper than|JSON elements/,
      },
      what,
    );
  }
  t.equal((await scim('/Users', 'POST', user(nested(kMaxJsonDepth - 2)))).status, 400, 'within the bounds: read, and refused for its name');
  t.equal(findUserByEmail(world.store, 'deep@b.test'), undefined, 'no one made');
  await stillAnswers(t);
});

t.test('a gzip events body inflating to megabytes of [ is refused as it inflates, and the node does not grow', async (t) => {
  // 8 MiB less a little (within the inflate bound) of valid JSON: each about 8 KB gzipped, as the issue's.
  const depth = 4 * 1024 * 1024 - 64;
  const bomb = gzipSync(`{"events":${'['.repeat(depth)}${']'.repeat(depth)}}`);
  t.ok(bomb.length < 64 * 1024, `${bomb.length} bytes gzipped`);
  const before = peakRss();
  const replies = await Promise.all(
    Array.from({ length: 4 }, () =>
      call(base, 'POST', '/ofrep/v1/events', {
        token: clientKey.secret,
        raw: new Uint8Array(bomb),
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      }),
    ),
  );
  for (const reply of replies) {
    t.equal(reply.status, 400, reply.text.slice(0, 300));
    t.match(reply.json, { error: 'Invalid request', detail: kTooDeep });
  }
  const grown = peakRss() - before;
  t.ok(grown < 256 * 1024 * 1024, `the peak grew ${Math.round(grown / 1024 / 1024)} MiB (each body parsed whole held about 500 MiB)`);
  await stillAnswers(t);
});
