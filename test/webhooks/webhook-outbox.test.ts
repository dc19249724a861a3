// The webhook outbox against a real server and real receivers: the flag in a delivery is what
// GET /api/v1/flags/{id} answers at that revision, usage included; one project's hanging receivers hold
// at most its share of the node's send places, and another project's deliveries go by them; a change is
// stored once however many webhooks it goes to, and a project's outbox past its bound drops its oldest
// changes, as docs/webhooks.md says, while another project's deliveries go on.
import { statSync } from 'node:fs';
import t from 'tap';
import type { Test } from 'tap';
import { dataFilePath } from '../../src/store/layout.js';
import { kDroppedError, kMaxOutboxBytes } from '../../src/webhooks/webhook-commands.js';
import { kSendsPerProject, kSendsPerWebhook } from '../../src/webhooks/deliverer.js';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { advanceClock, flushActivity, writerIdle } from '../helpers/test-hooks.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import { startWorldServer } from '../helpers/world-server.js';
import { getOutboxUsage } from '../../src/webhooks/records.js';

const { server, world } = await startWorldServer(t, {
  FLAGWIRE_TEST_HOOKS: '1',
  // The receivers listen on loopback: the allow-list lets exactly that through.
  FLAGWIRE_WEBHOOK_ALLOW: '127.0.0.1',
  // A hanging receiver holds a send for a minute: longer than anything here may take on a busy machine.
  FLAGWIRE_WEBHOOK_TIMEOUT_MS: '60000',
});
const { ids, secrets } = world;
const base = server.baseUrl;
const api = (method: string, path: string, body?: unknown, token = secrets.write) => call(base, method, path, { token, body });
const log = async (webhookId: string, token = secrets.read) =>
  (await api('GET', `/api/v1/webhooks/${webhookId}/deliveries`, undefined, token)).json.deliveries as Record<string, any>[];

t.test("the flag in a delivery is GET /api/v1/flags/{id}'s answer at that revision, its usage included", async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const hook = (await api('POST', '/api/v1/webhooks', { url: receiver.url, events: ['flag'] })).json.id as string;
  for (let i = 0; i < 3; i++) t.equal((await call(base, 'GET', `/v1/flags/${ids.flag}?targetingKey=u-${i}`)).status, 200);
  await flushActivity(server);
  t.equal((await api('PATCH', `/api/v1/flags/${ids.flag}`, { trafficPercentage: 33 })).status, 200);
  await receiver.waitFor(1);
  const shown = (await api('GET', `/api/v1/flags/${ids.flag}`, undefined, secrets.read)).json;
  t.match(shown, { evaluations: 3, lastEvaluatedAt: Number, trafficPercentage: 33 });
  t.same(JSON.parse(receiver.received[0]!.body).data.flag, shown);
  await api('POST', `/api/v1/webhooks/${hook}/delete`);
});

t.test("eight hanging webhooks of one project hold its share of the send places; another project's deliveries go by them", async (t) => {
  const hanging = await Promise.all(Array.from({ length: 8 }, () => startReceiver()));
  const healthy = await startReceiver();
  t.teardown(() => Promise.all([...hanging, healthy].map((r) => r.close())));
  const hooksA: string[] = [];
  for (const r of hanging) hooksA.push((await api('POST', '/api/v1/webhooks', { url: r.url, events: ['flag'] })).json.id);
  const hookB = (await api('POST', '/api/v1/webhooks', { url: healthy.url, events: ['flag'] }, secrets.writeB)).json.id as string;

  // Ten changes of project A, each tried once and failed (500), so that all 80 are due together when
  // the clock moves past their backoff: every webhook then has a batch of ten to send at once.
  for (const r of hanging) r.answer = 500;
  for (let i = 0; i < 10; i++) t.equal((await api('PATCH', `/api/v1/flags/${ids.flag}`, { trafficPercentage: 60 + i })).status, 200);
  for (const id of hooksA)
    await pollUntil(
      'every change tried once',
      () => log(id),
      (l) => l.length === 10 && l.every((d) => d.attempts >= 1 && d.status === 'pending'),
    );
  for (const r of hanging) r.answer = 'hang';
  const triedBefore = hanging.map((r) => r.received.length);
  await advanceClock(server, 3600);
  const sentA = () => hanging.reduce((n, r, i) => n + r.received.length - triedBefore[i]!, 0);
  await pollUntil(
    'project A holds its places',
    async () => sentA(),
    (n) => n >= kSendsPerProject,
  );

  for (let i = 0; i < 5; i++)
    t.equal((await api('PATCH', `/api/v1/flags/${ids.flagB}`, { enabled: i % 2 === 1 }, secrets.writeB)).status, 200);
  await healthy.waitFor(5);
  t.equal(
    hanging.reduce((n, r) => n + r.cutOff, 0),
    0,
    "all of B's deliveries arrived while A's sends still hung: none waited for one of A's timeouts",
  );
  t.ok(sentA() <= kSendsPerProject, `project A had ${sentA()} sends at once, at most ${kSendsPerProject}`);
  const perWebhook = hanging.map((r, i) => r.received.length - triedBefore[i]!);
  t.ok(Math.max(...perWebhook) <= kSendsPerWebhook, `at most ${kSendsPerWebhook} at once to one webhook: ${perWebhook}`);
  await pollUntil(
    "B's deliveries all delivered once",
    () => log(hookB, secrets.writeB),
    (l) => l.length === 5 && l.every((d) => d.status === 'delivered' && d.attempts === 1),
  );
  for (const id of hooksA) await api('POST', `/api/v1/webhooks/${id}/delete`);
  await api('POST', `/api/v1/webhooks/${hookB}/delete`, undefined, secrets.writeB);
});

