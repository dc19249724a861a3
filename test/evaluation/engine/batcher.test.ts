// Main-thread batching with a fake runner and fake uWS responses: one task per event-loop turn,
// growth while workers are busy, bounds, aborted clients, failed batches, shutdown; the batch's
// revision on every answer, and requests that wait for a revision.
import t from 'tap';
import type { PendingResponse } from '../../../src/http/http.js';
import { InFlight } from '../../../src/http/in-flight.js';
import {
  EvalBatcher,
  type BatchAbortSignal,
  type BatchDone,
  type BatchRunner,
  type BatcherOptions,
} from '../../../src/evaluation/engine/batcher.js';
import { DecodedRequests, ResultWriter, type EvalTask, type Route } from '../../../src/evaluation/engine/protocol.js';
import { routeNumbers } from '../../../src/all-routes.js';
import { evaluationApiSpec, kEvaluationApiRoutes } from '../../../src/evaluation/engine/evaluation-api-routes.js';
import { kBatchTimedOutDetail } from '../../../src/evaluation/engine/bodies.js';
import { waiterAt } from '../../helpers/revision-waiter.js';

const kNumbers = routeNumbers(kEvaluationApiRoutes);
const { evaluateFlag: kRouteFlag, evaluateProject: kRouteProject } = kNumbers;

interface FakeRes extends PendingResponse {
  written: { status: string; headers: [string, string][]; body: string } | null;
  abort(): void;
}

function fakeRes(): FakeRes {
  let aborted: (() => void) | null = null;
  const headers: [string, string][] = [];
  // As uWS: an answer whose status was not written is a 200.
  let status = '200 OK';
  let corked = false;
  const res = {
    written: null,
    onAborted(fn: () => void) {
      aborted = fn;
      return res;
    },
    abort() {
      aborted!();
    },
    cork(fn: () => void) {
      corked = true;
      fn();
      corked = false;
      return res;
    },
    writeStatus(s: Uint8Array | string) {
      if (!corked) throw new Error('write outside cork');
      status = Buffer.from(s).toString();
      return res;
    },
    writeHeader(k: Uint8Array | string, v: Uint8Array | string) {
      // As uWS: `name: value\r\n` written as is, so a value may hold further lines (answer-writer.ts).
      for (const line of `${Buffer.from(k).toString()}: ${Buffer.from(v).toString()}`.split('\r\n')) {
        const colon = line.indexOf(':');
        headers.push([line.slice(0, colon), line.slice(colon + 2)]);
      }
      return res;
    },
    end(body: Uint8Array) {
      if (res.written) throw new Error('answered twice');
      res.written = { status, headers, body: Buffer.from(body).toString() };
      return res;
    },
  } as unknown as FakeRes;
  return res;
}

/** Answers each request with `<route>:<id>?<query>`, status 200 (or 404 for id "missing"), at `revision`. */
class EchoRunner implements BatchRunner {
  tasks: number[] = [];
  revision = 42;
  hold = false;
  private held: (() => void)[] = [];
  fail: unknown = null;

  /** Tasks whose abort signal fired (the batcher's timeout cancelled them). */
  aborted = 0;

  run(task: EvalTask, signal: BatchAbortSignal, done: BatchDone): void {
    this.tasks.push(task.count);
    signal.addEventListener('abort', () => this.aborted++);
    // As the pool: the requests are copied at once, the answer comes from a later task.
    const requests = task.buffer.slice(0, task.bytes);
    if (this.fail !== null) {
      const err = this.fail;
      queueMicrotask(() => done(err, null));
      return;
    }
    const reqs = new DecodedRequests().readRequests(requests, task.count);
    const out = new ResultWriter(requests, task.count, this.revision);
    for (let i = 0; i < reqs.count; i++) {
      out.put(reqs.ids[i] === 'missing' ? 404 : 200, Buffer.from(`${reqs.routes[i]}:${reqs.ids[i]}?${reqs.queries[i]}`));
    }
    const result = out.finish();
    const answer = () => done(null, result);
    if (this.hold) this.held.push(answer);
    else queueMicrotask(answer);
  }

