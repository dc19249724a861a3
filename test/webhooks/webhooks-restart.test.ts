// Webhook deliveries across a crash (issue 28, item 2): changes made while the receiver is down are
// queued and retried (connection refused, each attempt logged); the server is killed (kill -9) with them
// pending, started again on the same data dir with the receiver up, and every one of them arrives, once
// each, nothing lost. Backoffs are skipped with the test clock (FLAGWIRE_TEST_HOOKS), not waited for:
// its offset lives in the server process, so the started server's clock is moved on again.
import { Webhook as Verifier } from 'standardwebhooks';
import t from 'tap';
import { ok } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { freePort } from '../helpers/free-port.js';
import { tempDataDir } from '../helpers/server.js';
import { advanceClock } from '../helpers/test-hooks.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { restartableServer } from '../helpers/restartable.js';
import { buildWorld } from '../helpers/world.js';

const dataDir = tempDataDir();
const world = buildWorld(dataDir);
const { ids, secrets } = world;
t.teardown(() => world.store.close());
const kEnv = { FLAGWIRE_TEST_HOOKS: '1', FLAGWIRE_WEBHOOK_ALLOW: '127.0.0.1', FLAGWIRE_WEBHOOK_TIMEOUT_MS: '1000' };

const start = restartableServer(t, dataDir, kEnv);

t.test('deliveries pending when the server is killed are all delivered, once each, by the next one', async (t) => {
  // Nothing listens on the receiver's port yet: every attempt is refused.
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/hook`;
  let server = await start();
  const api = (method: string, path: string, body?: unknown, token = secrets.write) => call(server.baseUrl, method, path, { token, body });
  const made = await api('POST', '/api/v1/webhooks', { url, events: ['flag'] });
  t.equal(made.status, 201, made.text);
  const { id: webhookId, secret } = made.json as { id: string; secret: string };
  const log = async () =>
    (await api('GET', `/api/v1/webhooks/${webhookId}/deliveries`, undefined, secrets.read)).json.deliveries as Record<string, any>[];

  const kChanges = 5;
  for (let i = 0; i < kChanges; i++)
    t.equal((await api('PATCH', `/api/v1/flags/${ids.flag}`, { trafficPercentage: 11 + i })).status, 200, `change ${i}`);
  await pollUntil(
    'each tried once, refused',
    log,
    (l) => l.length === kChanges && l.every((d) => d.attempts >= 1 && d.lastError === 'ECONNREFUSED'),
  );
  // The retries fall due 2.5-5 s after: moved on to, and refused again.
  await advanceClock(server, 6);
  const refused = await pollUntil('each tried twice, refused', log, (l) =>
    l.every((d) => d.attempts >= 2 && d.lastError === 'ECONNREFUSED' && d.lastStatus === null),
  );
  t.ok(
    refused.every((d) => d.status === 'pending' && d.nextAttemptAt !== null),
    'all pending, each with a next try',
  );

  const exited = new Promise((resolve) => server.proc.once('exit', (_code, signal) => resolve(signal)));
  server.proc.kill('SIGKILL');
  t.equal(await exited, 'SIGKILL', 'killed by kill -9');
  // What the crash left on disk, read by the console: every delivery still pending.
  const pending = (await ok(t, dataDir, ['webhook', 'deliveries', webhookId])).deliveries as Record<string, any>[];
  t.same(
    pending.map((d) => d.status),
    Array(kChanges).fill('pending'),
    'on disk after the crash: all pending',
  );

  const receiver = await startReceiver(port);
  t.teardown(() => receiver.close());
  server = await start();
  // Past every next try (at most 10 s after the last attempt, on a clock that was 6 s ahead).
  await advanceClock(server, 60);
  await receiver.waitFor(kChanges);
  const delivered = await pollUntil('all delivered', log, (l) => l.length === kChanges && l.every((d) => d.status === 'delivered'));
  await new Promise((r) => setTimeout(r, 500));
  t.equal(receiver.received.length, kChanges, `${kChanges} requests in all`);
  const received = receiver.received.map((r) => r.headers['webhook-id'] as string);
  t.same(new Set(received), new Set(pending.map((d) => d.id)), 'every pending delivery arrived, once each');
  for (const d of delivered) {
    const before = pending.find((p) => p.id === d.id)!;
    t.match(
      d,
      { attempts: before.attempts + 1, lastStatus: 200, lastError: null },
      `${d.id}: delivered at the attempt after those recorded before the crash`,
    );
  }
  const told = receiver.received.map(
    (r) => (new Verifier(secret).verify(r.body, r.headers as Record<string, string>) as Record<string, any>).data.flag.trafficPercentage,
  );
  t.same(
    told.sort((a, b) => a - b),
    [11, 12, 13, 14, 15],
    'each change told, signed',
  );
});
