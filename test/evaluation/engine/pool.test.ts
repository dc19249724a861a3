// The real pool in-process: workers open the store read-only, batches come back answered, a write
// committed on another thread is read by the next batch (the snapshot renewed per batch), and a worker
// that dies is replaced while its batch is answered 500 and a batch it never took goes to its successor;
// probes and usage collections reach every worker.
import { rmSync } from 'node:fs';
import t from 'tap';
import { pino } from 'pino';
import { Clock } from '../../../src/clock.js';
import { EvalBatcher } from '../../../src/evaluation/engine/batcher.js';
import { EvalPool } from '../../../src/evaluation/engine/pool.js';
import { routeNumbers } from '../../../src/all-routes.js';
import { evaluationApiSpec, kEvaluationApiRoutes } from '../../../src/evaluation/engine/evaluation-api-routes.js';
import type { PendingResponse } from '../../../src/http/http.js';
import { InFlight } from '../../../src/http/in-flight.js';
import { kOperator } from '../../../src/actor/audit-actor.js';
import { buildEvalWorld } from './eval-world.js';

const world = buildEvalWorld();
const log = pino({ level: 'silent' });
const errors: unknown[] = [];

const kNumbers = routeNumbers(kEvaluationApiRoutes);
const kRouteFlag = kNumbers.evaluateFlag;
const kRouteSet = evaluationApiSpec(kNumbers);

/** A pool of `workers` over the world's store (flg_crash ends the worker evaluating it), two batches per worker, and a batcher before it. */
async function poolAndBatcher(workers: number, maxBatchRequests: number, onBatchError: (err: unknown) => void) {
  const pool = await EvalPool.start({
    dataDir: world.dataDir,
    workers,
    clock: Clock.create(),
    log,
    batchesPerWorker: 2,
    crashFlagId: 'flg_crash',
    routeSets: [kRouteSet],
  });
  const batcher = new EvalBatcher({
    runner: pool,
    inFlight: new InFlight(),
    maxTasksInFlight: workers * 2,
    maxBatchRequests,
    maxPendingRequests: 10_000,
    maxBatchBytes: 1 << 20,
    maxBatchAnswerBytes: 4 << 20,
    maxPendingBytes: 1 << 26,
    taskTimeoutMs: 60_000,
    onBatchError,
    routeSets: [kRouteSet],
  });
  return { pool, batcher };
}

const { pool, batcher } = await poolAndBatcher(2, 256, (err) => errors.push(err));
t.teardown(async () => {
  await batcher.close();
  await pool.destroy();
  await world.store.close();
  rmSync(world.dataDir, { recursive: true, force: true });
});

/** Evaluates one request through the pool (`via` batcher); resolves with status and parsed body. */
function evaluate(id: string, query = '', via = batcher): Promise<{ status: number; json: any }> {
  return new Promise((resolve) => {
    // As uWS: an answer whose status was not written is a 200.
    let status = 200;
    const res = {
      onAborted: () => res,
      cork: (fn: () => void) => {
        fn();
        return res;
      },
      writeStatus: (s: Uint8Array) => {
        status = Number(Buffer.from(s).toString().slice(0, 3));
        return res;
      },
      writeHeader: () => res,
      end: (body: Uint8Array) => {
        resolve({ status, json: JSON.parse(Buffer.from(body).toString()) });
        return res;
      },
    } as unknown as PendingResponse;
    via.add(res, kRouteFlag, id, query);
  });
}

t.test('workers evaluate batches read from the store', async (t) => {
  t.equal(pool.threads, 2);
  const answers = await Promise.all([evaluate(world.ids.on), evaluate(world.ids.group, 'env=staging&cohort=wide-1'), evaluate('flg_nope')]);
  t.same(
    answers.map((a) => a.status),
    [200, 200, 404],
  );
  t.same(answers[0]!.json, { id: world.ids.on, name: 'on', enabled: true });
  t.equal(answers[1]!.json.enabled, true);
});

t.test('read-your-writes across threads: 200 write-then-evaluate pairs, none stale', async (t) => {
  let stale = 0;
  for (let i = 0; i < 200; i++) {
    const enabled = i % 2 === 0;
    world.run('flagPatch', {
      flagId: world.ids.half,
      env: null,
      patch: { enabled, trafficPercentage: 100 },
      principal: kOperator,
    });
    const r = await evaluate(world.ids.half);
    if (r.json.enabled !== enabled) stale++;
  }
  t.equal(stale, 0);
});

t.test('a worker that dies: its batch is answered 500, the pool replaces it, later batches work', async (t) => {
  const answers = await Promise.all([evaluate('flg_crash'), evaluate(world.ids.on), evaluate(world.ids.on)]);
  t.same(
    answers.map((a) => a.status),
    [500, 500, 500],
    'every request of the dead batch, not only the culprit',
  );
  t.equal(answers[1]!.json.error, 'Internal server error');
  t.match(String(errors[0]), /worker exited/);
  for (let i = 0; i < 20; i++) {
    const after = await evaluate(world.ids.on);
    if (after.status !== 200) t.fail(`status ${after.status} after the crash`);
  }
  t.equal(pool.threads, 2, 'back to two workers');
  t.equal(batcher.size, 0);
});

t.test('a worker that dies with a second batch posted to it: that batch is answered by its successor, not 500', async (t) => {
  const failed: unknown[] = [];
  const { pool: single, batcher: oneByOne } = await poolAndBatcher(1, 1, (err) => failed.push(err));
  t.teardown(async () => {
    await oneByOne.close();
    await single.destroy();
  });
  // Both batches go out in one turn: the crash into the worker's first slot, the other into its second.
  const [crashed, waited] = await Promise.all([evaluate('flg_crash', '', oneByOne), evaluate(world.ids.on, '', oneByOne)]);
  t.equal(crashed.status, 500);
  t.equal(waited.status, 200, 'the batch the dead worker never took');
  t.same(waited.json, { id: world.ids.on, name: 'on', enabled: true });
  t.equal(failed.length, 1, 'one failed batch');
  t.equal(single.threads, 1);
  t.same(await single.probe(5000), { answered: 1, workers: 1 }, 'the new worker answers probes');
});

t.test('probes and usage collections reach every worker', async (t) => {
  t.same(await pool.probe(5000), { answered: 2, workers: 2 });
  /** The workers' counts of world.ids.on since the last collection, one entry per worker that has any. */
  const collect = async () => {
    const counts: number[] = [];
    await pool.collectUsage(5000, (usage) => {
      for (const one of usage) if (one.flagId === world.ids.on) counts.push(one.evaluations);
    });
    return counts;
  };
  await collect(); // what the tests before counted
  await Promise.all(Array.from({ length: 50 }, () => evaluate(world.ids.on)));
  const counts = await collect();
  t.equal(
    counts.reduce((a, b) => a + b, 0),
    50,
    `the 50 evaluations are counted once, whichever worker made them (${counts.join(' + ')})`,
  );
  t.same(await collect(), [], 'and taken: a second collection has none of them');
});
