// Black-box: the relay's upstream side of a real server (docs/api.md: Relay service): GET /v1/relay with
// a relay key, and flagwire.relay.v1.RelayService/Follow on the sync service's port, spoken by a client
// built from the contract's proto (test/helpers/relay-client.ts). A copy from nothing, the revisions after
// a revision (empty ones kept, so the numbering is the node's), the heartbeat, a copy for a relay that
// fell past the change log, keys refused and a revoked key's open stream ended, and that only the
// relayed kinds ever leave the node, whatever else it holds (users, sessions, mail, webhooks with their
// secrets, audit).
import t from 'tap';
import * as grpc from '@grpc/grpc-js';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { kStoreLayout } from '../../src/capabilities.js';
import { kDefaultChangeLog } from '../../src/config.js';
import { type CommandInput, type CommandName, type CommandOutput, runCommand } from '../../src/writer/thread/commands.js';
import { jsonBody } from '../../src/model/request-body.js';
import { openForCli } from '../../src/store/open-store.js';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { type FollowStream, type Payload, type PayloadChange, RelayClient } from '../helpers/relay-client.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';

/** The change log's length on this server: a few commits are enough to fall past it. */
const kLogRevisions = 6;
const kRelayed = new Set(kStoreLayout.relayedChanges);

const dataDir = tempDataDir();
const world = buildWorld(dataDir);
const { ids } = world;
const key = world.run('relayKeyCreate', { name: 'edge' }).secret;
const laterRevoked = world.run('relayKeyCreate', { name: 'revoked while open' });
const revoked = world.run('relayKeyCreate', { name: 'revoked' });
world.run('relayKeyRevoke', { keyId: revoked.id });
await world.store.close();

const server = await startTestServer({
  dataDir,
  syncPort: 'free',
  env: { FLAGWIRE_CHANGE_LOG_REVISIONS: String(kLogRevisions), FLAGWIRE_SYNC_MAX_STREAMS: '10' },
});
// Changes made while the server runs go through the embedded write path, which logs them, as the
// command line's do.
const console = await openForCli(dataDir, kStoreLayout, null, { ...kDefaultChangeLog, revisions: kLogRevisions });
const relay = new RelayClient(server.syncPort);
t.teardown(async () => {
  relay.close();
  await console.writes.close();
  await server.stop();
});

async function write<N extends CommandName>(name: N, input: CommandInput<N>): Promise<CommandOutput<N>> {
  const [settled] = await console.writes.commit(() => [(w) => runCommand(w, name, input, Date.now())]);
  if (!settled!.ok) throw settled!.error;
  return settled!.value as CommandOutput<N>;
}

async function discovery(authorization?: string): Promise<{ status: number; json: any }> {
  return call(server.baseUrl, 'GET', '/v1/relay', authorization === undefined ? {} : { headers: { authorization } });
}

/** The stream's `n`th payload (0-based), once it came. */
async function payload(stream: FollowStream, n: number): Promise<Payload & { at: number }> {
  await pollUntil(
    `payload ${n}`,
    async () => stream.payloads.length > n || stream.ended !== null,
    (v) => v,
  );
  if (stream.payloads.length <= n) throw new Error(`ended: ${JSON.stringify(stream.ended)}`);
  return stream.payloads[n]!;
}

/** How the stream ended, once it did. */
async function ending(stream: FollowStream): Promise<{ code: number; details: string }> {
  await pollUntil(
    'the end',
    async () => stream.ended,
    (v) => v !== null,
  );
  return stream.ended!;
}

/** Revisions payloads from the stream until it holds `revision`, all their revisions in order. */
async function revisionsUpTo(stream: FollowStream, revision: number): Promise<{ revision: number; changes: PayloadChange[] }[]> {
  await pollUntil(
    `revision ${revision}`,
    async () =>
      stream.payloads.some((p) => p.t === 'revisions' && p.revisions.some((r) => r.revision === revision)) || stream.ended !== null,
    (v) => v,
  );
  return stream.payloads.flatMap((p) => (p.t === 'revisions' ? p.revisions : []));
}

