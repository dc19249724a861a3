// Black-box: the change stream read by a real EventSource client (the `eventsource` package) while
// flags change through the Management API (the server's writer) and through the store directly (as
// the console does, in another process than the server).
import { rmSync } from 'node:fs';
import t from 'tap';
import { EventSource } from 'eventsource';
import { kOperator } from '../../src/actor/audit-actor.js';
import { buildEvalWorld } from '../evaluation/engine/eval-world.js';
import { call } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';

const world = buildEvalWorld();
const { ids } = world;
const server = await startTestServer({ dataDir: world.dataDir, env: { FLAGWIRE_TEST_STREAM_HEARTBEAT_MS: '150' } });
t.teardown(async () => {
  await server.stop();
  await world.store.close();
  rmSync(world.dataDir, { recursive: true, force: true });
});

interface Received {
  type: string;
  data: any;
  id: string;
}

/** Opens a stream; resolves once connected (the server has taken its baseline by then). */
async function watch(path: string) {
  const events: Received[] = [];
  const waiters: (() => void)[] = [];
  const es = new EventSource(`${server.baseUrl}${path}`);
  for (const type of ['flag', 'flag-deleted', 'audience']) {
    es.addEventListener(type, (e) => {
      events.push({ type, data: JSON.parse(e.data), id: e.lastEventId });
      for (const w of waiters.splice(0)) w();
    });
  }
  await new Promise<void>((resolve, reject) => {
    es.onopen = () => resolve();
    es.onerror = (e) => reject(new Error(`stream failed: ${e.message ?? ''}`));
  });
  /** The first event (from index `from`) matching (the bound only catches a hang). */
  const next = async (match: (e: Received) => boolean, from = 0): Promise<Received> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const found = events.slice(from).find(match);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no matching event; got ${JSON.stringify(events)}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  };
  return { events, next, close: () => es.close() };
}

const quiet = () => new Promise((resolve) => setTimeout(resolve, 600));

t.test('a PATCH through the API: one event with the flag id and its new updatedAt, nothing else', async (t) => {
  const stream = await watch(`/v1/stream/project/${ids.single}`);
  const other = await watch(`/v1/stream/project/${ids.single}`);
  t.teardown(() => {
    stream.close();
    other.close();
  });
  const patch = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.half}`, {
    token: world.writeToken,
    body: { trafficPercentage: 60 },
  });
  t.equal(patch.status, 200);
  const e = await stream.next((x) => x.type === 'flag');
  t.same(e.data, { id: ids.half, updatedAt: patch.json.flag.updatedAt }, 'id and updatedAt only: never cohorts');
  t.equal(e.id, patch.headers.get('flagwire-revision'), 'the event id is the revision the PATCH answered with');
  t.same((await other.next((x) => x.type === 'flag')).data.id, ids.half, 'every watcher gets it');
  await quiet();
  t.equal(stream.events.length, 1, 'exactly one event');
});

t.test('changes made outside the server (console): create, rename, audience edit, delete', async (t) => {
  const stream = await watch(`/v1/stream/project/${ids.single}`);
  t.teardown(() => stream.close());
  const created = world.run('flagCreate', { projectId: ids.single, body: { name: 'from-console' }, principal: kOperator });
  t.same((await stream.next((x) => x.data.id === created.id)).data, { id: created.id, updatedAt: created.updatedAt });
  const renamed = world.run('flagRename', { principal: kOperator, flagId: ids.zero, name: 'zero-renamed' });
  t.same((await stream.next((x) => x.data.id === ids.zero)).data, { id: ids.zero, updatedAt: renamed.updatedAt });
  world.run('audienceUpdate', { principal: kOperator, audienceId: ids.audience, name: 'Beta NL 2' });
  const audience = await stream.next((x) => x.type === 'audience');
  t.equal(audience.data.id, ids.audience);
  world.run('flagDelete', { principal: kOperator, flagId: created.id });
  t.same((await stream.next((x) => x.type === 'flag-deleted')).data, { id: created.id });
  // A change of another project is not this stream's business.
  world.run('flagRename', { principal: kOperator, flagId: ids.group, name: 'group-renamed' });
  await quiet();
  t.notOk(stream.events.some((x) => x.data.id === ids.group));
});

t.test("env: a watcher of one environment hears that environment's changes only", async (t) => {
  const production = await watch(`/v1/stream/project/${ids.multi}?env=production`);
  const all = await watch(`/v1/stream/project/${ids.multi}`);
  t.teardown(() => {
    production.close();
    all.close();
  });
  const staging = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.groupAud}?env=staging`, {
    token: world.multiWriteToken,
    body: { trafficPercentage: 40 },
  });
  t.equal(staging.status, 200);
  t.equal((await all.next((x) => x.type === 'flag')).data.id, ids.groupAud, 'the watcher without env hears it');
  const prod = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.groupAud}?env=production`, {
    token: world.multiWriteToken,
    body: { trafficPercentage: 40 },
  });
  const e = await production.next((x) => x.type === 'flag');
  t.same(e.data, { id: ids.groupAud, updatedAt: prod.json.flag.updatedAt }, 'the first event production hears is its own change');
  await quiet();
  t.equal(production.events.length, 1);
});

t.test('errors before the stream starts: unknown project, unknown env (404 JSON)', async (t) => {
  const none = await call(server.baseUrl, 'GET', '/v1/stream/project/prj_nope');
  t.same([none.status, none.json], [404, { error: 'Not found', detail: 'No project with id "prj_nope" exists.' }]);
  const env = await call(server.baseUrl, 'GET', `/v1/stream/project/${ids.multi}?env=prod`);
  t.equal(env.status, 404);
  t.match(env.json.detail, /valid environments: staging, production, dev/);
});

t.test('headers, the retry hint and heartbeats on the wire', async (t) => {
  const ac = new AbortController();
  const res = await fetch(`${server.baseUrl}/v1/stream/project/${ids.single}?env=ignored`, { signal: ac.signal });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'text/event-stream');
  t.equal(res.headers.get('cache-control'), 'no-cache');
  t.equal(res.headers.get('access-control-allow-origin'), '*');
  const reader = res.body!.getReader();
  let text = '';
  const deadline = Date.now() + 60_000;
  while ((text.match(/: heartbeat\n\n/g) ?? []).length < 2 && Date.now() < deadline)
    text += new TextDecoder().decode((await reader.read()).value);
  ac.abort();
  t.match(text, /^retry: 2000\n: connected\n\n/);
  t.ok((text.match(/: heartbeat\n\n/g) ?? []).length >= 2, 'heartbeats keep coming');
  const m = await fetch(`${server.baseUrl}/metrics`).then((r) => r.text());
  t.match(m, /flagwire_stream_connections \d+/);
});
