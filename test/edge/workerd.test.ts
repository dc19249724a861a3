// Black-box: the packed edge package (scripts/pack-edge.mjs) as `@flagwire/edge/worker` in Cloudflare's
// workerd, which refuses code generation (new Function, eval) unless a flag allows it, fed over HTTP by
// a real server with a read token. Every OFREP request of ofrep-cases.ts gets from the worker what it
// gets from the server, byte for byte with the same ETag; a conditional bulk request gets its 304; the
// OFREP provider from npm evaluates through the worker; and an edit reaches the worker's answers.
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { type EvaluationContext, OpenFeature } from '@openfeature/server-sdk';
import t from 'tap';
import { call } from '../helpers/http.js';
import { packEdge, startWorkerd } from './edge-hosts.js';
import { startEdgeWorld } from './edge-world.js';
import { ask, compareAll, ofrepCases } from './ofrep-cases.js';

t.setTimeout(600_000);
const { world, server, token, typed, stop } = await startEdgeWorld();
const { ids } = world;
const pkg = packEdge();
const worker = await startWorkerd(pkg, {
  FLAGWIRE_URL: server.baseUrl,
  FLAGWIRE_TOKEN: token,
  FLAGWIRE_PROJECT: ids.single,
  FLAGWIRE_POLL_MS: '200',
});
t.teardown(async () => {
  await OpenFeature.close();
  await worker.stop();
  await stop();
});

t.test('every OFREP case: the same status, bytes and ETag from workerd as from the server', async (t) => {
  await compareAll(t, server.baseUrl, worker.baseUrl, ofrepCases(world, typed));
});

t.test('a bulk answer held is answered 304 by the worker as by the server', async (t) => {
  const request = {
    label: 'bulk',
    key: null,
    body: JSON.stringify({ context: { targetingKey: 'u1' } }),
    headers: { 'X-Flagwire-Project': ids.single },
  };
  const first = await ask(worker.baseUrl, request);
  t.equal(first.status, 200);
  t.match(first.etag, /^"[0-9a-f]{8}-[0-9a-f]{16}"$/);
  for (const base of [server.baseUrl, worker.baseUrl]) {
    const again = await ask(base, request, { 'If-None-Match': first.etag! });
    t.same([again.status, again.body, again.etag], [304, '', first.etag], base);
  }
});

t.test("OpenFeature's OFREP provider from npm evaluates through the worker", async (t) => {
  await OpenFeature.setProviderAndWait(
    'edge',
    new OFREPProvider({ baseUrl: worker.baseUrl, headers: [['X-Flagwire-Project', ids.single]] }),
  );
  const client = OpenFeature.getClient('edge');
  const on = await client.getBooleanDetails(ids.on, false, { targetingKey: 'u1' });
  t.same([on.value, on.variant, on.reason, on.flagMetadata], [true, 'on', 'STATIC', { id: ids.on, name: 'on' }]);
  await OpenFeature.setProviderAndWait(
    'server',
    new OFREPProvider({ baseUrl: server.baseUrl, headers: [['X-Flagwire-Project', ids.single]] }),
  );
  const direct = OpenFeature.getClient('server');
  const contexts: EvaluationContext[] = [{ targetingKey: 'u1', plan: 'beta' }, { targetingKey: 'u2' }, { targetingKey: 'u3' }];
  for (const context of contexts) {
    const [viaEdge, viaServer] = [
      await client.getStringDetails('colour', 'none', context),
      await direct.getStringDetails('colour', 'none', context),
    ];
    t.same(viaEdge, viaServer, `colour for ${JSON.stringify(context)}`);
    t.not(viaEdge.value, 'none', 'a variant answered');
  }
  const missing = await client.getBooleanDetails('nothing', true, { targetingKey: 'u1' });
  t.same([missing.value, missing.errorCode], [true, 'FLAG_NOT_FOUND']);
});

t.test("an edit on the server reaches the worker's answers", async (t) => {
  const request = { label: 'off', key: ids.off, body: JSON.stringify({ context: { targetingKey: 'u1' } }), headers: {} };
  t.equal(JSON.parse((await ask(worker.baseUrl, request)).body).value, false);
  const patched = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.off}`, { token: world.writeToken, body: { enabled: true } });
  t.equal(patched.status, 200, patched.text);
  const started = Date.now();
  // A minute at most: only a change that never arrives fails here (bench/edge.bench.ts measures how soon).
  let value = false;
  while (!value && Date.now() - started < 60_000) {
    value = JSON.parse((await ask(worker.baseUrl, request)).body).value;
    if (!value) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.ok(value, `the worker answers the edited flag (after ${Date.now() - started} ms)`);
  t.same(await ask(worker.baseUrl, request), await ask(server.baseUrl, request), 'and answers it as the server does');
});

t.test("the change stream the bulk answers name is the node's, through the worker", async (t) => {
  const stop = new AbortController();
  const res = await fetch(`${worker.baseUrl}/ofrep/v1/stream/project/${ids.single}`, { signal: stop.signal });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/event-stream/);
  stop.abort();
});
