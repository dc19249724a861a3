// Black-box: the sync service (flagd.sync.v1.FlagSyncService) of a real server, spoken by a gRPC client
// built from the protocol's own definition (test/helpers/sync-client.ts): selectors in the header and in
// the deprecated field, the token in each of its three places, the environment limit, refusals as gRPC
// statuses, FetchAllFlags, GetMetadata, the stream cap, pushes on change, a revoked token's stream ended,
// and refusals recorded on the token as the Management API's are.
import http2 from 'node:http2';
import t from 'tap';
import * as grpc from '@grpc/grpc-js';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { type OpenStream, type SyncCall, SyncClient, unreadCall } from '../helpers/sync-client.js';
import { buildWorld } from '../helpers/world.js';
import { findFlagByName } from '../../src/flags/records/flag-store.js';
import { getActivity } from '../../src/model/records/token-records.js';
import { listMail } from '../../src/model/records/mail-records.js';

const kMaxStreams = 4;
const dataDir = tempDataDir();
const world = buildWorld(dataDir);
const { ids, secrets, tokenIds } = world;
// Flags flagd can say exactly: "checkout" (50%, cohorts) is left out and named.
const syncOn = world.run('flagCreate', {
  projectId: ids.single,
  body: { name: 'sync-on', enabled: true, trafficPercentage: 100 },
  principal: kOperator,
}).id;
const syncGroup = world.run('flagCreate', {
  projectId: ids.multi,
  body: { name: 'sync-group', environments: { staging: { enabled: true, trafficPercentage: 100 }, production: { enabled: false } } },
  principal: kOperator,
}).id;
// Project B's set is about 1 MiB: far more than HTTP/2's flow-control window, so a reader that does not
// read holds the server's first write (the slow-reader test).
for (let i = 0; i < 100; i++) {
  world.run('flagCreate', {
    projectId: ids.singleB,
    body: { name: `big-${i}`, enabled: true, trafficPercentage: 100, variants: { a: 'a'.repeat(10_000) }, defaultVariant: 'a' },
    principal: kOperator,
  });
}
const server = await startTestServer({ dataDir, syncPort: 'free', env: { FLAGWIRE_SYNC_MAX_STREAMS: String(kMaxStreams) } });
const client = new SyncClient(server.syncPort);
t.teardown(async () => {
  client.close();
  await server.stop();
  await world.store.close();
});

/** The stream's first set, parsed, once it came (the stream stays open). */
async function firstSet(
  stream: OpenStream,
): Promise<{ flags: Record<string, { defaultVariant?: string }>; metadata: Record<string, unknown> }> {
  await pollUntil(
    'a first set',
    async () => stream.sets.length > 0 || stream.ended !== null,
    (v) => v,
  );
  if (stream.sets.length === 0) throw new Error(`refused: ${JSON.stringify(stream.ended)}`);
  return JSON.parse(stream.sets[0]!);
}

/** The flag configurations of the complete gRPC messages in `bytes` (5-byte prefix, then field 1: tag, length, text). */
function messages(bytes: Buffer): string[] {
  const out: string[] = [];
  for (let at = 0; at + 5 <= bytes.length; ) {
    const length = bytes.readUInt32BE(at + 1);
    if (at + 5 + length > bytes.length) break;
    const message = bytes.subarray(at + 5, at + 5 + length);
    let i = 1; // past the tag byte of flag_configuration
    let size = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = message[i++]!;
      size += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) break;
    }
    out.push(message.subarray(i, i + size).toString('utf8'));
    at += 5 + length;
  }
  return out;
}

/** How a SyncFlags call is refused. */
async function refusal(request: SyncCall): Promise<{ code: number; details: string }> {
  const stream = client.syncFlags(request);
  await pollUntil(
    'the refusal',
    async () => stream.ended,
    (v) => v !== null,
  );
  t.equal(stream.sets.length, 0, 'nothing sent before the refusal');
  return stream.ended!;
}

const single = `flagSetId=${ids.single}`;

