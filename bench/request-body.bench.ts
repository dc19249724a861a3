// Request-body micro-bench (issue 43, item 6): a Management API or console write's body from uWS's
// chunks to the thread that parses it, without HTTP, in one run:
//
//   copied  the path before issue 43: the reader's copy of the chunk (Buffer.from, pooled under 4 KiB),
//           a second exact copy for the writer (new Uint8Array), then structured clone to the thread (three)
//   kept    the path now: the reader's copy kept as the request's own (keepBody: copied again only when
//           pooled or in the reader's store) and moved to the thread (movableBuffers; cloned under 4 KiB)
//
// The other thread answers each body with its length, as the writer answers a command. "cpu µs/req" is
// the process's CPU (both threads) per body; the uWS chunk each body starts from is made outside it.
//
//   node --expose-gc dist/bench/request-body.bench.js
import { Worker } from 'node:worker_threads';
import { BodyBudget, type BodyResult, keepBody } from '../src/http/body.js';
import type { PendingResponse } from '../src/http/http.js';
import { movableBuffers, type ReceivedBody } from '../src/model/request-body.js';

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const worker = new Worker(
  `require('node:worker_threads').parentPort.on('message', (m) => require('node:worker_threads').parentPort.postMessage(m.received.bytes.byteLength));`,
  { eval: true },
);
const budget = BodyBudget.create(1 << 30);
let answered = 0;
worker.on('message', () => answered++);

type Variant = (body: Buffer) => void;
const kVariants: Record<'copied' | 'kept', Variant> = {
  copied: (body) => {
    const received: ReceivedBody = { bytes: new Uint8Array(body), contentType: 'application/json' };
    worker.postMessage({ received });
  },
  kept: (body) => {
    const received: ReceivedBody = { bytes: keepBody(body), contentType: 'application/json' };
    worker.postMessage({ received }, movableBuffers(received));
  },
};

/** The body of `chunks` as the reader gives it (uWS's response stood in for). */
function read(chunks: readonly ArrayBuffer[], total: number): BodyResult & { ok: true } {
  let result: BodyResult | null = null;
  const res = {
    onAborted() {},
    onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void) {
      for (let i = 0; i < chunks.length; i++) handler(chunks[i]!, i === chunks.length - 1);
    },
  };
  budget.read(res as unknown as PendingResponse, String(total), (r) => {
    result = r;
  });
  const read = result as BodyResult | null;
  if (read === null || !read.ok) throw new Error('not read');
  return read;
}

async function round(variant: Variant, size: number, chunkCount: number, n: number): Promise<number> {
  const chunkSize = Math.ceil(size / chunkCount);
  const chunks = Array.from({ length: chunkCount }, (_, i) => new Uint8Array(Math.min(chunkSize, size - i * chunkSize)).fill(0x61));
  const inputs = Array.from({ length: 8 }, () => chunks.map((c) => c.slice().buffer));
  gc();
  answered = 0;
  let cpu = 0;
  for (let i = 0; i < n; i += 8) {
    // A fresh uWS chunk per body, made outside the measured time.
    for (let k = 0; k < 8; k++) inputs[k] = chunks.map((c) => c.slice().buffer);
    const start = process.cpuUsage();
    for (let k = 0; k < 8; k++) {
      const body = read(inputs[k]!, size);
      variant(body.body);
      body.release();
    }
    const used = process.cpuUsage(start);
    cpu += used.user + used.system;
    await new Promise((resolve) => setImmediate(resolve));
  }
  while (answered < n) await new Promise((resolve) => setImmediate(resolve));
  return cpu / n;
}

const kCases: [size: number, chunks: number, n: number][] = [
  [200, 1, 16_000],
  [1024, 1, 16_000],
  [4096, 1, 8_000],
  [16 * 1024, 1, 4_000],
  [256 * 1024, 1, 800],
  [1024 * 1024, 1, 240],
  [1024 * 1024, 16, 240],
];
console.log('| body | chunks | copied cpu µs/req | kept cpu µs/req | ratio |');
console.log('|---|---|---|---|---|');
for (const [size, chunkCount, n] of kCases) {
  const times: Record<string, number[]> = { copied: [], kept: [] };
  for (let r = 0; r < 5; r++)
    for (const name of ['copied', 'kept'] as const) times[name]!.push(await round(kVariants[name], size, chunkCount, n));
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const [copied, kept] = [median(times.copied!), median(times.kept!)];
  console.log(`| ${size} B | ${chunkCount} | ${copied.toFixed(1)} | ${kept.toFixed(1)} | ${(kept / copied).toFixed(2)} |`);
}
await worker.terminate();
