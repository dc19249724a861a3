// Where a request's CPU goes, by activity, from `perf script` of one server process (issue 30):
//
//   perf script -i perf.data | node dist/bench/perf-breakdown.js --requests N --period-us 500
//
// Every sample (a stack) is put in one bucket, by the first rule below whose frame appears anywhere in
// its stack, on the thread it ran on (main: the uWS front end; eval worker: a thread that ran Piscina's
// worker; other: the writer, the GC helpers, libuv's pool). A bucket's figure is its samples × the
// sampling period ÷ the requests served while recording: microseconds of CPU per request. The rules are
// ordered so that the kernel's socket work is counted as such wherever it is called from (the hello
// world pays it too), and so that the batch round trip (the hand-off) is told apart from the answer's
// writing. bench/perf-profile.sh records the runs and prints this for the hello world beside each route.
import { createInterface } from 'node:readline';

interface Rule {
  bucket: string;
  /** Substrings of a frame's symbol or file; the rule matches when any frame holds any of them. */
  frames: readonly string[];
}

/** Main (front-end) thread: first match wins. */
const kMainRules: readonly Rule[] = [
  { bucket: 'kernel: socket write (send)', frames: ['__x64_sys_sendto', '__x64_sys_writev', '__x64_sys_write '] },
  { bucket: 'kernel: socket read (recv)', frames: ['__x64_sys_recvfrom', '__x64_sys_read '] },
  { bucket: 'kernel: epoll wait', frames: ['__x64_sys_epoll_pwait', '__x64_sys_epoll_wait'] },
  { bucket: 'GC', frames: ['Heap::', 'Scavenger', 'MarkCompact', 'IncrementalMarking', 'ConcurrentMarking', 'GCTracer'] },
  { bucket: 'hand-off: next batch posted (Piscina, futex wake)', frames: ['runTask ', 'postTask ', 'AtomicsNotify'] },
  { bucket: 'counting (metrics)', frames: ['/metrics/metrics.js', '/metrics/registry.js'] },
  { bucket: 'answer: uWS writes (status, headers, body)', frames: ['res_cork', 'res_end', 'res_writeHeader', 'res_writeStatus'] },
  {
    bucket: 'answer: JS (batch loop, reading answers)',
    frames: ['answerBatch ', 'failBatch ', '/evaluation/engine/protocol.js:2', 'answer '],
  },
  { bucket: 'hand-off: batch back (message, wake-up, promise)', frames: ['MessagePort::OnMessage', 'uv__async_io'] },
  { bucket: 'hand-off: batch sent (setImmediate turn)', frames: ['processImmediate', 'CheckImmediate', 'flushTurn', 'pump file'] },
  { bucket: 'request: onAborted', frames: ['res_onAborted', 'trackAbort'] },
  {
    bucket: 'request: copy into the batch',
    frames: ['/evaluation/engine/batcher.js', '/evaluation/engine/protocol.js', 'enqueue ', 'WriteUtf8', 'Utf8Length'],
  },
  { bucket: 'request: read off uWS (id, query, headers)', frames: ['req_get', 'getQuery', 'getParameter', 'getHeader', 'minRevisionOf'] },
  { bucket: 'request: handler (JS wrappers)', frames: ['uWS_App_', 'JSEntry'] },
  { bucket: 'uWS: parse and dispatch', frames: ['uws_linux', 'us_internal', 'uWS::'] },
];