t.test('the selector in the header, the token in the authorization metadata', async (t) => {
  const stream = client.syncFlags({ header: single, authorization: `Bearer ${secrets.read}` });
  const set = await firstSet(stream);
  t.same(Object.keys(set.flags).sort(), ['banner', 'sync-on']);
  // Each flag's metadata names its id and name, as OFREP's answers do (docs/design.md §2c).
  t.same(set.flags['sync-on'], {
    state: 'ENABLED',
    variants: { on: true, off: false },
    defaultVariant: 'on',
    metadata: { id: syncOn, name: 'sync-on' },
  });
  t.equal(set.metadata.flagSetId, ids.single);
  t.equal(set.metadata.flagwireProject, ids.single);
  t.equal(set.metadata.flagwireOmitted, 'checkout');
  t.type(set.metadata.flagwireRevision, 'number');
  stream.cancel();
});

t.test('the selector in the deprecated field; the token in the provider_id or in the selector', async (t) => {
  for (const request of [
    { selector: single, providerId: secrets.read },
    { selector: single, providerId: `Bearer ${secrets.read}` },
    { selector: `${single},token=${secrets.read}` },
    { header: `${single},token=${secrets.read}` },
  ]) {
    const stream = client.syncFlags(request);
    t.equal((await firstSet(stream)).metadata.flagSetId, ids.single);
    stream.cancel();
  }
});

t.test('one environment of a multi-environment project, and the token limited to other environments', async (t) => {
  const stream = client.syncFlags({ header: `flagSetId=${ids.multi}/staging,token=${secrets.stagingWrite}` });
  const set = await firstSet(stream);
  t.equal(set.metadata.flagSetId, `${ids.multi}/staging`);
  t.equal(set.metadata.flagwireEnvironment, 'staging');
  t.same(
    set.flags['sync-group'],
    { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'on', metadata: { id: syncGroup, name: 'sync-group' } },
    "staging's state",
  );
  const production = client.syncFlags({ header: `flagSetId=${ids.multi}/production,token=${secrets.multiRead}` });
  t.equal((await firstSet(production)).flags['sync-group'].defaultVariant, 'off', "production's state");
  production.cancel();
  stream.cancel();
  const limited = await refusal({ header: `flagSetId=${ids.multi}/production,token=${secrets.stagingWrite}` });
  t.equal(limited.code, grpc.status.PERMISSION_DENIED);
  t.match(limited.details, /^Environment not permitted: This token may not access environment "production"; it is limited to: staging\.$/);
  const missing = await refusal({ header: `flagSetId=${ids.multi},token=${secrets.multiRead}` });
  t.equal(missing.code, grpc.status.INVALID_ARGUMENT);
  t.match(missing.details, `flagSetId=${ids.multi}/<environment>; valid environments: staging, production`);
  const unknown = await refusal({ header: `flagSetId=${ids.multi}/qa,token=${secrets.multiRead}` });
  t.equal(unknown.code, grpc.status.NOT_FOUND);
  t.match(unknown.details, 'Unknown environment "qa"');
  const extra = await refusal({ header: `${single}/production,token=${secrets.read}` });
  t.equal(extra.code, grpc.status.INVALID_ARGUMENT);
});

t.test('missing, wrong and revoked tokens are UNAUTHENTICATED; a token of another project reads as no project', async (t) => {
  const none = await refusal({ header: single });
  t.equal(none.code, grpc.status.UNAUTHENTICATED);
  t.match(none.details, /^Missing bearer token: Send a token of the project/);
  const wrong = await refusal({ header: `${single},token=fw_${'x'.repeat(40)}` });
  t.equal(wrong.code, grpc.status.UNAUTHENTICATED);
  t.equal(wrong.details, 'Invalid token: This token does not exist; create one in the console.');
  t.notMatch(wrong.details, 'x'.repeat(20), 'the secret is not echoed');
  const malformed = await refusal({ header: `${single},token=hunter2` });
  t.equal(malformed.code, grpc.status.UNAUTHENTICATED);
  t.notMatch(malformed.details, 'hunter2');
  const other = await refusal({ header: `flagSetId=${ids.singleB},token=${secrets.read}` });
  const nowhere = await refusal({ header: `flagSetId=prj_${'n'.repeat(16)},token=${secrets.read}` });
  t.equal(other.code, grpc.status.NOT_FOUND);
  t.equal(other.details, nowhere.details.replace(`prj_${'n'.repeat(16)}`, ids.singleB), 'the same words as a project that does not exist');
  const plan = await refusal({ header: `flagSetId=${ids.free},token=${secrets.free}` });
  t.equal(plan.code, grpc.status.PERMISSION_DENIED, "the organisation's plan allows no tokens");
  const bad = await refusal({ header: 'project=prj_x' });
  t.equal(bad.code, grpc.status.INVALID_ARGUMENT);
});

