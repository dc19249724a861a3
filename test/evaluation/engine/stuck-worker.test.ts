// Black-box: an eval worker that never finishes its batch (test hook FLAGWIRE_TEST_EVAL_HANG_ID). Its
// requests get a 503 with Retry-After after the batch timeout (5 s), never a 500 (the batch's other
// requests, another project's among them, are not at fault: src/evaluation/engine/batcher.ts), and the worker
// is replaced: with a single worker, a stuck one left in place would time out every later request too.
import { rmSync } from 'node:fs';
import t from 'tap';
import { kBatchTimedOutDetail } from '../../../src/evaluation/engine/bodies.js';
import { startTestServer } from '../../helpers/server.js';
import { buildEvalWorld } from './eval-world.js';

const world = buildEvalWorld();
const { ids } = world;
const kHangId = 'flg_hang_test';
const server = await startTestServer({
  dataDir: world.dataDir,
  env: { FLAGWIRE_EVAL_WORKERS: '1', FLAGWIRE_TEST_HOOKS: '1', FLAGWIRE_TEST_EVAL_HANG_ID: kHangId },
});
t.teardown(async () => {
  await server.stop();
  await world.store.close();
  rmSync(world.dataDir, { recursive: true, force: true });
});

async function flag(id: string): Promise<{ status: number; json: unknown; ms: number; retryAfter: string | null }> {
  const started = performance.now();
  const res = await fetch(`${server.baseUrl}/v1/flags/${id}`);
  return { status: res.status, json: await res.json(), ms: performance.now() - started, retryAfter: res.headers.get('retry-after') };
}

t.test('a stuck worker: its batch is answered 503 with Retry-After after the timeout, and the worker is replaced', async (t) => {
  t.equal((await flag(ids.on)).status, 200, 'the pool works before');
  const stuck = await flag(kHangId);
  t.equal(stuck.status, 503);
  t.equal(stuck.retryAfter, '1');
  t.same(stuck.json, { error: 'Service unavailable', detail: kBatchTimedOutDetail });
  // At the batch timeout, not before it; a minute only catches a hang.
  t.ok(stuck.ms >= 4000 && stuck.ms < 60_000, `answered at the batch timeout (${stuck.ms.toFixed(0)} ms)`);
  // The only worker was stuck: these are answered only because Piscina replaced it.
  const after = await Promise.all(Array.from({ length: 20 }, () => flag(ids.on)));
  t.same(
    after.map((r) => r.status),
    Array(20).fill(200),
    'later requests are answered by the new worker',
  );
  // A 200 cannot have waited out the stuck worker (its batch would be a 503): no time bound needed.
  t.comment(`slowest of them ${Math.max(...after.map((r) => r.ms)).toFixed(0)} ms`);
  const again = await flag(kHangId);
  t.equal(again.status, 503, 'a second stuck batch is recovered from too');
  t.equal((await flag(ids.on)).status, 200);
  t.equal(server.proc.exitCode, null, 'the server kept running');
});
