// Black-box: OFREP change events (open-feature/protocol ADR-0008) driven by the real
// @openfeature/web-sdk + @openfeature/ofrep-web-provider under Node, with the `eventsource` package as
// the EventSource the provider expects from a browser. And the missing-header mistake, as the provider
// and its caller see it.
import { rmSync } from 'node:fs';
import t from 'tap';
import { EventSource } from 'eventsource';
import { OpenFeature, ClientProviderEvents, ErrorCode } from '@openfeature/web-sdk';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
import { buildEvalWorld } from '../evaluation/engine/eval-world.js';
import { call } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';
import { readyId, readStream as readStreamOf } from '../helpers/sse.js';

// The provider uses the global EventSource, as in a browser (Node 20 has none).
(globalThis as { EventSource?: unknown }).EventSource = EventSource;

const world = buildEvalWorld();
const { ids } = world;
const server = await startTestServer({ dataDir: world.dataDir, env: { FLAGWIRE_EVAL_WORKERS: '2' } });
t.teardown(async () => {
  await OpenFeature.close();
  await server.stop();
  await world.store.close();
  rmSync(world.dataDir, { recursive: true, force: true });
});

t.test('web provider: a PATCH reaches ConfigurationChanged over the advertised stream, no polling', async (t) => {
  const bulkUrls: string[] = [];
  const provider = new OFREPWebProvider({
    baseUrl: server.baseUrl,
    headers: [['X-Flagwire-Project', ids.single]],
    cacheMode: 'disabled',
    // Ten minutes: were the stream not followed, no poll could bring the change within the test.
    pollInterval: 600_000,
    fetchImplementation: async (req: Request) => {
      bulkUrls.push(req.url);
      return fetch(req);
    },
  });
  await OpenFeature.setContext('sse', { targetingKey: 'user-1' });
  await OpenFeature.setProviderAndWait('sse', provider);
  const web = OpenFeature.getClient('sse');
  t.equal(web.getBooleanValue('on', false), true, 'by name');
  // Wait until the provider's EventSource is connected (the server counts open streams).
  const deadline = Date.now() + 60_000;
  while (!/flagwire_stream_connections 1\b/.test((await call(server.baseUrl, 'GET', '/metrics')).text)) {
    if (Date.now() > deadline) throw new Error('the provider never opened the advertised stream');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.equal(bulkUrls.length, 1, 'no polling: one bulk request until something changes');

  const changed = new Promise<{ at: number; flagsChanged?: string[] }>((resolve) =>
    web.addHandler(ClientProviderEvents.ConfigurationChanged, (details) =>
      resolve({ at: performance.now(), flagsChanged: details?.flagsChanged }),
    ),
  );
  const started = performance.now();
  const patch = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.on}`, { token: world.writeToken, body: { enabled: false } });
  t.equal(patch.status, 200);
  const event = await changed;
  const ms = event.at - started;
  // Brought by the stream, not a poll (proved by count, never by how soon on a busy machine): one more
  // bulk request, carrying the stream event's etag as flagConfigEtag (below), which no poll has.
  t.comment(`ConfigurationChanged ${ms.toFixed(0)} ms after the PATCH was sent`);
  t.equal(bulkUrls.length, 2, 'one refetch, the one the stream event asked for');
  t.same(event.flagsChanged?.sort(), [ids.on, 'on'].sort(), 'the changed flag, under both keys');
  t.same([web.getBooleanDetails('on', true).reason, web.getBooleanValue(ids.on, true)], ['DISABLED', false]);
  const refetch = new URL(bulkUrls.at(-1)!);
  t.match(refetch.searchParams.get('flagConfigEtag'), /^[0-9a-f]{8}$/, "the event's etag came back as flagConfigEtag");
  const etag = (
    await call(server.baseUrl, 'POST', '/ofrep/v1/evaluate/flags', {
      body: { context: { targetingKey: 'user-1' } },
      headers: { 'x-flagwire-project': ids.single },
    })
  ).headers.get('etag')!;
  t.ok(etag.startsWith(`"${refetch.searchParams.get('flagConfigEtag')}-`), "it is the bulk ETag's configuration part");
  await OpenFeature.clearProviders();
});