  release(): void {
    for (const fn of this.held.splice(0)) fn();
  }
}

const header = (res: FakeRes, name: string) => res.written?.headers.find(([k]) => k === name)?.[1];
const turn = () => new Promise((resolve) => setImmediate(resolve));
const settle = async () => {
  for (let i = 0; i < 5; i++) await turn();
};

function setup(over: Partial<BatcherOptions> = {}) {
  const runner = new EchoRunner();
  const inFlight = new InFlight();
  const errors: unknown[] = [];
  const batcher = new EvalBatcher({
    runner,
    inFlight,
    maxTasksInFlight: 2,
    maxBatchRequests: 100,
    maxPendingRequests: 1000,
    maxBatchBytes: 1 << 20,
    maxBatchAnswerBytes: 4 << 20,
    maxPendingBytes: 1 << 26,
    taskTimeoutMs: 60_000,
    onBatchError: (err) => errors.push(err),
    routeSets: [evaluationApiSpec(kNumbers)],
    ...over,
  });
  const add = (id: string, query = '', route: Route = kRouteFlag, minRevision = 0) => {
    const res = fakeRes();
    res.onAborted(() => {
      res.aborted = true;
    });
    return { res, accepted: batcher.add(res, route, id, query, '', minRevision) };
  };
  return { runner, inFlight, errors, batcher, add };
}

t.test('requests of one turn go as one task; each response gets its own answer, corked, with CORS', async (t) => {
  const { runner, add, inFlight } = setup();
  const a = add('flg_a', 'cohort=x');
  const b = add('flg_b', '', kRouteProject);
  const c = add('missing', 'q=é');
  t.equal(inFlight.size, 1, 'one in-flight handle per batch');
  await settle();
  t.same(runner.tasks, [3]);
  t.same(a.res.written, {
    status: '200 OK',
    headers: [
      ['Flagwire-Revision', '42'],
      ['Access-Control-Allow-Origin', '*'],
      ['X-Content-Type-Options', 'nosniff'],
      ['Access-Control-Expose-Headers', 'Flagwire-Revision'],
      ['Content-Type', 'application/json'],
    ],
    body: `${kRouteFlag}:flg_a?cohort=x`,
  });
  t.equal(b.res.written!.body, `${kRouteProject}:flg_b?`);
  t.equal(c.res.written!.status, '404 Not Found');
  t.equal(c.res.written!.body, `${kRouteFlag}:missing?q=é`, 'UTF-8 survives the round trip');
  t.equal(inFlight.size, 0);
});

t.test('later turns go in later tasks', async (t) => {
  const { runner, add } = setup();
  add('a');
  await settle();
  add('b');
  add('c');
  await settle();
  t.same(runner.tasks, [1, 2]);
});

t.test('while every task slot is taken, the open batch keeps growing', async (t) => {
  const { runner, add, batcher } = setup({ maxTasksInFlight: 1 });
  runner.hold = true;
  const first = add('first');
  await settle();
  const later = [];
  for (let i = 0; i < 5; i++) {
    later.push(add(`later-${i}`));
    await turn();
  }
  t.same(runner.tasks, [1], 'nothing more sent while the slot is taken');
  t.equal(batcher.size, 6);
  runner.release();
  await settle();
  runner.release();
  await settle();
  t.same(runner.tasks, [1, 5], 'the five requests of five turns went as one batch');
  t.ok(first.res.written && later.every((l) => l.res.written));
  t.equal(batcher.size, 0);
});

t.test('a batch holds at most maxBatchRequests', async (t) => {
  const { runner, add } = setup({ maxBatchRequests: 4 });
  for (let i = 0; i < 10; i++) add(`r${i}`);
  await settle();
  t.same(runner.tasks, [4, 4, 2]);
});

