// The setup of every autocannon connection, in this process or in autocannon's worker threads (which
// `require` a file path, hence CommonJS). The plan travels on the first request of the options
// (custom fields survive autocannon's deep clone and the hand-over to its workers), and so does the
// SharedArrayBuffer the latencies go into: every thread records into the same memory, at microsecond
// resolution (autocannon's own histogram keeps whole milliseconds, too coarse for a 5 ms p99 target).
//
// Stats layout (Int32Array over the SharedArrayBuffer, updated with Atomics):
//
//   [0 .. kFine)                 responses that took i µs                (0 - 99.999 ms)
//   [kFine .. kFine + kCoarse)   responses that took 100 + j ms          (100 ms - 9.999 s)
//   [kOverflow]                  responses that took 10 s or more
//   [kMismatches]                responses the plan's check refused (a PATCH that changed nothing)
//
// Each connection replays its own request sequence, built here once: no per-request rebuild.
import { threadId } from 'node:worker_threads';

interface Client {
  opts: { requests?: { plan?: setupClient.Plan }[] };
  setRequests(requests: setupClient.BenchRequest[]): void;
  on(event: 'response', listener: (status: number, bytes: number, ms: number) => void): void;
}

let lastRun = -1;
let counter = 0;

function setupClient(client: Client): void {
  const plan = client.opts.requests?.[0]?.plan;
  if (plan === undefined) throw new Error('ac-client: the first request carries no plan');
  if (plan.runId !== lastRun) {
    lastRun = plan.runId;
    counter = 0;
  }
  // In workers each thread counts from 0; autocannon starts its W workers one after the other, so
  // their thread ids are consecutive and `threadId % W` tells them apart.
  const index = plan.workers > 0 ? counter++ * plan.workers + (threadId % plan.workers) : counter++;
  const stats = new Int32Array(plan.stats);
  client.on('response', (_status, _bytes, ms) => {
    const us = Math.round(ms * 1000);
    const slot = us < setupClient.kFine ? us : ms < 10_000 ? setupClient.kFine + Math.floor(ms) - 100 : setupClient.kOverflow;
    Atomics.add(stats, slot, 1);
  });
  const sequence = buildSequence(plan.sequence, index % plan.connections, plan.connections);
  if (plan.checkChange) {
    const onResponse = (status: number, body: string) => {
      if (status !== 200 || !body.startsWith('{"changed":true')) Atomics.add(stats, setupClient.kMismatches, 1);
    };
    for (const request of sequence) request.onResponse = onResponse;
  }
  client.setRequests(sequence);
}

function buildSequence(sequence: setupClient.Sequence, i: number, n: number): setupClient.BenchRequest[] {
  switch (sequence.kind) {
    case 'rotate': {
      const out: setupClient.BenchRequest[] = [];
      for (let k = i; k < sequence.keys; k += n) {
        const key = `user-${k}`;
        out.push({
          method: sequence.method ?? 'GET',
          path: sequence.template.replace('{key}', key),
          ...(sequence.headers ? { headers: sequence.headers } : {}),
          ...(sequence.body === undefined ? {} : { body: sequence.body.replace('{key}', key) }),
        });
      }
      return out;
    }
    case 'fixed':
      return [{ ...sequence.request }];
    case 'patch': {
      const path = `/api/v1/flags/${sequence.flagIds[i % sequence.flagIds.length]!}`;
      const headers = { authorization: `Bearer ${sequence.secret}`, 'content-type': 'application/json' };
      return [
        { method: 'PATCH', path, headers, body: JSON.stringify({ trafficPercentage: sequence.value }) },
        { method: 'PATCH', path, headers, body: JSON.stringify({ trafficPercentage: sequence.value + 1 }) },
      ];
    }
  }
}

namespace setupClient {
  export const kFine = 100_000;
  export const kCoarse = 9_900;
  export const kOverflow = kFine + kCoarse;
  export const kMismatches = kOverflow + 1;
  export const kSlots = kMismatches + 1;

  export interface BenchRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    onResponse?: (status: number, body: string) => void;
  }

  export type Sequence =
    /** Connection i of n takes keys i, i+n, i+2n … (`{key}` in the path template and the body becomes `user-<k>`). */
    | { kind: 'rotate'; template: string; keys: number; method?: string; headers?: Record<string, string>; body?: string }
    | { kind: 'fixed'; request: BenchRequest }
    /** Connection i owns flag i and alternates it between `value` and `value + 1`: every PATCH is a change. */
    | { kind: 'patch'; flagIds: string[]; value: number; secret: string };

  export interface Plan {
    /** Distinguishes runs in this process (the connection counter restarts per run). */
    runId: number;
    /** autocannon worker threads (0: connections run in this thread). */
    workers: number;
    connections: number;
    sequence: Sequence;
    /** Count answers that are not `200 {"changed":true…` as mismatches. */
    checkChange: boolean;
    stats: SharedArrayBuffer;
  }

  export function newStats(): SharedArrayBuffer {
    return new SharedArrayBuffer(kSlots * 4);
  }

  export function total(stats: Int32Array): number {
    let n = 0;
    for (let i = 0; i <= kOverflow; i++) n += stats[i]!;
    return n;
  }

  /** Latency (ms) below which `p` percent of the responses fall (nearest rank); NaN if none. */
  export function percentile(stats: Int32Array, p: number): number {
    const count = total(stats);
    if (count === 0) return Number.NaN;
    const rank = Math.max(1, Math.ceil((p / 100) * count));
    let seen = 0;
    for (let i = 0; i <= kOverflow; i++) {
      seen += stats[i]!;
      if (seen >= rank) return i < kFine ? i / 1000 : i < kOverflow ? 100 + (i - kFine) : 10_000;
    }
    return Number.NaN;
  }

  export function maxLatency(stats: Int32Array): number {
    for (let i = kOverflow; i >= 0; i--) {
      if (stats[i]! > 0) return i < kFine ? i / 1000 : i < kOverflow ? 100 + (i - kFine) : 10_000;
    }
    return Number.NaN;
  }
}

export = setupClient;
