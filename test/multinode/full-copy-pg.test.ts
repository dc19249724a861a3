// A node that must re-copy its store from PostgreSQL (issue 41, item 1): node B, stopped, misses a
// webhook's deletion on node A, and the change log no longer holds the revisions B lacks (as once they
// are past its retention), so B makes a full copy when it starts again. The webhook, its secret and its
// pending delivery are gone from B: its API lists none, and no record of its data dir holds the secret.
import t from 'tap';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { sharedPostgres } from '../helpers/postgres.js';
import type { TestServer } from '../helpers/server.js';
import { exportStore } from '../helpers/store-export.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { kUnlimited } from '../reliability/support.js';
import { seedInProcess, startNode, startReadyNodes, waitReady } from './support.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());
// The receiver listens on loopback: the allow-list lets exactly that through.
const kNodeEnv = { ...kUnlimited, FLAGWIRE_WEBHOOK_ALLOW: '127.0.0.1' };

t.test('a webhook deleted while a node must re-copy is gone from that node, its secret and deliveries too', async (t) => {
  const url = await pg.newDatabase();
  const database = new URL(url).pathname.slice(1);
  const seeded = await seedInProcess(t, url);
  const [a, b] = (await startReadyNodes(t, url, 2, kNodeEnv)) as [TestServer, TestServer];
  const api = (node: TestServer, method: string, path: string, body?: unknown) =>
    call(node.baseUrl, method, path, { token: seeded.secret, body });
  // The receiver refuses every delivery: each stays pending, to be tried again.
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  receiver.answer = 503;

  const made = await api(a, 'POST', '/api/v1/webhooks', { url: receiver.url, events: ['flag'] });
  t.equal(made.status, 201, made.text);
  const { id: webhookId, secret } = made.json as { id: string; secret: string };
  t.equal((await api(a, 'PATCH', `/api/v1/flags/${seeded.flagId}`, { enabled: true })).status, 200);
  await pollUntil(
    "B's copy holds the webhook's delivery",
    async () => (await api(b, 'GET', `/api/v1/webhooks/${webhookId}/deliveries`)).json?.deliveries as unknown[] | undefined,
    (deliveries) => deliveries?.length === 1,
  );
  t.ok(JSON.stringify(await exportStore(b.dataDir)).includes(secret), "before: B's data dir holds the webhook's secret");

  t.equal(await b.stop(), 0, 'B stopped');
  const deleted = await api(a, 'POST', `/api/v1/webhooks/${webhookId}/delete`);
  t.equal(deleted.status, 200, deleted.text);
  // The change log loses every revision so far, the deletion's included: B cannot follow it, only copy.
  await pg.admin(database, 'DELETE FROM flagwire_changes WHERE revision <= (SELECT revision FROM flagwire_meta)');

  const again = await startNode(url, b.dataDir, kNodeEnv);
  t.teardown(() => again.stop());
  await waitReady(again);
  const listed = await api(again, 'GET', '/api/v1/webhooks');
  t.equal(listed.status, 200, listed.text);
  t.strictSame(listed.json.webhooks, [], 'B lists no webhook');
  t.equal((await api(again, 'GET', `/api/v1/webhooks/${webhookId}/deliveries`)).status, 404, 'nor its deliveries');

  t.equal(await again.stop(), 0, 'B stopped again');
  const copy = await exportStore(b.dataDir);
  for (const database of ['webhooks', 'deliveries', 'payloads']) t.strictSame(copy[database], [], `B's ${database} database is empty`);
  t.notOk(JSON.stringify(copy.keyedIndexes).includes(webhookId), "nor does a lookup name the webhook (B's delivery was the webhook's)");
  t.strictSame(
    (copy.keyedTallies ?? []).filter(([key]) => ['delivery', 'deliveryPayload'].includes((key as string[])[0]!)),
    [],
    'and no tally counts a pending delivery or a payload',
  );
  t.notOk(JSON.stringify(copy).includes(secret), "no record of B's data dir holds the secret");
});