t.test("a batch closes before its answers would outgrow maxBatchAnswerBytes, at the last batch's bytes per answer", async (t) => {
  const { runner, add } = setup({ maxBatchAnswerBytes: 1000 });
  // Each answer is `<route>:<id>?` (103 bytes with a 100-character id) and its 12-byte entry.
  const id = (i: number) => `r${i}`.padEnd(100, 'x');
  for (let i = 0; i < 20; i++) add(id(i));
  await settle();
  t.same(runner.tasks, [20], 'before any answer the batch is bounded by requests and bytes only');
  // 20 answers took 12 + 20 * 115 bytes: 115.6 per answer, so 8 fit 1,000 bytes and a 9th would not.
  const later = Array.from({ length: 20 }, (_, i) => add(id(20 + i)));
  await settle();
  t.same(runner.tasks, [20, 8, 8, 4]);
  t.ok(
    later.every((l, i) => l.res.written?.body === `${kRouteFlag}:${id(20 + i)}?`),
    'every request answered, in order',
  );
});

t.test('the queue is bounded: past maxPendingRequests add() refuses', async (t) => {
  const { runner, add, batcher } = setup({ maxPendingRequests: 3, maxTasksInFlight: 1 });
  runner.hold = true;
  t.same([add('a').accepted, add('b').accepted, add('c').accepted, add('d').accepted], [true, true, true, false]);
  await settle();
  runner.release();
  await settle();
  t.equal(batcher.size, 0);
  t.equal(add('e').accepted, true, 'accepted again once answered');
});

t.test('an aborted client is skipped, the others answered', async (t) => {
  const { add } = setup();
  const a = add('a');
  const b = add('b');
  a.res.abort();
  await settle();
  t.equal(a.res.written, null);
  t.equal(b.res.written!.body, `${kRouteFlag}:b?`);
});

t.test('a failed task answers every request of its batch 500, once, and frees its slot', async (t) => {
  const { runner, add, errors, inFlight, batcher } = setup();
  runner.fail = new Error('worker exited with code: 70');
  const reqs = [add('a'), add('b'), add('c')];
  reqs[1]!.res.abort();
  await settle();
  t.equal(errors.length, 1);
  t.same(
    reqs.map((r) => r.res.written?.status ?? null),
    ['500 Internal Server Error', null, '500 Internal Server Error'],
  );
  t.same(JSON.parse(reqs[0]!.res.written!.body), {
    error: 'Internal server error',
    detail: 'An unexpected error occurred while evaluating; it has been logged. Retry, and report it if it persists.',
  });
  t.equal(inFlight.size, 0);
  t.equal(batcher.size, 0);
  runner.fail = null;
  const next = add('d');
  await settle();
  t.equal(next.res.written!.status, '200 OK', 'the next batch is served');
});

t.test('a runner that throws, or an answer of the wrong size, is a failed batch too', async (t) => {
  const throwing: BatchRunner = {
    run() {
      throw new Error('pool destroyed');
    },
  };
  const s1 = setup({ runner: throwing });
  const r1 = s1.add('a');
  await settle();
  t.equal(r1.res.written!.status, '500 Internal Server Error');
  const short: BatchRunner = {
    run(task, _signal, done) {
      const out = new ResultWriter(task.buffer.slice(0), 0);
      queueMicrotask(() => done(null, out.finish()));
    },
  };
  const s2 = setup({ runner: short });
  const r2 = s2.add('a');
  await settle();
  t.equal(r2.res.written!.status, '500 Internal Server Error');
  t.match(String(s2.errors[0]), /came back with 0 answers/);
});

t.test('close: refuses new requests and resolves once the accepted ones are answered', async (t) => {
  const { runner, add, batcher } = setup({ maxTasksInFlight: 1 });
  runner.hold = true;
  const a = add('a');
  await settle();
  const b = add('b');
  let closed = false;
  const closing = batcher.close().then(() => (closed = true));
  t.equal(add('c').accepted, false);
  await settle();
  t.equal(closed, false);
  runner.release();
  await settle();
  runner.release();
  await closing;
  t.ok(a.res.written && b.res.written);
});

t.test('buffers: a batch larger than the initial buffer grows it', async (t) => {
  const { add } = setup({ maxBatchRequests: 1000 });
  const big = 'x'.repeat(2000);
  const reqs = [];
  for (let i = 0; i < 100; i++) reqs.push(add(`id${i}`, `k=${big}`));
  await settle();
  t.ok(reqs.every((r, i) => r.res.written!.body === `${kRouteFlag}:id${i}?k=${big}`));
});

