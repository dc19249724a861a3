// GET /ready: the Readiness checks with fakes (each failure alone gives 503), then the real server.
import { rmSync } from 'node:fs';
import t from 'tap';
import { Readiness, type ReadinessDeps } from '../../src/server/ready.js';
import { startTestServer } from '../helpers/server.js';
import { buildEvalWorld } from '../eval/eval-world.js';

function readiness(over: Partial<ReadinessDeps> = {}) {
  return new Readiness({
    readStore: () => 1,
    writer: { ping: async () => true },
    evaluation: { probe: async () => ({ answered: 2, workers: 2 }) },
    metrics: null,
    timeoutMs: 50,
    ...over,
  });
}

t.test('ready only when the store reads, the writer answers and every worker answered', async (t) => {
  t.same(await readiness().check(), { ready: true, store: true, writer: true, workers: { answered: 2, total: 2 } });
  t.same((await readiness({ readStore: () => { throw new Error('closed'); } }).check()).ready, false);
  t.same((await readiness({ writer: { ping: async () => false } }).check()).ready, false);
  t.same((await readiness({ writer: { ping: () => Promise.reject(new Error('gone')) } }).check()).writer, false);
  t.same((await readiness({ evaluation: { probe: async () => ({ answered: 1, workers: 2 }) } }).check()).ready, false);
  t.same((await readiness({ evaluation: { probe: async () => ({ answered: 0, workers: 0 }) } }).check()).ready, false, 'no workers');
});

t.test('concurrent checks share one probe, a result is reused briefly; stop() turns it to 503', async (t) => {
  let probes = 0;
  const r = readiness({ evaluation: { probe: async () => (probes++, { answered: 1, workers: 1 }) } });
  await Promise.all([r.check(), r.check(), r.check()]);
  await r.check();
  t.equal(probes, 1);
  r.stop();
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal((await r.check()).ready, false);
});

t.test('the real server: 200 with every worker; back to 200 after a worker dies and is replaced', async (t) => {
  const world = buildEvalWorld();
  const server = await startTestServer({ dataDir: world.dataDir, env: { FLAGWIRE_EVAL_WORKERS: '2', FLAGWIRE_TEST_HOOKS: '1', FLAGWIRE_TEST_EVAL_CRASH_ID: 'flg_crash' } });
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
    for (const deadline = Date.now() + ms; r.status !== 200 && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      r = await ready();
    }
    return r;
  };
  const first = await readyWithin(10_000);
  t.same(first, { status: 200, cache: 'no-store', json: { status: 'ready', ready: true, store: true, writer: true, workers: { answered: 2, total: 2 } } });
  t.equal((await fetch(`${server.baseUrl}/v1/flags/flg_crash`)).status, 500, 'a worker died');
  const again = await readyWithin(10_000);
  t.same([again.status, again.json.workers], [200, { answered: 2, total: 2 }]);
});
