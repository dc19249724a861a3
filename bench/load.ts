// One autocannon run through its programmatic API. Connections run in this process, or with
// `generatorWorkers` > 0 in that many autocannon worker threads (still this process: the generator's
// CPU is this process's CPU). Connection setup, request sequences and latency recording are in
// ac-client.cts, shared by both modes.
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import setupClient from './ac-client.cjs';

export type Sequence = setupClient.Sequence;

export interface LoadSpec {
  /** Origin, e.g. http://127.0.0.1:8080. */
  url: string;
  connections: number;
  durationSec: number;
  sequence: Sequence;
  /** Requests per second over all connections (open-model load); unset: as fast as answered. */
  overallRate?: number;
  /** Count answers other than `200 {"changed":true…` as mismatches (PATCH runs). */
  checkChange?: boolean;
  /** autocannon worker threads; 0 or unset: this thread. */
  generatorWorkers?: number;
}

export interface LoadResult {
  connections: number;
  durationSec: number;
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  mismatches: number;
  statusCodes: Record<string, number>;
}

const kClientFile = fileURLToPath(new URL('./ac-client.cjs', import.meta.url));
let runs = 0;

export function runLoad(spec: LoadSpec): { result: Promise<LoadResult>; stop(): void } {
  const workers = spec.generatorWorkers ?? 0;
  const statsBuffer = setupClient.newStats();
  const plan: setupClient.Plan = {
    runId: ++runs,
    workers,
    connections: spec.connections,
    sequence: spec.sequence,
    checkChange: spec.checkChange ?? false,
    stats: statsBuffer,
  };
  let settle!: (err: Error | null, r: autocannon.Result) => void;
  const result = new Promise<LoadResult>((resolve, reject) => {
    settle = (err, r) => {
      if (err) return reject(err);
      const stats = new Int32Array(statsBuffer);
      const codes: Record<string, number> = {};
      for (const [code, { count }] of Object.entries(r.statusCodeStats)) codes[code] = count;
      const seconds = r.duration > 0 ? r.duration : spec.durationSec;
      const requests = setupClient.total(stats);
      resolve({
        connections: spec.connections,
        durationSec: seconds,
        requests,
        rps: requests / seconds,
        p50Ms: setupClient.percentile(stats, 50),
        p99Ms: setupClient.percentile(stats, 99),
        maxMs: setupClient.maxLatency(stats),
        errors: r.errors,
        timeouts: r.timeouts,
        non2xx: r.non2xx,
        mismatches: stats[setupClient.kMismatches]!,
        statusCodes: codes,
      });
    };
  });
  const instance = autocannon(
    {
      url: spec.url,
      connections: spec.connections,
      duration: spec.durationSec,
      // The request autocannon builds before setupClient gives the connection its own sequence; it
      // carries the plan to setupClient (and into autocannon's workers).
      requests: [{ method: 'GET', path: '/', plan } as autocannon.Request],
      setupClient: workers > 0 ? kClientFile : (setupClient as unknown as (client: autocannon.Client) => void),
      ...(workers > 0 ? { workers } : {}),
      ...(spec.overallRate === undefined ? {} : { overallRate: spec.overallRate }),
    },
    (err, r) => settle(err, r),
  );
  return { result, stop: () => instance.stop() };
}

/**
 * The neighbour benches' victim: another project's OFREP evaluations (the demo's platform project, 10,000
 * targeting keys in turn) on a generator thread of its own, so that the attack's large bodies and
 * answers, sent and read on the bench's main thread, never delay the victim's requests there.
 */
export function victimLoad(base: string, connections: number, durationSec: number): { result: Promise<LoadResult>; stop(): void } {
  return runLoad({
    url: base,
    connections,
    durationSec,
    generatorWorkers: 1,
    sequence: {
      kind: 'rotate',
      template: '/ofrep/v1/evaluate/flags/search-v2',
      keys: 10_000,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-flagwire-project': 'prj_DemoPlatform' },
      body: JSON.stringify({ context: { targetingKey: '{key}', env: 'production', country: 'NL' } }),
    },
  });
}
