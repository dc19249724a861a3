// The webhook outbox against a real server and real receivers: the flag in a delivery is what
// GET /api/v1/flags/{id} answers at that revision, usage included.
import t from 'tap';
import { call } from '../helpers/http.js';
import { flushActivity } from '../helpers/test-hooks.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t, {
  FLAGWIRE_TEST_HOOKS: '1',
  // The receivers listen on loopback: the allow-list lets exactly that through.
  FLAGWIRE_WEBHOOK_ALLOW: '127.0.0.1',
});
const { ids, secrets } = world;
const base = server.baseUrl;
const api = (method: string, path: string, body?: unknown, token = secrets.write) => call(base, method, path, { token, body });

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