t.test('FetchAllFlags answers the stream’s set; GetMetadata its metadata', async (t) => {
  const stream = client.syncFlags({ header: single, authorization: `Bearer ${secrets.read}` });
  await firstSet(stream);
  t.equal(await client.fetchAllFlags({ header: single, authorization: `Bearer ${secrets.read}` }), stream.sets[0]);
  t.equal(await client.fetchAllFlags({ selector: `${single},token=${secrets.read}` }), stream.sets[0], 'the deprecated field');
  stream.cancel();
  const metadata = await client.getMetadata({ header: `${single},token=${secrets.read}` });
  t.same(metadata, JSON.parse(stream.sets[0]!).metadata);
  await t.rejects(client.fetchAllFlags({ header: single }), { code: grpc.status.UNAUTHENTICATED });
  await t.rejects(client.getMetadata({ header: `flagSetId=${ids.multi}/production,token=${secrets.stagingWrite}` }), {
    code: grpc.status.PERMISSION_DENIED,
  });
});

t.test('each change is pushed as the whole set; a commit elsewhere pushes nothing', async (t) => {
  const stream = client.syncFlags({ header: `${single},token=${secrets.read}` });
  await firstSet(stream);
  const flagId = findFlagByName(world.store, ids.single, 'sync-on')!.id;
  const r = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${flagId}`, { token: secrets.write, body: { enabled: false } });
  t.equal(r.status, 200);
  await pollUntil(
    'the change is pushed',
    async () => stream.sets.length,
    (n) => n === 2,
  );
  const pushed = JSON.parse(stream.sets[1]!);
  t.equal(pushed.flags['sync-on'].defaultVariant, 'off');
  t.ok(pushed.metadata.flagwireRevision > JSON.parse(stream.sets[0]!).metadata.flagwireRevision);
  // Another project changes; then this one: only this one's change is pushed.
  const b = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.flagB}`, { token: secrets.writeB, body: { enabled: false } });
  t.equal(b.status, 200);
  const again = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${flagId}`, { token: secrets.write, body: { enabled: true } });
  t.equal(again.status, 200);
  await pollUntil(
    'the second change is pushed',
    async () => stream.sets.length,
    (n) => n >= 3,
  );
  t.equal(stream.sets.length, 3, "another project's change pushed nothing");
  t.equal(JSON.parse(stream.sets[2]!).flags['sync-on'].defaultVariant, 'on');
  stream.cancel();
});

t.test(`at most ${kMaxStreams} streams per node: one more is RESOURCE_EXHAUSTED, a freed place serves again`, async (t) => {
  const open = Array.from({ length: kMaxStreams }, () => client.syncFlags({ header: `${single},token=${secrets.read}` }));
  for (const stream of open) await firstSet(stream);
  const refused = await refusal({ header: `${single},token=${secrets.read}` });
  t.equal(refused.code, grpc.status.RESOURCE_EXHAUSTED);
  t.match(refused.details, 'FLAGWIRE_SYNC_MAX_STREAMS');
  open[0]!.cancel();
  // The server sees the cancel on its own time: retry until the place is free (a minute catches a hang).
  const served = await pollUntil(
    'a place frees',
    async () => {
      const stream = client.syncFlags({ header: `${single},token=${secrets.read}` });
      await pollUntil(
        'an answer',
        async () => stream.sets.length > 0 || stream.ended !== null,
        (v) => v,
      );
      return stream;
    },
    (stream) => stream.sets.length > 0,
  );
  served.cancel();
  for (const stream of open) stream.cancel();
});

t.test('every call counts against the cap: unary calls that are not read hold places, and the next call is refused', async (t) => {
  // Two streams and two FetchAllFlags of project B's 1 MiB set whose readers read nothing (no WINDOW_UPDATE:
  // the answer cannot finish), so four calls are open: the cap.
  // The last test's streams were cancelled: the server frees their places on its own time, so each open
  // is retried until it is taken (a minute catches a hang).
  const streams = await pollUntil(
    'two streams served',
    async () => {
      const open = Array.from({ length: 2 }, () => client.syncFlags({ header: `${single},token=${secrets.read}` }));
      await Promise.all(
        open.map((stream) =>
          pollUntil(
            'an answer',
            async () => stream.sets.length > 0 || stream.ended !== null,
            (v) => v,
          ),
        ),
      );
      if (open.every((stream) => stream.sets.length > 0)) return open;
      for (const stream of open) stream.cancel();
      return null;
    },
    (open) => open !== null,
  );
  const session = await pollUntil(
    `${kMaxStreams - 2} unread calls taken`,
    async () => {
      const session = http2.connect(`http://127.0.0.1:${server.syncPort}`);
      session.on('error', () => undefined);
      const taken = await Promise.all(
        Array.from({ length: kMaxStreams - 2 }, () => {
          const request = unreadCall(session, 'FetchAllFlags', `flagSetId=${ids.singleB},token=${secrets.writeB}`);
          // The server has begun the answer (no status in the headers): the call is open.
          return new Promise<boolean>((resolve) => request.once('response', (headers) => resolve(headers['grpc-status'] === undefined)));
        }),
      );
      if (taken.every((open) => open)) return session;
      session.destroy();
      return null;
    },
    (open) => open !== null,
  );
  t.teardown(() => session!.destroy());
  await t.rejects(client.fetchAllFlags({ header: `${single},token=${secrets.read}` }), {
    code: grpc.status.RESOURCE_EXHAUSTED,
    details: /FLAGWIRE_SYNC_MAX_STREAMS/,
  });
  const refused = await refusal({ header: `${single},token=${secrets.read}` });
  t.equal(refused.code, grpc.status.RESOURCE_EXHAUSTED, 'a stream too');
  // The unread calls go with their connection: their places are free again (the server sees it on its own time).
  session!.destroy();
  for (const stream of streams!) stream.cancel();
  await pollUntil(
    'the places free',
    () =>
      client.fetchAllFlags({ header: `${single},token=${secrets.read}` }).then(
        () => true,
        () => false,
      ),
    (served) => served,
  );
  t.pass('served again');
});

