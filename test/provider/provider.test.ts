// Black-box: the Flagwire OpenFeature provider as an application uses it (provider-app.ts: the packed
// tarball installed with npm, the OpenFeature server SDK, setProviderAndWait) against real servers.
// Every value type answers as OFREP over HTTP does for a set of contexts (design §2's modulo-bucketed
// flags, audiences, cohorts, typed variants with rules, errors); a change made through the Management
// API arrives as PROVIDER_CONFIGURATION_CHANGED with the new answer; the snapshot file holds its
// revision; kill -9 of the server mid-stream keeps answers flowing (STALE); the application restarted
// while the server is down starts from the file (STALE with its age) and is READY when the server is
// back; no evaluation waits on the network (a server that accepts and never answers).
import { readFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { buildEvalWorld } from '../evaluation/engine/eval-world.js';
import { call, keptAliveCall } from '../helpers/http.js';
import { scratchDir } from '../helpers/scratch-dir.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Answer, AppProcess, installProviderApp, type Question } from './provider-app.js';
import { principalOf } from '../../src/actor/audit-actor.js';

const world = buildEvalWorld();
const { ids } = world;
const operator = { kind: 'operator' } as const;
const typedFlag = (name: string, body: Record<string, unknown>) =>
  world.run('flagCreate', { projectId: ids.single, principal: operator, body: { name, enabled: true, trafficPercentage: 100, ...body } })
    .id;
const typedIds = {
  colour: typedFlag('colour', {
    variants: { red: '#d33', green: '#2a2' },
    defaultVariant: 'red',
    targeting: { if: [{ '==': [{ var: 'plan' }, 'beta'] }, 'green', null] },
  }),
  limit: typedFlag('limit', {
    trafficPercentage: 50,
    cohorts: ['alice'],
    variants: { low: 10, high: 100 },
    defaultVariant: 'low',
    targeting: {
      fractional: [
        ['low', 50],
        ['high', 50],
      ],
    },
  }),
  config: typedFlag('config', {
    variants: { dark: { theme: 'dark', size: 2 }, light: { theme: 'light' } },
    defaultVariant: null,
    targeting: { if: [{ ends_with: [{ var: 'email' }, '@example.com'] }, 'dark', null] },
  }),
  yes: typedFlag('typed-bool', {
    variants: { yes: true, no: false },
    defaultVariant: 'no',
    targeting: { if: [{ '==': [{ var: 'country' }, 'NL'] }, 'yes', 'no'] },
  }),
  shut: typedFlag('shut', { enabled: false, variants: { a: 'A', b: 'B' }, defaultVariant: 'a' }),
};
const singleRead = world.run('tokenCreate', {
  projectId: ids.single,
  principal: principalOf(ids.owner),
  name: 'provider',
  permission: 'read',
}).secret;
const multiRead = world.run('tokenCreate', {
  projectId: ids.multi,
  principal: principalOf(ids.owner),
  name: 'provider',
  permission: 'read',
}).secret;

// Servers started one after another (kill -9, then a restart): at load 10 on 2 cores, minutes in all.
t.setTimeout(600_000);
const installed = installProviderApp();
t.comment(`provider installed: ${installed.how}`);
let server: TestServer = await startTestServer({ dataDir: world.dataDir });
// The applications' address: a TCP relay to whichever server runs now (none: a connection is dropped at
// once, as a host with nothing listening refuses it). A restarted server gets a port of its own, so no
// socket of the killed one can hold the address it needs.
const relay = createServer((client) => {
  const upstream = connect(server.port, '127.0.0.1');
  const drop = () => {
    client.destroy();
    upstream.destroy();
  };
  for (const socket of [client, upstream]) socket.on('error', drop).on('close', drop);
  client.pipe(upstream).pipe(client);
});
await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
const relayUrl = `http://127.0.0.1:${(relay.address() as { port: number }).port}`;
const apps: AppProcess[] = [];
t.teardown(async () => {
  for (const app of apps) await app.stop();
  relay.close();
  await server.stop();
  await world.store.close();
});
const startApp = (options: Partial<ConstructorParameters<typeof AppProcess>[1]>) => {
  // A server at load 10 may take seconds to answer: only the tests of an unreachable one wait less.
  const app = new AppProcess(installed, { url: relayUrl, token: singleRead, project: ids.single, initialTimeoutMs: 60_000, ...options });
  apps.push(app);
  return app;
};

const kTypes = ['boolean', 'string', 'number', 'object'] as const;
const kDefaults = { boolean: false, string: 'fallback', number: -1, object: { fallback: true } };
const singleFlags = ['on', 'off', 'half', 'zero', 'aud', 'aud-half', 'colour', 'limit', 'config', 'typed-bool', 'shut'];
const singleContexts: Record<string, unknown>[] = [
  { targetingKey: 'user-1' },
  { targetingKey: 'user-2', plan: 'beta', country: 'NL' },
  { cohort: 'alice' },
  {},
  { targetingKey: 'user-3', plan: 'alpha', country: 'NL', email: 'x@example.com' },
  { targetingKey: 'user-4', cohort: 'vip', plan: 'beta', country: 'DE', age: 42, member: true },
  { targetingKey: 'user-5', cohort: 'insider', plan: 'beta', country: 'NL' },
  { targetingKey: 42 },
  ...Array.from({ length: 16 }, (_, i) => ({ targetingKey: `key-${i}`, plan: i % 2 === 0 ? 'beta' : 'alpha', country: 'NL' })),
];

/** What OFREP over HTTP answers for `key` and `context`, as the SDK would show it for each value type. */
async function ofrepExpectations(project: string, keys: readonly string[], contexts: readonly Record<string, unknown>[]) {
  const questions: Question[] = [];
  const expected: Answer[] = [];
  for (const key of keys) {
    for (const context of contexts) {
      // Hundreds of questions: kept-alive node:http, far cheaper for this process than fetch.
      const res = await keptAliveCall(server.baseUrl, 'POST', `/ofrep/v1/evaluate/flags/${encodeURIComponent(key)}`, {
        body: { context },
        headers: { 'X-Flagwire-Project': project },
      });
      const body = res.json;
      for (const type of kTypes) {
        const defaultValue = kDefaults[type];
        questions.push({ key, type, defaultValue, context });
        expected.push(expectedAnswer(body, type, defaultValue));
      }
    }
  }
  return { questions, expected };
}

function expectedAnswer(body: any, type: string, defaultValue: unknown): Answer {
  const failed = (errorCode: string, errorMessage: string | null): Answer => ({
    value: defaultValue,
    variant: null,
    reason: 'ERROR',
    errorCode,
    errorMessage,
    flagMetadata: {},
  });
  if (body.errorCode !== undefined) return failed(body.errorCode, body.errorDetails);
  if (!('value' in body))
    return { value: defaultValue, variant: null, reason: body.reason, errorCode: null, errorMessage: null, flagMetadata: body.metadata };
  const actual = body.value === null ? 'null' : Array.isArray(body.value) ? 'array' : typeof body.value;
  if (actual !== type) return failed('TYPE_MISMATCH', null);
  return {
    value: body.value,
    variant: body.variant,
    reason: body.reason,
    errorCode: null,
    errorMessage: null,
    flagMetadata: body.metadata,
  };
}

/** The provider's answers against OFREP's, a TYPE_MISMATCH's message aside (OFREP has none: the SDK side writes it). */
function compare(t: Test, got: Answer[], expected: Answer[], questions: Question[]): void {
  let mismatches = 0;
  for (let i = 0; i < expected.length; i++) {
    const answer = expected[i]!.errorCode === 'TYPE_MISMATCH' ? { ...got[i]!, errorMessage: null } : got[i];
    if (JSON.stringify(answer) !== JSON.stringify(expected[i])) {
      if (mismatches++ < 5) t.same(answer, expected[i], `${JSON.stringify(questions[i])}`);
    }
  }
  t.equal(mismatches, 0, `${expected.length} answers, every one OFREP's`);
}

const fileA = join(scratchDir('flagwire-provider-snapshot-'), 'snapshot.json');
const appA = startApp({ snapshotPath: fileA });
let last: { questions: Question[]; expected: Answer[] };

t.test('every value type answers as OFREP over HTTP, by name and by id (single-environment project)', async (t) => {
  t.match(await appA.waitFor('init', (m) => m.init !== undefined), { init: 'ok', status: 'READY' });
  const keys = [...singleFlags, ids.half, ids.aud, typedIds.colour, typedIds.config, 'nope'];
  last = await ofrepExpectations(ids.single, keys, singleContexts);
  const run = await appA.ask(last.questions);
  t.equal(run.status, 'READY');
  compare(t, run.answers, last.expected, last.questions);
  const codes = new Set(last.expected.map((a) => a.errorCode));
  for (const code of ['FLAG_NOT_FOUND', 'TYPE_MISMATCH', 'TARGETING_KEY_MISSING', 'INVALID_CONTEXT', null])
    t.ok(codes.has(code), `covers ${code}`);
  const reasons = new Set(last.expected.map((a) => a.reason));
  for (const reason of ['STATIC', 'TARGETING_MATCH', 'SPLIT', 'DEFAULT', 'DISABLED']) t.ok(reasons.has(reason), `covers ${reason}`);
});

t.test('a multi-environment project: the environment the provider was made with, as OFREP with env', async (t) => {
  const appB = startApp({ token: multiRead, project: ids.multi, environment: 'production' });
  t.match(await appB.waitFor('init', (m) => m.init !== undefined), { init: 'ok' });
  const contexts = [
    { env: 'production', targetingKey: 'u1' },
    { env: 'production', cohort: 'qa' },
    { env: 'production', targetingKey: 'u2', plan: 'beta' },
    { env: 'production', cohort: 'wide-1' },
  ];
  const multi = await ofrepExpectations(ids.multi, ['group', 'group-aud', ids.group], contexts);
  compare(t, (await appB.ask(multi.questions)).answers, multi.expected, multi.questions);
  const other = await appB.ask([{ key: 'group', type: 'boolean', defaultValue: true, context: { env: 'staging', targetingKey: 'u1' } }]);
  t.match(other.answers[0], { value: true, errorCode: 'INVALID_CONTEXT', errorMessage: /evaluates environment "production"/ });
  const noEnv = await appB.ask([{ key: 'group', type: 'boolean', defaultValue: true, context: { cohort: 'qa' } }]);
  t.match(noEnv.answers[0], { value: true, reason: 'TARGETING_MATCH' }, 'no env in the context: its own');
});

t.test('a change through the Management API: CONFIGURATION_CHANGED naming the flag, the new answer, the file', async (t) => {
  const from = appA.messages.length;
  const patched = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.half}`, {
    token: world.writeToken,
    body: { trafficPercentage: 80, cohorts: ['carol'] },
  });
  t.equal(patched.status, 200, patched.text);
  const revision = Number(patched.headers.get('flagwire-revision'));
  const changed = await appA.waitFor('CONFIGURATION_CHANGED', (m) => m.event === 'PROVIDER_CONFIGURATION_CHANGED', from);
  t.same([...changed.flagsChanged].sort(), [ids.half, 'half'].sort(), 'the flag, by id and by name');
  last = await ofrepExpectations(ids.single, singleFlags, singleContexts);
  const run = await appA.ask(last.questions);
  t.ok((run.revision ?? 0) >= revision, 'at or after the change');
  compare(t, run.answers, last.expected, last.questions);
  const carol = await appA.ask([{ key: 'half', type: 'boolean', defaultValue: false, context: { cohort: 'carol' } }]);
  t.match(carol.answers[0], { value: true, reason: 'TARGETING_MATCH' });
  // The file is written after the swap: it reaches the change's revision soon after.
  const deadline = Date.now() + 60_000;
  let saved: any = null;
  while (Date.now() < deadline) {
    saved = JSON.parse(readFileSync(fileA, 'utf8'));
    if (saved.snapshot.revision >= revision) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  t.ok(saved.snapshot.revision >= revision, 'the snapshot file holds the revision');
  t.equal(saved.snapshot.flags.find((f: { id: string }) => f.id === ids.half).state.trafficPercentage, 80);
  t.match(saved, { savedAt: Number, etag: /^"snapshot-/ });
});

t.test('kill -9 of the server mid-stream: answers keep flowing, STALE with the age', async (t) => {
  const from = appA.messages.length;
  server.proc.kill('SIGKILL');
  await server.stop();
  const stale = await appA.waitFor('STALE', (m) => m.event === 'PROVIDER_STALE', from);
  t.match(stale.message, /unreachable.*answering from the snapshot of revision \d+, \d+ s old/);
  const run = await appA.ask(last.questions);
  t.equal(run.status, 'STALE');
  compare(t, run.answers, last.expected, last.questions);
});

t.test('the application restarted while the server is down: the file, STALE; READY once the server is back', async (t) => {
  await appA.stop();
  const saved = JSON.parse(readFileSync(fileA, 'utf8'));
  const app = startApp({ snapshotPath: fileA, initialTimeoutMs: 2000 });
  t.match(await app.waitFor('init', (m) => m.init !== undefined), { init: 'ok' });
  const stale = await app.waitFor('STALE', (m) => m.event === 'PROVIDER_STALE');
  t.match(stale.message, new RegExp(`answering from the snapshot of revision ${saved.snapshot.revision}, \\d+ s old`));
  const down = await app.ask(last.questions);
  t.equal(down.status, 'STALE');
  t.equal(down.revision, saved.snapshot.revision);
  compare(t, down.answers, last.expected, last.questions);
  const from = app.messages.length;
  server = await startTestServer({ dataDir: world.dataDir });
  await app.waitFor('READY', (m) => m.event === 'PROVIDER_READY', from);
  const patched = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${typedIds.colour}`, {
    token: world.writeToken,
    body: { targeting: { if: [{ '==': [{ var: 'plan' }, 'alpha'] }, 'green', null] } },
  });
  t.equal(patched.status, 200, patched.text);
  await app.waitFor(
    'the change after the restart',
    (m) => m.event === 'PROVIDER_CONFIGURATION_CHANGED' && m.flagsChanged.includes('colour'),
    from,
  );
  const fresh = await ofrepExpectations(ids.single, singleFlags, singleContexts);
  const up = await app.ask(fresh.questions);
  t.equal(up.status, 'READY');
  compare(t, up.answers, fresh.expected, fresh.questions);
});

