// GET /ready: the Readiness checks with fakes (each failure alone gives 503; a busy writer does not), then the real server:
// 200 when up, and 503 from the moment SIGTERM starts shutdown while it still drains accepted work.
import { rmSync } from 'node:fs';
import net from 'node:net';
import t from 'tap';
import { RawClient, rawRequest } from '../helpers/raw-http.js';
import { Readiness, type ReadinessDeps } from '../../src/server/ready.js';
import { startTestServer } from '../helpers/server.js';
import { buildEvalWorld } from '../evaluation/engine/eval-world.js';

function readiness(over: Partial<ReadinessDeps> = {}) {
  return new Readiness({
    readStore: () => 1,
    writer: { busy: false },
    probe: async () => ({ answered: 2, workers: 2 }),
    metrics: null,
    timeoutMs: 50,
    ...over,
  });
}

t.test('ready only when the store reads and every worker answered; a busy writer is reported, still ready', async (t) => {
  t.same(await readiness().check(), { ready: true, store: true, writer: 'ok', workers: { answered: 2, total: 2 } });
  t.same(
    (
      await readiness({
        readStore: () => {
          throw new Error('closed');
        },
      }).check()
    ).ready,
    false,
  );
  t.same(await readiness({ writer: { busy: true } }).check(), {
    ready: true,
    store: true,
    writer: 'busy',
    workers: { answered: 2, total: 2 },
  });
  t.same((await readiness({ probe: async () => ({ answered: 1, workers: 2 }) }).check()).ready, false);
  t.same((await readiness({ probe: async () => ({ answered: 0, workers: 0 }) }).check()).ready, false, 'no workers');
});

t.test('concurrent checks share one probe, a result is reused briefly; stop() turns it to 503', async (t) => {
  let probes = 0;
  const r = readiness({
    probe: async () => {
      probes++;
      return { answered: 1, workers: 1 };
    },
  });
  await Promise.all([r.check(), r.check(), r.check()]);
  await r.check();
  t.equal(probes, 1);
  r.stop();
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal((await r.check()).ready, false);
});

t.test('the real server: 200 with every worker; back to 200 after a worker dies and is replaced', async (t) => {
  const world = buildEvalWorld();
  const server = await startTestServer({
    dataDir: world.dataDir,
    env: { FLAGWIRE_EVAL_WORKERS: '2', FLAGWIRE_TEST_HOOKS: '1', FLAGWIRE_TEST_EVAL_CRASH_ID: 'flg_crash' },
  });
  t.teardown(async () => {
    await server.stop();
    await world.store.close();
    rmSync(world.dataDir, { recursive: true, force: true });
  });
  const ready = async () => {
    const r = await fetch(`${server.baseUrl}/ready`);
    return { status: r.status, json: await r.json(), cache: r.headers.get('cache-control') };
  };
  // A probe round has a second's budget; on a loaded machine (the test suite runs two files at once) a
  // round can miss it, and a load balancer simply asks again: so does this test.
  const readyWithin = async (ms: number) => {
    let r = await ready();
    for (const deadline = Date.now() + ms; r.status !== 200 && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      r = await ready();
    }
    return r;
  };
  const first = await readyWithin(10_000);
  t.same(first, {
    status: 200,
    cache: 'no-store',
    json: { status: 'ready', ready: true, store: true, writer: 'ok', workers: { answered: 2, total: 2 } },
  });
  t.equal((await fetch(`${server.baseUrl}/v1/flags/flg_crash`)).status, 500, 'a worker died');
  const again = await readyWithin(10_000);
  t.same([again.status, again.json.workers], [200, { answered: 2, total: 2 }]);
});

t.test('the real server: /ready answers 503 after SIGTERM while shutdown drains an accepted request', async (t) => {
  const world = buildEvalWorld();
  const server = await startTestServer({ dataDir: world.dataDir });
  const client = new RawClient(server.port);
  let upload: net.Socket | null = null;
  t.teardown(async () => {
    client.close();
    upload?.destroy();
    await server.stop();
    await world.store.close();
    rmSync(world.dataDir, { recursive: true, force: true });
  });
  const ready = () => client.request(rawRequest('GET', '/ready', [['Host', 'x']]), { timeoutMs: 60_000 });

  // Ready first (a probe round can miss its budget on a loaded machine: ask again, as a balancer does).
  let before = await ready();
  for (const deadline = Date.now() + 60_000; before.status !== 200 && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    before = await ready();
  }
  t.equal(before.status, 200, 'ready before the signal');

  // An accepted request that is not finished: a PATCH whose body is half sent. Shutdown drains
  // accepted requests (up to 3.5 s), so the server keeps its open connections for that long, and
  // /ready, asked on the keep-alive connection opened above, is answered meanwhile.
  const body = JSON.stringify({ trafficPercentage: 70 });
  upload = net.connect(server.port, '127.0.0.1');
  const answer = new Promise<string>((resolve) => {
    let text = '';
    upload.on('data', (d: Buffer) => (text += d.toString('latin1')));
    upload.on('close', () => resolve(text));
    upload.on('error', () => {});
  });
  await new Promise((resolve) => upload!.once('connect', resolve));
  upload.write(
    `PATCH /api/v1/flags/${world.ids.half} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${world.writeToken}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
  );
  // The headers reached the handler (it counts the request as in flight before reading the body).
  await new Promise((resolve) => setTimeout(resolve, 300));

  const exited = new Promise<number | null>((resolve) => server.proc.once('exit', (code) => resolve(code)));
  const signalledAt = performance.now();
  server.proc.kill('SIGTERM');
  const seen: number[] = [];
  let notReady: Awaited<ReturnType<typeof ready>> | null = null;
  // Until a 503, or until the server has exited without one (a failure, whenever it comes); a minute
  // only catches a hang.
  let exitedYet = false;
  void exited.then(() => (exitedYet = true));
  while (notReady === null && !exitedYet && performance.now() - signalledAt < 60_000) {
    const r = await ready();
    seen.push(r.status);
    if (r.status === 503) notReady = r;
    else await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const at = performance.now() - signalledAt;
  t.comment(
    `/ready after SIGTERM: ${seen.join(', ')} (${notReady === null ? 'no 503' : `first 503 ${at.toFixed(0)} ms after the signal`})`,
  );
  t.ok(notReady !== null, '/ready answered 503 after SIGTERM, before the server exited');
  t.equal(notReady?.headers.get('retry-after'), '1');
  const json = JSON.parse(notReady?.body.toString() ?? '{}');
  t.same([json.status, json.ready], ['not ready', false], 'the body says not ready');
  t.ok(
    seen.slice(0, -1).every((s) => s === 200),
    'until then it was 200 (no other failure)',
  );

  // The accepted PATCH still completes, then the server stops.
  upload.write(body.slice(5));
  t.match(await answer, /^HTTP\/1\.1 200 /, 'the PATCH accepted before the signal got its 200');
  t.equal(await exited, 0, 'and the server exits 0');
});