t.test('streams ended by their deadline (the stock providers end theirs every 10 minutes) free their place', async (t) => {
  for (let i = 0; i < kMaxStreams + 2; i++) {
    // Its first set is not awaited: on a busy machine it may come after the client's deadline, and the
    // place is taken from the moment the stream opens either way.
    const stream = client.syncFlags({ header: `${single},token=${secrets.read}` }, 1500);
    await pollUntil(
      'the deadline ends it',
      async () => stream.ended,
      (v) => v !== null,
    );
    t.equal(stream.ended!.code, grpc.status.DEADLINE_EXCEEDED);
  }
  // Every place free again (the server sees each end on its own time: retried until then).
  await pollUntil(
    `${kMaxStreams} streams open at once`,
    async () => {
      const open = Array.from({ length: kMaxStreams }, () => client.syncFlags({ header: `${single},token=${secrets.read}` }));
      await Promise.all(
        open.map((s) =>
          pollUntil(
            'an answer',
            async () => s.sets.length > 0 || s.ended !== null,
            (v) => v,
          ),
        ),
      );
      const served = open.every((s) => s.sets.length > 0);
      for (const s of open) s.cancel();
      return served;
    },
    (served) => served,
  );
  t.pass('no place leaked');
});

t.test('keepalive pings every second without a call, as a stock provider may send them, keep the connection', async (t) => {
  const pinging = new SyncClient(server.syncPort, { 'grpc.keepalive_time_ms': 1000, 'grpc.keepalive_permit_without_calls': 1 });
  t.teardown(() => pinging.close());
  t.equal(JSON.parse(await pinging.fetchAllFlags({ header: `${single},token=${secrets.read}` })).metadata.flagSetId, ids.single);
  const states = new Set<grpc.connectivityState>();
  for (let i = 0; i < 20; i++) {
    states.add(pinging.state());
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  // A server that refused the pings would send GOAWAY (too_many_pings): the channel would leave READY.
  t.same([...states], [grpc.connectivityState.READY], 'READY throughout, 5 s of pings without a call');
  t.equal(JSON.parse(await pinging.fetchAllFlags({ header: `${single},token=${secrets.read}` })).metadata.flagSetId, ids.single);
});

t.test('a reader that stops reading holds one set in flight and gets the latest when it reads again, never a queue', async (t) => {
  const session = http2.connect(`http://127.0.0.1:${server.syncPort}`);
  t.teardown(() => session.close());
  const request = unreadCall(session, 'SyncFlags', `flagSetId=${ids.singleB},token=${secrets.writeB}`);
  const chunks: Buffer[] = [];
  let enabled = true;
  for (let i = 0; i < 15; i++) {
    enabled = !enabled;
    const r = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.flagB}`, { token: secrets.writeB, body: { enabled } });
    t.equal(r.status, 200);
    if (i % 3 === 0) await new Promise((resolve) => setTimeout(resolve, 250)); // several polls, several sets
  }
  await new Promise((resolve) => setTimeout(resolve, 1000)); // every set built and handed to the stream
  const latest = JSON.parse(await client.fetchAllFlags({ header: `flagSetId=${ids.singleB},token=${secrets.writeB}` }));
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.resume();
  // What arrived, in brief (a set is 1 MiB): how many sets, and the last one's revision.
  const received = await pollUntil(
    'the latest set arrives',
    async () => {
      const sets = messages(Buffer.concat(chunks));
      return { count: sets.length, lastRevision: sets.length === 0 ? null : JSON.parse(sets.at(-1)!).metadata.flagwireRevision };
    },
    (got) => got.lastRevision === latest.metadata.flagwireRevision,
  );
  t.ok(received.count <= 2, `the first set and the latest, not one per change (${received.count} received)`);
  request.close();
});

t.test("a revoked token's open stream ends UNAUTHENTICATED, and its refusals are on the token", async (t) => {
  const made = world.run('tokenCreate', {
    projectId: ids.single,
    principal: principalOf(ids.editor),
    name: 'sync-revoked',
    permission: 'read',
  });
  const stream = client.syncFlags({ header: `${single},token=${made.secret}` });
  await firstSet(stream);
  world.run('tokenRevoke', { tokenId: made.id, principal: principalOf(ids.editor) });
  // The spec's revocation delay is about a minute; streams are checked every 10 s.
  await pollUntil(
    'the stream ends',
    async () => stream.ended,
    (v) => v !== null,
    60_000,
  );
  t.equal(stream.ended!.code, grpc.status.UNAUTHENTICATED);
  t.match(stream.ended!.details, /^Token revoked: /);
  const again = await refusal({ header: `${single},token=${made.secret}` });
  t.equal(again.code, grpc.status.UNAUTHENTICATED);
  const activity = await pollUntil(
    "the token's activity",
    async () => {
      world.store.resetReadTxn();
      return getActivity(world.store, made.id);
    },
    (a) => a !== undefined && a.denials.length >= 2,
  );
  t.equal(activity!.denials[0]!.method, 'GRPC');
  t.equal(activity!.denials[0]!.path, '/flagd.sync.v1.FlagSyncService/SyncFlags');
  t.match(activity!.denials[0]!.reason, /^Token revoked: /);
  t.ok(
    activity!.recent.some((r) => r.status === 200),
    'the stream it opened is a use',
  );
  // The denial mail, as for the Management API: at most once per token per 24 h.
  world.store.resetReadTxn();
  t.ok(
    listMail(world.store).some((m) => m.subject === 'Flagwire: API token "sync-revoked" was refused'),
    'the creator and the owners are mailed',
  );
});

t.test('an environment refusal is a denial on the token', async (t) => {
  await pollUntil(
    "the staging token's denial",
    async () => {
      world.store.resetReadTxn();
      return getActivity(world.store, tokenIds.stagingWrite!)?.denials ?? [];
    },
    (denials) => denials.some((d) => d.reason.startsWith('Environment not permitted') && d.method === 'GRPC'),
  );
  t.pass('recorded');
});