t.test('bytes: a batch closes at maxBatchBytes, add() refuses past maxPendingBytes, grown buffers are not kept', async (t) => {
  const { runner, add, batcher } = setup({ maxTasksInFlight: 1, maxBatchBytes: 1000, maxPendingBytes: 5000 });
  runner.hold = true;
  const big = 'q'.repeat(600);
  const accepted = Array.from({ length: 10 }, (_, i) => add(`r${i}`, big).accepted);
  // 615 bytes each (13 header + id + query): two per batch reach 1,000 bytes; 8 take 4,920 bytes, so
  // the 9th is still taken and the 10th finds 5,535 ≥ 5,000 bytes pending.
  t.same(accepted, [true, true, true, true, true, true, true, true, true, false], 'bounded by bytes, not only by count');
  await settle();
  t.same(runner.tasks, [2], 'the first batch closed at the byte bound');
  runner.hold = false;
  runner.release();
  for (let i = 0; i < 5; i++) await settle();
  t.same(runner.tasks, [2, 2, 2, 2, 1]);
  t.equal(batcher.size, 0);
  t.equal(add('after', big).accepted, true, 'answered requests free their bytes');
  await settle();

  // One request larger than the initial 64 KiB buffer grows its batch's buffer; that buffer is dropped
  // after the batch, so the next batch starts from a buffer of the initial size again.
  const echo = new EchoRunner();
  const sizes: number[] = [];
  const seen: BatchRunner = {
    run: (task, signal, done) => {
      sizes.push(task.buffer.byteLength);
      echo.run(task, signal, done);
    },
  };
  const s3 = setup({ runner: seen });
  s3.add('huge', 'h'.repeat(200 * 1024));
  await settle();
  s3.add('small');
  await settle();
  t.ok(sizes[0]! > 64 * 1024, 'the large request grew its buffer');
  t.equal(sizes[1], 64 * 1024, 'the next batch does not reuse the grown buffer');
});

t.test(
  'a batch that never comes back is answered 503 with Retry-After after taskTimeoutMs, every request of it; its late result is dropped',
  async (t) => {
    const { runner, add, errors, batcher, inFlight } = setup({ taskTimeoutMs: 30, maxTasksInFlight: 1 });
    runner.hold = true;
    // One batch, two projects' requests: whichever held the worker, neither is answered 500.
    const a = add('a');
    const other = add('other-project', '', kRouteProject);
    while (a.res.written === null || other.res.written === null) await new Promise((resolve) => setTimeout(resolve, 10));
    t.same(runner.tasks, [2], 'one batch');
    for (const r of [a, other]) {
      t.equal(r.res.written!.status, '503 Service Unavailable');
      t.equal(header(r.res, 'Retry-After'), '1');
      t.same(JSON.parse(r.res.written!.body), { error: 'Service unavailable', detail: kBatchTimedOutDetail });
    }
    t.match(String(errors[0]), /not answered within 30 ms/);
    t.equal(runner.aborted, 1, 'the task was cancelled, so the pool replaces its stuck worker');
    t.equal(batcher.size, 0);
    t.equal(inFlight.size, 0);
    runner.hold = false;
    const b = add('b');
    await settle();
    t.equal(b.res.written!.body, `${kRouteFlag}:b?`, 'the slot was freed');
    runner.release();
    await settle();
    t.equal(errors.length, 1, 'the late answer of the first batch changes nothing');
  },
);

t.test('every answer of a batch names its revision; a later batch its own', async (t) => {
  const { runner, add } = setup();
  const first = add('flg_a');
  await settle();
  t.equal(header(first.res, 'Flagwire-Revision'), '42');
  runner.revision = 2 ** 32 + 7;
  const [b, c] = [add('flg_b'), add('missing')];
  await settle();
  t.same(
    [header(b.res, 'Flagwire-Revision'), header(c.res, 'Flagwire-Revision')],
    ['4294967303', '4294967303'],
    'past 32 bits, errors too',
  );
});