/** Eval worker thread. */
const kWorkerRules: readonly Rule[] = [
  { bucket: 'context switch', frames: ['finish_task_switch', '__schedule'] },
  { bucket: 'GC', frames: ['Heap::', 'Scavenger', 'MarkCompact', 'IncrementalMarking', 'ConcurrentMarking', 'GCTracer'] },
  { bucket: 'waiting (Atomics.wait)', frames: ['FutexEmulation', 'atomicsWaitLoop', 'futex_wait'] },
  { bucket: 'read requests', frames: ['readRequests '] },
  { bucket: 'LMDB snapshot and reads', frames: ['mdb_', '/lmdb/', '/msgpackr/', 'resetReadTxn', 'beginBatch'] },
  {
    bucket: 'evaluate and write answers',
    // A worker run from its bundle (bundle/eval/worker.script.js, evaluators included) names no source
    // path: a batch's evaluation is found by evaluateBatch, once reading and LMDB are taken above.
    frames: [
      '/evaluation/engine/engine.js',
      '/evaluation/engine/evaluate.js',
      '/evaluation/engine/query.js',
      'evaluation-api-evaluator',
      'ofrep-evaluator',
      'frontend-evaluator',
      '/ofrep/',
      'ResultWriter',
      'put ',
      'evaluateBatch ',
    ],
  },
  {
    bucket: 'Piscina message (post, receive, clone)',
    frames: ['piscina', 'MessagePort', 'ValueSerializer', 'ValueDeserializer', 'uv__async_io'],
  },
];

function bucketOf(rules: readonly Rule[], stack: string): string {
  for (const rule of rules) for (const frame of rule.frames) if (stack.includes(frame)) return rule.bucket;
  return 'other';
}

function arg(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? undefined : process.argv[at + 1];
}

const requests = Number(arg('requests'));
const periodUs = Number(arg('period-us') ?? '500');
if (!(requests > 0)) {
  process.stderr.write('usage: perf script | node dist/bench/perf-breakdown.js --requests N [--period-us 500] [--json]\n');
  process.exit(2);
}

// perf script prints a header line per sample ("comm pid/tid time: period event:"), then its frames.
const samples = new Map<number, string[]>();
let tid = -1;
let pid = -1;
let frames: string[] = [];
const flush = (): void => {
  if (tid < 0) return;
  const list = samples.get(tid) ?? [];
  samples.set(tid, list);
  list.push(frames.join('\n'));
  tid = -1;
  frames = [];
};
for await (const line of createInterface({ input: process.stdin })) {
  if (line.length === 0) continue;
  if (line[0] !== '\t' && line[0] !== ' ') {
    flush();
    const ids = /^\S.*?\s+(\d+)\/(\d+)\s/.exec(line) ?? /^\S.*?\s+(\d+)\s/.exec(line);
    if (ids === null) continue;
    if (ids[2] !== undefined) {
      pid = Number(ids[1]);
      tid = Number(ids[2]);
    } else tid = Number(ids[1]);
    continue;
  }
  frames.push(line.trim());
}
flush();

const byThread = new Map<string, Map<string, number>>();
const add = (thread: string, bucket: string): void => {
  const buckets = byThread.get(thread) ?? new Map<string, number>();
  byThread.set(thread, buckets);
  buckets.set(bucket, (buckets.get(bucket) ?? 0) + 1);
};
// Without pid/tid in the header (perf script -F default prints only the tid), the busiest thread is the main one.
const mainTid = pid > 0 ? pid : [...samples.entries()].sort((a, b) => b[1].length - a[1].length)[0]?.[0];
for (const [thread, stacks] of samples) {
  const isWorker = stacks.some((s) => s.includes('piscina/dist/worker') || s.includes('evaluateBatch'));
  const role = thread === mainTid ? 'main' : isWorker ? 'eval worker' : 'other';
  const rules = role === 'main' ? kMainRules : kWorkerRules;
  for (const stack of stacks) add(role, role === 'other' ? 'all' : bucketOf(rules, stack));
}

const usPer = (count: number): number => (count * periodUs) / requests;
const result: Record<string, Record<string, number>> = {};
for (const [thread, buckets] of byThread) {
  result[thread] = {};
  for (const [bucket, count] of [...buckets].sort((a, b) => b[1] - a[1])) result[thread]![bucket] = Number(usPer(count).toFixed(2));
}
if (process.argv.includes('--json')) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else {
  for (const [thread, buckets] of Object.entries(result)) {
    const total = Object.values(buckets).reduce((a, b) => a + b, 0);
    process.stdout.write(`${thread}: ${total.toFixed(2)} us/request\n`);
    for (const [bucket, us] of Object.entries(buckets)) process.stdout.write(`  ${us.toFixed(2).padStart(7)}  ${bucket}\n`);
  }
}