/**
 * Twenty receivers answering `answer`, a flag of project A whose served variant is `variant`, and a
 * webhook of A on flag changes to each receiver: what the two tests of a large flag's outbox start from.
 */
async function largeFlagToTwentyHooks(t: Test, name: string, variant: string, answer: Receiver['answer']) {
  const receivers = await Promise.all(Array.from({ length: 20 }, () => startReceiver()));
  t.teardown(() => Promise.all(receivers.map((r) => r.close())));
  for (const r of receivers) r.answer = answer;
  const made = await api('POST', '/api/v1/flags', {
    name,
    enabled: true,
    variants: { big: variant, small: 'y' },
    defaultVariant: 'big',
  });
  t.equal(made.status, 201, made.text);
  const hooks: string[] = [];
  for (const r of receivers) hooks.push((await api('POST', '/api/v1/webhooks', { url: r.url, events: ['flag'] })).json.id);
  return { receivers, flagId: made.json.id as string, hooks };
}

t.test('a change of a large flag to twenty failing webhooks grows the data file by about one body, not twenty', async (t) => {
  const variant = 'x'.repeat(900_000);
  const { receivers, flagId, hooks } = await largeFlagToTwentyHooks(t, 'large', variant, 500);
  const received = () => receivers.reduce((n, r) => n + r.received.length, 0);
  const changeAndWait = async (i: number) => {
    t.equal((await api('PATCH', `/api/v1/flags/${flagId}`, { trafficPercentage: 10 + i })).status, 200);
    await pollUntil(
      'every webhook tried',
      async () => received(),
      (n) => n >= 20 * (i + 1),
    );
  };
  await changeAndWait(0);
  await writerIdle(server);
  const before = statSync(dataFilePath(server.dataDir)).size;
  for (let i = 1; i <= 10; i++) await changeAndWait(i);
  await writerIdle(server);
  const grown = statSync(dataFilePath(server.dataDir)).size - before;
  // A body per webhook was 20 x 900 KB a change (180 MB for these ten, and more as each attempt rewrote
  // its delivery); one per change is 9 MB beside the flag's own versions.
  t.ok(grown < 60 * 1024 * 1024, `the data file grew ${(grown / 1024 / 1024).toFixed(1)} MiB over ten changes`);
  world.store.resetReadTxn();
  const outbox = getOutboxUsage(world.store, ids.single);
  t.equal(outbox.pending, 20 * 11, 'every delivery pending, retried');
  t.ok(outbox.bytes > 11 * variant.length && outbox.bytes < 11 * (variant.length + 10_000), `one body a change: ${outbox.bytes} bytes`);
  for (const id of hooks) await api('POST', `/api/v1/webhooks/${id}/delete`);
  world.store.resetReadTxn();
  t.same(getOutboxUsage(world.store, ids.single), { pending: 0, bytes: 0 }, 'deleted with the webhooks');
});

t.test("past its outbox's 64 MiB a project's oldest changes are dropped; another project's deliveries go on", async (t) => {
  // Hanging: each webhook's first sends hold their places, the rest stay pending (and unsent: no retry
  // rounds of 71 MB to wait for).
  const variant = 'z'.repeat(950_000);
  const { flagId, hooks } = await largeFlagToTwentyHooks(t, 'larger', variant, 'hang');
  const healthy = await startReceiver();
  t.teardown(() => healthy.close());
  const hookB = (await api('POST', '/api/v1/webhooks', { url: healthy.url, events: ['flag'] }, secrets.writeB)).json.id as string;
  // 75 changes of 950 KB: 71 MB, past the bound.
  for (let i = 0; i < 75; i++) t.equal((await api('PATCH', `/api/v1/flags/${flagId}`, { trafficPercentage: 1 + i })).status, 200);
  await writerIdle(server);
  world.store.resetReadTxn();
  const outbox = getOutboxUsage(world.store, ids.single);
  t.ok(outbox.bytes <= kMaxOutboxBytes, `the outbox keeps ${outbox.bytes} bytes, at most ${kMaxOutboxBytes}`);
  t.ok(outbox.bytes > kMaxOutboxBytes - 2 * variant.length, 'and drops no more than it must');
  const logged = await log(hooks[0]!);
  t.equal(logged.length, 75, 'every change is in the log');
  const dropped = logged.filter((d) => d.lastError === kDroppedError);
  t.ok(dropped.length >= 4 && dropped.length <= 6, `the oldest changes dropped: ${dropped.length}`);
  t.match(dropped, Array(dropped.length).fill({ status: 'failed', nextAttemptAt: null }));
  t.same(
    logged.slice(-dropped.length).map((d) => d.id),
    dropped.map((d) => d.id),
    'the oldest ones, none newer',
  );
  t.equal(logged[0]!.status, 'pending', 'the newest change waits');
  const again = await api('POST', `/api/v1/deliveries/${dropped[0]!.id}/redeliver`);
  t.equal(again.status, 400);
  t.match(again.json, { error: 'Invalid request', detail: /body is no longer kept/ });

  t.equal((await api('PATCH', `/api/v1/flags/${ids.flagB}`, { trafficPercentage: 9 }, secrets.writeB)).status, 200);
  await healthy.waitFor(1);
  await pollUntil(
    "project B's change delivered",
    () => log(hookB, secrets.writeB),
    (l) => l[0]?.status === 'delivered',
  );
  for (const id of hooks) await api('POST', `/api/v1/webhooks/${id}/delete`);
  await api('POST', `/api/v1/webhooks/${hookB}/delete`, undefined, secrets.writeB);
  world.store.resetReadTxn();
  t.same(getOutboxUsage(world.store, ids.single), { pending: 0, bytes: 0 });
});