t.test('discovery: 200 with a live key (the sync port, the source, the revision), 401 in the envelope without one', async (t) => {
  const ok = await discovery(`Bearer ${key}`);
  t.equal(ok.status, 200);
  t.strictSame(Object.keys(ok.json).sort(), ['revision', 'source', 'syncPort']);
  t.equal(ok.json.syncPort, server.syncPort);
  t.match(ok.json.source, /^[0-9a-f-]{36}$/);
  t.type(ok.json.revision, 'number');
  for (const [authorization, error] of [
    [undefined, 'Missing bearer token'],
    ['Bearer fwr_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'Invalid token'],
    ['Bearer fw_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'Malformed bearer token'],
    [`Bearer ${revoked.secret}`, 'Token revoked'],
  ] as const) {
    const refused = await discovery(authorization);
    t.equal(refused.status, 401, `${authorization ?? 'no key'}: 401`);
    t.equal(refused.json.error, error);
    t.type(refused.json.detail, 'string');
    t.type(refused.json.docs, 'string');
  }
});

t.test('from nothing: a copy of every relayed record at the revision discovery names', async (t) => {
  const { json } = await discovery(`Bearer ${key}`);
  const stream = relay.follow({ source: '', revision: 0 }, key);
  const first = await payload(stream, 0);
  stream.cancel();
  if (first.t !== 'copy') throw new Error(`a ${first.t} first`);
  t.equal(first.source, json.source);
  t.ok(first.revision >= json.revision);
  const kinds = new Set(first.records.map((r) => r.kind));
  t.strictSame(
    [...kinds].filter((k) => !kRelayed.has(k)),
    [],
    'only relayed kinds',
  );
  for (const kind of ['org', 'project', 'audience', 'flag', 'token', 'relayKey']) t.ok(kinds.has(kind), `holds ${kind} records`);
  t.ok(
    first.records.some((r) => r.kind === 'flag' && r.value.id === ids.flag),
    'the flags',
  );
  t.notOk(
    first.records.some((r) => r.kind === 'relayKey' && 'secret' in r.value),
    'relay keys as stored: hashed',
  );
});

t.test('from another source: a copy', async (t) => {
  const { json } = await discovery(`Bearer ${key}`);
  const stream = relay.follow({ source: 'another-database', revision: json.revision }, key);
  const first = await payload(stream, 0);
  stream.cancel();
  t.equal(first.t, 'copy');
});

t.test('after a revision: nothing to send is a heartbeat at once, then each commit as revisions, empty ones too', async (t) => {
  const { json } = await discovery(`Bearer ${key}`);
  const stream = relay.follow({ source: json.source, revision: json.revision }, key);
  t.teardown(() => stream.cancel());
  t.strictSame(await payload(stream, 0), { t: 'heartbeat', revision: json.revision, at: stream.payloads[0]!.at }, 'up to date');

  await write('userCreate', { email: 'numbering@a.test' });
  const flag = await write('flagCreate', { projectId: ids.single, body: { name: 'relayed-now' }, principal: kOperator });
  const revisions = await revisionsUpTo(stream, json.revision + 2);
  t.strictSame(
    revisions.map((r) => r.revision),
    [json.revision + 1, json.revision + 2],
    "consecutive: the relay's revision is the node's",
  );
  t.strictSame(revisions[0]!.changes, [], "a user's revision is sent, with nothing in it");
  t.ok(
    revisions[1]!.changes.some((c) => c.kind === 'flag' && c.value.id === flag.id),
    'the flag, at its revision',
  );
  t.notOk(
    revisions[1]!.changes.some((c) => c.kind === 'audit'),
    'not its audit entry',
  );
});

t.test('a heartbeat every 5 s while nothing else is sent', async (t) => {
  const { json } = await discovery(`Bearer ${key}`);
  const stream = relay.follow({ source: json.source, revision: json.revision }, key);
  t.teardown(() => stream.cancel());
  const first = await payload(stream, 0);
  const second = await payload(stream, 1);
  t.equal(second.t, 'heartbeat');
  if (second.t === 'heartbeat') t.equal(second.revision, json.revision, 'naming the revision the relay holds');
  t.ok(second.at - first.at >= 4500, `${Math.round(second.at - first.at)} ms apart: not before the 5 s`);
});

t.test('a relay that fell past the change log is sent a copy', async (t) => {
  const { json } = await discovery(`Bearer ${key}`);
  for (let i = 0; i <= kLogRevisions; i++) await write('orgCreate', { principal: kOperator, name: `Filler ${i}`, plan: 'teams' });
  const stream = relay.follow({ source: json.source, revision: json.revision }, key);
  const first = await payload(stream, 0);
  stream.cancel();
  t.equal(first.t, 'copy', `${kLogRevisions + 1} revisions behind a log of ${kLogRevisions}`);
  if (first.t === 'copy') t.ok(first.revision >= json.revision + kLogRevisions + 1);

  const near = relay.follow({ source: json.source, revision: json.revision + 2 }, key);
  const caughtUp = await payload(near, 0);
  near.cancel();
  t.equal(caughtUp.t, 'revisions', 'one the log still reaches is sent the revisions');
});

t.test('only relayed kinds leave the node: users, sessions, mail, webhooks with secrets, audit stay home', async (t) => {
  const { json: before } = await discovery(`Bearer ${key}`);
  const user = await write('userCreate', { email: 'secret-person@a.test', name: 'Secret Person' });
  await write('sessionStart', { userId: user.id, idHash: 'b'.repeat(64), csrfToken: 'csrf-secret', expiresAt: Date.now() + 3_600_000 });
  await write('orgInvite', {
    orgId: ids.orgA,
    email: 'invited@a.test',
    role: 'viewer',
    principal: principalOf(ids.owner),
    consoleUrl: 'http://127.0.0.1/console/',
  });
  const hook = await write('webhookCreate', {
    principal: kOperator,
    projectId: ids.single,
    received: jsonBody(JSON.stringify({ url: 'https://hooks.example.com/relay' })),
  });
  await write('flagPatch', { flagId: ids.flag, env: null, principal: kOperator, patch: { trafficPercentage: 30 } } as never);
  const { json: after } = await discovery(`Bearer ${key}`);
  t.ok(after.revision > before.revision, 'the writes made revisions');

  const fromRevision = relay.follow({ source: before.source, revision: before.revision }, key);
  const revisions = await revisionsUpTo(fromRevision, after.revision);
  fromRevision.cancel();
  const fromZero = relay.follow({ source: '', revision: 0 }, key);
  const copy = await payload(fromZero, 0);
  fromZero.cancel();
  if (copy.t !== 'copy') throw new Error(`a ${copy.t} first`);

  const sent = [...revisions.flatMap((r) => r.changes), ...copy.records];
  t.ok(sent.length > 0);
  t.strictSame(
    [...new Set(sent.map((c) => (c.kind === 'patch' ? (c.value.kind as string) : c.kind)))].filter((kind) => !kRelayed.has(kind)),
    [],
    "every change sent is of a relayed kind (a record's changed fields name their kind)",
  );
  const text = JSON.stringify({ revisions, copy });
  for (const secret of ['secret-person@a.test', 'csrf-secret', 'invited@a.test', hook.secret, 'b'.repeat(64)])
    t.notOk(text.includes(secret), `never sent: ${secret.slice(0, 12)}...`);
  t.ok(
    revisions.some((r) => r.changes.some((c) => c.kind === 'patch' && c.value.kind === 'flag' && c.value.key === ids.flag)),
    "the flag patch is sent, as the flag's changed fields",
  );
});

t.test('a wrong, missing or revoked key is UNAUTHENTICATED; revoking a key ends its open streams', async (t) => {
  for (const secret of [undefined, 'fwr_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', revoked.secret]) {
    const stream = relay.follow({ source: '', revision: 0 }, secret);
    const end = await ending(stream);
    t.equal(end.code, grpc.status.UNAUTHENTICATED, `${secret ?? 'no key'}: UNAUTHENTICATED`);
    t.equal(stream.payloads.length, 0, 'nothing sent');
  }

  const open = relay.follow({ source: '', revision: 0 }, laterRevoked.secret);
  await payload(open, 0);
  await write('relayKeyRevoke', { keyId: laterRevoked.id });
  const end = await ending(open);
  t.equal(end.code, grpc.status.UNAUTHENTICATED, 'the open stream ended');
  t.match(end.details, /revoked/);
  t.equal((await discovery(`Bearer ${laterRevoked.secret}`)).status, 401, 'and discovery refuses it');
});

t.test("Follow streams count against FLAGWIRE_SYNC_MAX_STREAMS, as flagd's do", async (t) => {
  const streams = Array.from({ length: 10 }, () => relay.follow({ source: '', revision: 0 }, key));
  t.teardown(() => {
    for (const s of streams) s.cancel();
  });
  for (const s of streams) await payload(s, 0);
  const one = relay.follow({ source: '', revision: 0 }, key);
  const end = await ending(one);
  t.equal(end.code, grpc.status.RESOURCE_EXHAUSTED, 'one more is refused');
  t.match(end.details, /FLAGWIRE_SYNC_MAX_STREAMS/);
});