t.test('without X-Flagwire-Project: the provider fails with "status: 400" and the answer it got says what to do', async (t) => {
  const answers: string[] = [];
  const provider = new OFREPWebProvider({
    baseUrl: server.baseUrl,
    cacheMode: 'disabled',
    fetchImplementation: async (req: Request) => {
      const res = await fetch(req);
      answers.push(await res.clone().text());
      return res;
    },
  });
  const failed = await OpenFeature.setProviderAndWait('no-header', provider).then(
    () => null,
    (err: Error) => err,
  );
  t.match(failed?.message, /status: 400/, 'all the provider itself reports');
  t.equal(answers.length, 1);
  const body = JSON.parse(answers[0]!);
  t.equal(body.errorCode, 'GENERAL');
  t.match(body.errorDetails, /X-Flagwire-Project header is missing/);
  t.match(body.errorDetails, /headers: \[\['X-Flagwire-Project', '<project id>'\]\]/);
  t.match(body.errorDetails, /every flag reads FLAG_NOT_FOUND/);
  t.same(OpenFeature.getClient('no-header').getBooleanDetails('on', false).errorCode, ErrorCode.FLAG_NOT_FOUND, 'as the details warn');
  await OpenFeature.clearProviders();
});

/** Reads a stream's raw text for `ms` (a Last-Event-ID header as a reconnecting EventSource sends it). */
const readStream = (path: string, ms: number, lastEventId?: string) => readStreamOf(server.baseUrl, path, ms, lastEventId);

t.test('Last-Event-ID: a reconnect within retention gets what it missed; beyond it, reset (OFREP: refetch without etag)', async (t) => {
  const path = `/v1/stream/project/${ids.single}`;
  const first = await readStream(path, 300);
  t.match(
    first,
    /^retry: 2000\n: connected\n\nid: \d+\nevent: ready\ndata: \{"seq":\d+\}\n\n$/,
    'hello, then ready with the commit number as id',
  );
  const seen = readyId(first);
  // Changes while no stream is open.
  const a = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.half}`, { token: world.writeToken, body: { trafficPercentage: 40 } });
  const b = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.zero}`, {
    token: world.writeToken,
    body: { cohorts: ['vip', 'new'] },
  });
  t.same([a.status, b.status], [200, 200]);
  const again = await readStream(path, 400, String(seen));
  const flagEvents = [...again.matchAll(/event: flag\ndata: (.*)\n/g)].map((m) => JSON.parse(m[1]!));
  t.same(
    flagEvents,
    [
      { id: ids.half, updatedAt: a.json.flag.updatedAt },
      { id: ids.zero, updatedAt: b.json.flag.updatedAt },
    ],
    'both missed changes',
  );
  t.ok(readyId(again) > seen, 'then ready at the newer commit');
  // Ids are store revisions, the number every answer names (Flagwire-Revision): what a reconnect missed
  // is labelled with the revision it was seen at, here the last write's (compared once, on the reconnect).
  const written = Number(b.headers.get('flagwire-revision'));
  t.equal(readyId(again), written, "ready's id is the revision the last PATCH answered with");
  t.same(
    [...again.matchAll(/id: (\d+)\nevent: flag\n/g)].map((m) => Number(m[1])),
    [written, written],
    'so are the replayed events',
  );
  const upToDate = await readStream(path, 300, String(readyId(again)));
  t.notMatch(upToDate, /event: (flag|reset)/, 'nothing missed, nothing sent');

  const ofrepPath = `/ofrep/v1/stream/project/${ids.single}`;
  const ofrepFirst = await readStream(ofrepPath, 300);
  await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.half}`, { token: world.writeToken, body: { trafficPercentage: 45 } });
  const ofrepAgain = await readStream(ofrepPath, 400, String(readyId(ofrepFirst)));
  t.match(ofrepAgain, /event: message\ndata: \{"type":"refetchEvaluation","etag":"[0-9a-f]{8}"\}\n\n/, 'one refetch for what it missed');

  // Beyond retention: an id older than what the server keeps for the project (commit 1: before its first
  // stream opened), or not one of its commits.
  for (const old of ['1', 'garbage', String(readyId(again) + 1000)]) {
    const reset = await readStream(path, 300, old);
    t.match(reset, /event: reset\ndata: \{"reason":"Last-Event-ID is older than this server keeps/, `reset for ${old}`);
    t.notMatch(reset, /event: flag\n/);
  }
  const ofrepReset = await readStream(ofrepPath, 300, '1');
  t.match(ofrepReset, /event: message\ndata: \{"type":"refetchEvaluation"\}\n\n/, 'OFREP: an unconditional refetch');
});