t.test('no evaluation waits on the network: a server that accepts and never answers', async (t) => {
  const held: { socket: Socket; request: string }[] = [];
  const blackhole = createServer((socket) => {
    const entry = { socket, request: '' };
    held.push(entry);
    socket.on('data', (d) => (entry.request += d.toString()));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const { socket } of held) socket.destroy();
    blackhole.close();
  });
  const url = `http://127.0.0.1:${(blackhole.address() as { port: number }).port}`;
  const pendingStream = () => held.some((h) => !h.socket.destroyed && h.request.startsWith(`GET /v1/stream/project/${ids.single}`));

  // Before any snapshot (no file): the SDK's default with PROVIDER_NOT_READY, while initialize() waits.
  const bare = startApp({ url, initialTimeoutMs: 30_000 });
  const held0 = Date.now() + 60_000;
  while (!held.some((h) => h.request.startsWith(`GET /v1/snapshots/${ids.single}`)) && Date.now() < held0) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const early = await bare.ask([{ key: 'on', type: 'boolean', defaultValue: false, context: { targetingKey: 'u1' } }]);
  t.match(early.answers[0], { value: false, errorCode: 'PROVIDER_NOT_READY' });
  t.equal(early.status, 'NOT_READY');
  t.ok(
    held.some((h) => h.request.startsWith(`GET /v1/snapshots/${ids.single}`)),
    'answered while its snapshot request was held unanswered',
  );

  // From the file, the stream held open unanswered: answers at once, the file's.
  const fromFile = startApp({ url, snapshotPath: fileA, initialTimeoutMs: 1000 });
  t.match(await fromFile.waitFor('init', (m) => m.init !== undefined), { init: 'ok' });
  await fromFile.waitFor('STALE', (m) => m.event === 'PROVIDER_STALE');
  const deadline = Date.now() + 60_000;
  while (!pendingStream() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  t.ok(pendingStream(), 'its change stream request is held');
  const run = await fromFile.ask([{ key: 'on', type: 'boolean', defaultValue: false, context: { targetingKey: 'u1' } }]);
  t.match(run.answers[0], { value: true, reason: 'STATIC' });
  t.ok(pendingStream(), 'answered while the stream request was still unanswered');
});

t.test('a wrong token: PROVIDER_FATAL, the default with its code', async (t) => {
  const app = startApp({ token: 'fw_notarealtokennotarealtoken' });
  const init = await app.waitFor('init', (m) => m.init !== undefined);
  t.match(init, { init: 'failed', status: 'FATAL', message: /refused the snapshot \(401\)/ });
  const run = await app.ask([{ key: 'on', type: 'boolean', defaultValue: false, context: { targetingKey: 'u1' } }]);
  t.match(run.answers[0], { value: false, errorCode: 'PROVIDER_FATAL' });
});