t.test('Flagwire-Min-Revision: at or below what a batch answered at, no read; above, a read of the store', async (t) => {
  const { at, waiter } = waiterAt(42, 1000);
  const { add } = setup({ revisions: waiter });
  const warm = add('flg_a');
  await settle();
  t.equal(header(warm.res, 'Flagwire-Revision'), '42');
  const reads = at.reads;
  const same = add('flg_b', '', kRouteFlag, 42);
  await settle();
  t.same([same.accepted, same.res.written?.status, at.reads], [true, '200 OK', reads], 'served at once, without a read');
  at.revision = 50;
  const newer = add('flg_c', '', kRouteFlag, 45);
  t.equal(at.reads, reads + 1, 'one read says the store has it');
  await settle();
  t.equal(newer.res.written?.status, '200 OK');
});

t.test('a request above the store waits, counted as accepted, then joins a batch once the store has it', async (t) => {
  const { at, waiter } = waiterAt(42, 5000);
  const inFlight = new InFlight();
  const { runner, add, batcher } = setup({ revisions: waiter, inFlight });
  const waiting = add('flg_wait', '', kRouteFlag, 44);
  t.equal(waiting.accepted, true);
  t.equal(batcher.size, 1, 'accepted: within the queue bounds');
  t.equal(inFlight.size, 1, 'shutdown waits for it');
  await new Promise((resolve) => setTimeout(resolve, 30));
  t.same([runner.tasks, waiting.res.written], [[], null], 'not sent while the store is behind');
  at.revision = 44;
  runner.revision = 44;
  await new Promise((resolve) => setTimeout(resolve, 30));
  await settle();
  t.same(runner.tasks, [1]);
  t.same([waiting.res.written?.status, waiting.res.written?.body], ['200 OK', `${kRouteFlag}:flg_wait?`]);
  t.equal(header(waiting.res, 'Flagwire-Revision'), '44');
  t.same([batcher.size, inFlight.size], [0, 0]);
});

t.test("a wait that runs out: 503 with Retry-After and the route set's body; an aborted one is dropped", async (t) => {
  const { waiter } = waiterAt(42, 40);
  const { runner, add, batcher } = setup({ revisions: waiter });
  const late = add('flg_late', '', kRouteFlag, 1000);
  const gone = add('flg_gone', '', kRouteFlag, 1000);
  gone.res.abort();
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.equal(late.res.written?.status, '503 Service Unavailable');
  t.equal(header(late.res, 'Retry-After'), '1');
  t.equal(header(late.res, 'Flagwire-Revision'), '42', "this node's revision");
  t.same(JSON.parse(late.res.written!.body).error, 'Revision not reached');
  t.equal(gone.res.written, null);
  t.same([runner.tasks, batcher.size], [[], 0], 'neither was evaluated; nothing left pending');
});

t.test("waiting is bounded: past the waiter's bound add() refuses (the route set answers 503)", async (t) => {
  const { waiter } = waiterAt(0, 5000, 2);
  const { add, batcher } = setup({ revisions: waiter });
  t.same(
    [add('a', '', kRouteFlag, 9).accepted, add('b', '', kRouteFlag, 9).accepted, add('c', '', kRouteFlag, 9).accepted],
    [true, true, false],
  );
  t.equal(batcher.size, 2);
  waiter.close();
  await settle();
  t.equal(batcher.size, 0, 'close answers the waiting ones');
});

t.test("refuse(): a route set's own answer, with the newest revision known, Retry-After and closing on request", async (t) => {
  const { batcher, add } = setup();
  add('flg_a');
  await settle();
  const res = fakeRes();
  batcher.refuse(res, 503, Buffer.from('{}'), true, false);
  t.equal(header(res, 'Flagwire-Revision'), '42');
  t.equal(header(res, 'Retry-After'), '1');
  const plain = fakeRes();
  batcher.refuse(plain, 400, Buffer.from('{}'));
  t.equal(header(plain, 'Retry-After'), undefined);
});
