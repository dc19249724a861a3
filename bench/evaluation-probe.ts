// OFREP evaluations of one flag timed one at a time, on a keep-alive connection of their own, from a
// worker thread of their own (events.bench.ts): what another team's service sees of the node. In the
// senders' thread, their answers waited behind the senders' work in that thread's event loop (with a
// flood refused from its headers, most of the probe's time), the generator's delay and not the node's. Posts the 50th and 99th percentiles in ms, and the count.
import { Agent, request } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

export interface ProbeData {
  port: number;
  /** The project whose flag `new-search` is evaluated. */
  projectId: string;
  ms: number;
}
export interface ProbeFigures {
  p50: number;
  p99: number;
  count: number;
}

const { port, projectId, ms } = workerData as ProbeData;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const evaluate = (body: string) =>
  new Promise<void>((resolve, reject) => {
    const headers = { 'content-type': 'application/json', 'x-flagwire-project': projectId, 'content-length': Buffer.byteLength(body) };
    const path = '/ofrep/v1/evaluate/flags/new-search';
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', agent, headers }, (res) => {
      res.on('error', reject).on('end', resolve).resume();
    });
    req.on('error', reject).end(body);
  });

const times: number[] = [];
const until = performance.now() + ms;
for (let n = 0; performance.now() < until; n++) {
  const started = performance.now();
  await evaluate(JSON.stringify({ context: { targetingKey: `probe-${n}` } }));
  times.push(performance.now() - started);
}
agent.destroy();
times.sort((a, b) => a - b);
const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
parentPort!.postMessage({ p50: at(0.5), p99: at(0.99), count: times.length } satisfies ProbeFigures);
