// Measures request latency from a worker thread of its own, so that what the test's main thread does
// meanwhile (hundreds of attacking sockets, megabytes written) does not add to the figures. Between
// begin() and end(), GETs in `loops` parallel keep-alive loops, each timed from send to the whole body.
// The worker starts (and makes its first request) once, before the first begin(): on a loaded machine
// a thread's start-up alone can take a second.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

export interface ProbeResult {
  /** Milliseconds, sorted. */
  latencies: number[];
  /** Answers other than 200, and network errors. */
  failures: string[];
}

export interface LatencyProbe {
  begin(): void;
  /** GETs answered since begin(), read at any time (the worker counts them in shared memory). */
  answered(): number;
  end(): Promise<ProbeResult>;
  close(): Promise<void>;
}

interface ProbeData {
  /** The URL to GET; `{i}` is replaced by the request's number. */
  url: string;
  loops: number;
  /** One Int32: GETs answered since the last begin(). */
  answered: SharedArrayBuffer;
}

type Command = 'begin' | 'end';

/** Resolves once the worker has made one request (and so is ready to measure). */
export async function startLatencyProbe(url: string, loops = 2): Promise<LatencyProbe> {
  const answered = new SharedArrayBuffer(4);
  const count = new Int32Array(answered);
  const worker = new Worker(new URL(import.meta.url), { workerData: { url, loops, answered } satisfies ProbeData });
  const next = () =>
    new Promise<unknown>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  await next();
  return {
    begin() {
      // Reset here, not in the worker: answered() right after begin() must not see the last period's count.
      Atomics.store(count, 0, 0);
      worker.postMessage('begin' satisfies Command);
    },
    answered: () => Atomics.load(count, 0),
    async end() {
      const result = next();
      worker.postMessage('end' satisfies Command);
      return (await result) as ProbeResult;
    },
    async close() {
      await worker.terminate();
    },
  };
}

/** p-th percentile (0..1) of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;
}

if (!isMainThread && parentPort !== null) {
  const port = parentPort;
  const { url, loops, answered } = workerData as ProbeData;
  const count = new Int32Array(answered);
  let n = 0;
  let running = false;
  let latencies: number[] = [];
  let failures: string[] = [];
  const get = async () => {
    const started = performance.now();
    try {
      const r = await fetch(url.replace('{i}', String(n++)));
      const text = await r.text();
      if (r.status !== 200) failures.push(`${r.status} ${text.slice(0, 80)}`);
    } catch (err) {
      failures.push(String(err));
    }
    return performance.now() - started;
  };
  let loopsDone: Promise<unknown> = Promise.resolve();
  port.on('message', (command: Command) => {
    if (command === 'begin') {
      running = true;
      latencies = [];
      failures = [];
      loopsDone = Promise.all(
        Array.from({ length: loops }, async () => {
          while (running) {
            latencies.push(await get());
            Atomics.add(count, 0, 1);
          }
        }),
      );
    } else {
      running = false;
      void loopsDone.then(() => port.postMessage({ latencies: latencies.sort((a, b) => a - b), failures } satisfies ProbeResult));
    }
  });
  void get().then(() => port.postMessage('ready'));
}
