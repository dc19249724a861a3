// Raw events (issue 58, item 4; docs/events.md: Raw events) against a real server: kept only once the
// project's settings ask for it (a setting changed through the Management API, by a write token of every
// environment, audited); exported as JSON lines and as Parquet (read back with DuckDB), in the order they
// were counted, within the asked range; an erased subject's raw events gone; expired ones never
// exported; none kept once the setting is off.
import t from 'tap';
import { call } from '../helpers/http.js';
import { startExperimentServer } from '../helpers/experiment-server.js';
import { parquetRows } from '../helpers/parquet-rows.js';
import { advanceClock } from '../helpers/test-hooks.js';

const { server, base, world, clientKey } = await startExperimentServer(t, { FLAGWIRE_TEST_HOOKS: '1' });
const { secrets } = world;
const settings = (token: string, body?: unknown) =>
  call(base, body === undefined ? 'GET' : 'PATCH', '/api/v1/events/settings', body === undefined ? { token } : { token, body });
const send = (events: unknown[]) => call(base, 'POST', '/ofrep/v1/events', { token: clientKey, body: { events } });
const exported = async (query = '', token = secrets.read): Promise<{ status: number; type: string | null; bytes: Buffer }> => {
  const r = await fetch(`${base}/api/v1/events/export${query}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: r.status, type: r.headers.get('content-type'), bytes: Buffer.from(await r.arrayBuffer()) };
};
const lines = (bytes: Buffer) =>
  bytes
    .toString()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));

const t0 = Date.now();
const exposure = (subject: string, variant: string, at = t0) => ({
  kind: 'exposure',
  key: 'new-checkout',
  targetingKey: subject,
  variant,
  timestamp: at,
});
const track = (subject: string, value: number, details?: object) => ({
  kind: 'track',
  key: 'purchase',
  targetingKey: subject,
  value,
  timestamp: t0,
  ...(details ? { details } : {}),
});

t.test('off by default: counted events are not kept', async (t) => {
  t.strictSame((await settings(secrets.read)).json, { rawEventRetentionDays: null });
  t.equal((await send([exposure('early', 'on')])).status, 200);
  const r = await exported();
  t.equal(r.status, 200);
  t.equal(r.bytes.length, 0, 'nothing to export');
});

t.test('the setting: a write token of every environment changes it, audited; bad values change nothing', async (t) => {
  const readOnly = await settings(secrets.read, { rawEventRetentionDays: 30 });
  t.equal(readOnly.status, 403, readOnly.text);
  const limited = await call(base, 'PATCH', '/api/v1/events/settings', {
    token: secrets.stagingWrite,
    body: { rawEventRetentionDays: 30 },
  });
  t.equal(limited.status, 403, limited.text);
  t.match(limited.json, { error: 'Environment not permitted', detail: /whole project/ });
  for (const bad of [0, 401, 1.5, 'ten', { rawEventRetentionDays: 3, extra: 1 }]) {
    const body = typeof bad === 'object' ? bad : { rawEventRetentionDays: bad };
    const r = await settings(secrets.write, body);
    t.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
  }
  const set = await settings(secrets.write, { rawEventRetentionDays: 30 });
  t.equal(set.status, 200, set.text);
  t.strictSame(set.json, { rawEventRetentionDays: 30 });
  t.strictSame((await settings(secrets.read)).json, { rawEventRetentionDays: 30 });
  world.store.resetReadTxn();
  const [entry] = world.store.listAudit(world.ids.single, { limit: 1, before: null });
  t.match(entry, { action: 'events.settings', changes: { rawEventRetentionDays: { before: null, after: 30 } } }, 'audited');
});

t.test('kept as received, exported in the order counted as JSON lines and as Parquet', async (t) => {
  const batch = [
    exposure('ann', 'on'),
    track('ann', 12.5, { plan: 'pro', seats: 3 }),
    exposure('bob', 'off'),
    exposure('ann', 'off'),
    track('bob', 2),
  ];
  const answer = await send(batch);
  t.strictSame(answer.json, { accepted: 5, duplicates: 1, rejected: [] });
  const rejected = await send([exposure('cay', 'purple')]);
  t.equal(rejected.json.rejected.length, 1, 'a rejected event');
  const r = await exported();
  t.equal(r.status, 200);
  t.equal(r.type, 'application/jsonl');
  const kept = lines(r.bytes);
  const expected = batch.map((e) => ({
    kind: e.kind,
    key: e.key,
    targetingKey: e.targetingKey,
    variant: e.kind === 'exposure' ? (e as { variant: string }).variant : null,
    value: e.kind === 'track' ? (e as { value: number }).value : null,
    details: (e as { details?: object }).details ?? null,
    timestamp: e.timestamp,
  }));
  t.match(kept, expected, 'every counted event, duplicate included, in order; the rejected one is not kept');
  t.equal(kept.length, 5);
  for (const e of kept) t.ok(e.storedAt >= t0 && e.storedAt <= Date.now(), 'with when it was stored');

  const p = await exported('?format=parquet');
  t.equal(p.status, 200);
  t.equal(p.type, 'application/vnd.apache.parquet');
  t.equal(p.bytes.subarray(0, 4).toString(), 'PAR1', 'a Parquet file');
  t.strictSame(await parquetRows(p.bytes), kept, "the Parquet file's rows are the JSON lines'");

  const last = kept.at(-1).storedAt;
  t.equal(lines((await exported(`?from=${last + 1}`)).bytes).length, 0, 'from: after the last, none');
  t.equal(lines((await exported(`?to=${kept[0].storedAt}`)).bytes).length, 0, 'to: before the first, none');
  t.equal(lines((await exported(`?from=${new Date(kept[0].storedAt).toISOString()}`)).bytes).length, 5, 'an ISO time');
  t.equal((await exported('?format=csv')).status, 400, 'an unknown format');
  t.equal((await exported('?from=yesterday')).status, 400, 'a time that is none');
  t.equal((await exported('', secrets.multiRead)).status, 400, "another project's token: its project needs env");
  t.equal(lines((await exported('?env=staging', secrets.multiRead)).bytes).length, 0, "another project's token sees none of these");
});

t.test("an erased subject's raw events are gone", async (t) => {
  const erased = await call(base, 'POST', '/api/v1/events/subjects/erase', { token: secrets.write, body: { targetingKey: 'bob' } });
  t.equal(erased.json.erased, true);
  const kept = lines((await exported()).bytes);
  t.equal(kept.length, 3);
  t.notOk(
    kept.some((e) => e.targetingKey === 'bob'),
    'none of bob',
  );
});

t.test('expired events are never exported (test/events/storage-limits.test.ts shows them forgotten)', async (t) => {
  t.equal((await settings(secrets.write, { rawEventRetentionDays: 1 })).status, 200);
  t.equal((await send([track('dan', 1)])).status, 200);
  t.equal(lines((await exported()).bytes).length, 4, 'ann 3, dan 1');
  await advanceClock(server, 24 * 3600 - 60);
  t.equal(lines((await exported()).bytes).length, 4, 'a day less a minute on: none expired yet');
  await advanceClock(server, 30 * 24 * 3600);
  t.equal(lines((await exported()).bytes).length, 0, 'all expired');
  const fresh = [exposure('eve', 'on', Date.now() + 30 * 24 * 3600 * 1000 + 24 * 3600 * 1000)];
  t.equal((await send(fresh)).status, 200);
  t.match(lines((await exported()).bytes), [{ targetingKey: 'eve' }], 'only the new one');
});

t.test('off again: new events are not kept', async (t) => {
  t.strictSame((await settings(secrets.write, { rawEventRetentionDays: null })).json, { rawEventRetentionDays: null });
  t.equal((await send([exposure('fay', 'on', Date.now() + 31 * 24 * 3600 * 1000)])).status, 200);
  t.notOk(lines((await exported()).bytes).some((e) => e.targetingKey === 'fay'));
});
