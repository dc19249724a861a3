// From the recorded runs to one summary per scenario and connection count: medians over rounds, each
// compared with the hello world of its own round.
import type { Options } from './options.js';
import type { ScenarioSummary } from './report.js';
import type { RunRecord } from './runner.js';
import type { ScenarioKey } from './scenarios.js';
import { max, median } from './stats.js';

export function summarise(records: RunRecord[], options: Options): ScenarioSummary[] {
  const out: ScenarioSummary[] = [];
  const hellos = (round: number, connections: number) =>
    records.find((r) => r.key === 'hello' && r.round === round && r.connections === connections);
  for (const connections of options.connections) {
    for (const key of ['hello', ...options.scenarios] as ScenarioKey[]) {
      const runs = records.filter((r) => r.key === key && r.connections === connections);
      if (runs.length === 0) continue;
      const ratios = runs.map((r) => r.load.rps / (hellos(r.round, connections)?.load.rps ?? Number.NaN));
      const byRps = [...runs].sort((x, y) => x.load.rps - y.load.rps);
      const mid = byRps[(byRps.length - 1) >> 1]!;
      const codes: Record<string, number> = {};
      for (const r of runs) for (const [c, n] of Object.entries(r.load.statusCodes)) codes[c] = (codes[c] ?? 0) + n;
      const summary: ScenarioSummary = {
        key,
        connections,
        rounds: runs.length,
        rps: median(runs.map((r) => r.load.rps)),
        helloRps: median(runs.map((r) => hellos(r.round, connections)?.load.rps ?? Number.NaN)),
        ratio: median(ratios),
        p50Ms: median(runs.map((r) => r.load.p50Ms)),
        p99Ms: median(runs.map((r) => r.load.p99Ms)),
        serverCpu: median(runs.map((r) => r.m.serverCpu)),
        serverThreads: mid.m.serverThreads,
        serverUsPerRequest: median(runs.map((r) => usPerRequest(r, r.m.serverCpu))),
        generatorUsPerRequest: median(runs.map((r) => usPerRequest(r, r.m.generatorCpu))),
        threadUsPerRequest: Object.fromEntries(Object.entries(mid.m.serverThreads).map(([t, p]) => [t, usPerRequest(mid, p)])),
        generatorCpu: median(runs.map((r) => r.m.generatorCpu)),
        peakRssMb: max(runs.map((r) => r.m.peakRssKb)) / 1024,
        errors: runs.reduce((n, r) => n + r.load.errors, 0),
        non2xx: runs.reduce((n, r) => n + r.load.non2xx, 0),
        mismatches: runs.reduce((n, r) => n + r.load.mismatches, 0),
        statusCodes: codes,
      };
      if (key === 'f') {
        const w = runs.map((r) => r.writes!).filter(Boolean);
        summary.writes = {
          rps: median(w.map((x) => x.rps)),
          p50Ms: median(w.map((x) => x.p50Ms)),
          p99Ms: median(w.map((x) => x.p99Ms)),
          non2xx: w.reduce((n, x) => n + x.non2xx, 0),
          errors: w.reduce((n, x) => n + x.errors, 0),
          mismatches: w.reduce((n, x) => n + x.mismatches, 0),
        };
        const withoutWrites = runs.map(
          (r) => records.find((x) => x.key === 'a' && x.round === r.round && x.connections === connections)?.load.p99Ms ?? Number.NaN,
        );
        summary.p99WithoutWritesMs = median(withoutWrites);
      }
      out.push(summary);
    }
  }
  return out;
}

/** CPU µs per answered request from a % of one core over the run ((f): evaluations and writes together). */
export function usPerRequest(r: RunRecord, percent: number): number {
  const answered = r.load.requests + (r.writes?.requests ?? 0);
  return answered === 0 ? Number.NaN : ((percent / 100) * r.m.seconds * 1e6) / answered;
}

/** Median over rounds of measure(x) ÷ measure(y) in the same round and connection count (default: req/s). */
export function pairedRatio(
  records: RunRecord[],
  x: ScenarioKey,
  y: ScenarioKey,
  connections: number,
  measure = (r: RunRecord) => r.load.rps,
): number {
  const ratios: number[] = [];
  for (const rx of records.filter((r) => r.key === x && r.connections === connections)) {
    const ry = records.find((r) => r.key === y && r.round === rx.round && r.connections === connections);
    if (ry) ratios.push(measure(rx) / measure(ry));
  }
  return ratios.length === 0 ? Number.NaN : median(ratios);
}
