// What a run's summaries say against the targets of issue 7, what made the run fail, and the notes that
// help read it.
import { availableParallelism } from 'node:os';
import type { Visibility } from './checks.js';
import type { RssSplit } from './processes.js';
import type { ScenarioSummary, Target } from './report.js';
import type { RunRecord, Rounds } from './runner.js';
import { kLatencyRate, kMixedWriteConnections, kMixedWriteRate, type ScenarioKey } from './scenarios.js';
import { median } from './stats.js';
import { pairedRatio, usPerRequest } from './summaries.js';

const pctText = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;

/** Server CPU µs per answered request of one run. */
const serverUs = (r: RunRecord) => usPerRequest(r, r.m.serverCpu);

/**
 * A twin pair's cost of one feature, as the paired median of server CPU per request (on ÷ off − 1),
 * with the req/s ratio beside it. CPU per request is what the feature costs whatever the generator
 * does; req/s between identical twins moves by several % from round to round on 2 shared cores.
 */
function twinCost(records: RunRecord[], on: ScenarioKey, off: ScenarioKey, c: number): { cost: number; text: string } {
  const cost = pairedRatio(records, on, off, c, serverUs) - 1;
  const rps = pairedRatio(records, on, off, c);
  const us = (key: ScenarioKey) => median(records.filter((r) => r.key === key && r.connections === c).map(serverUs));
  return {
    cost,
    text: `${pctText(cost)} server CPU per request (${us(on).toFixed(1)} vs ${us(off).toFixed(1)} µs); req/s ${rps.toFixed(3)}×`,
  };
}

export function checkTargets(
  { records, rssAfterA, rssGrowthInA }: Rounds,
  summaries: ScenarioSummary[],
  visibility: Visibility,
  warm: RssSplit,
): Target[] {
  const find = (key: ScenarioKey, c: number) => summaries.find((s) => s.key === key && s.connections === c);
  const targets: Target[] = [];
  const conns = [...new Set(summaries.map((s) => s.connections))];
  for (const [key, goal] of [
    ['a', 0.6],
    ['b', 0.55],
    ['d', 0.35],
  ] as const) {
    for (const c of conns) {
      const s = find(key, c);
      if (!s) continue;
      targets.push({
        what: `(${key}) req/s vs hello @${c}`,
        goal: `≥ ${goal.toFixed(2)}`,
        measured: s.ratio.toFixed(2),
        met: s.ratio >= goal,
      });
    }
  }
  const a200 = find('a', 200);
  // Latency is measured by the generator: when it saturates, its own queueing is in every figure, so
  // the hello world's p99 in the same rounds is the floor to read (a)'s against.
  const hello200 = find('hello', 200);
  const l200 = find('l', 200);
  const m200 = find('m', 200);
  if (a200) {
    const closed = `closed loop ${a200.p99Ms.toFixed(2)} ms (Little's law floor for the mean: 200 ÷ ${Math.round(a200.rps).toLocaleString('en')} req/s = ${(200_000 / a200.rps).toFixed(1)} ms${hello200 ? `; hello world in the same rounds ${hello200.p99Ms.toFixed(2)} ms` : ''})`;
    const floor = m200
      ? ` (the hello world under the same paced load (m): p50 ${m200.p50Ms.toFixed(2)}, p99 ${m200.p99Ms.toFixed(2)} ms)`
      : '';
    targets.push({
      what: '(a) p99 @200',
      goal: '≤ 5 ms',
      measured: l200 ? `${l200.p99Ms.toFixed(2)} ms at ${kLatencyRate.toLocaleString('en')} req/s offered (l)${floor}; ${closed}` : closed,
      met: (l200 ?? a200).p99Ms <= 5,
    });
  }
  for (const c of conns) {
    if (find('g', c) && find('a', c)) {
      targets.push({
        what: `(g) OFREP req/s vs (a) GET @${c}`,
        goal: 'shown beside (a)',
        measured: pairedRatio(records, 'g', 'a', c).toFixed(2),
        met: null,
      });
    }
    if (find('h', c) && find('i', c)) {
      const { cost, text } = twinCost(records, 'h', 'i', c);
      targets.push({
        what: `metrics cost: (h) metrics on vs (i) off @${c}`,
        goal: 'counting costs ≤ 3%',
        measured: text,
        met: cost <= 0.03,
      });
    }
    if (find('j', c) && find('k', c)) {
      const { text } = twinCost(records, 'j', 'k', c);
      targets.push({
        what: `rate limiter cost: (j) on vs (k) off, GET /api/v1/token @${c}`,
        goal: 'shown (issue 6)',
        measured: text,
        met: null,
      });
    }
  }
  const e50 = find('e', 50);
  if (e50) {
    targets.push({
      what: '(e) durable changes/s @50',
      goal: '≥ 3,000, every one a change, visible at once',
      measured: `${Math.round(e50.rps).toLocaleString('en')}/s, ${e50.mismatches} not changed, ${e50.non2xx} non-2xx; ${visibility.stale} stale of ${visibility.checks}`,
      met: e50.rps >= 3000 && e50.mismatches === 0 && e50.non2xx === 0 && visibility.stale === 0,
    });
  }
  for (const s of summaries.filter((x) => x.key === 'f')) {
    const factor = s.p99Ms / (s.p99WithoutWritesMs ?? Number.NaN);
    targets.push({
      what: `(f) eval p99 with writes vs without @${s.connections}`,
      goal: '≤ 1.5×',
      measured: `${s.p99Ms.toFixed(2)} / ${(s.p99WithoutWritesMs ?? Number.NaN).toFixed(2)} ms = ${factor.toFixed(2)}×`,
      met: Number.isFinite(factor) ? factor <= 1.5 : null,
    });
  }
  if (rssAfterA.length > 0) {
    // The target is about the process's own memory (heaps, buffers, native allocations): anonymous
    // RSS. File-backed RSS is mostly the memory-mapped data file, whose touched pages grow with the
    // data the (e)/(f) writes add (every PATCH adds an audit entry), not with load; it is shown beside.
    const worst = rssAfterA.reduce((a, b) => (b.anon > a.anon ? b : a));
    const growth = worst.anon / warm.anon - 1;
    const mb = (kb: number) => Math.round(kb / 1024);
    targets.push({
      what: "RSS after (a) vs after warm-up (anonymous: the process's own memory)",
      goal: 'within 10%',
      measured:
        `anonymous ${mb(warm.anon)} → ${mb(worst.anon)} MiB (${pctText(growth)}); total ${mb(warm.rss)} → ${mb(worst.rss)} MiB, of which file-backed ` +
        `(the LMDB map, grown by the data the writes added) ${mb(warm.file)} → ${mb(worst.file)}; total RSS over the (a) runs alone at most ${pctText(Math.max(...rssGrowthInA))}`,
      met: Math.abs(growth) <= 0.1,
    });
  }
  return targets;
}

function generatorNotes(summaries: ScenarioSummary[]): string[] {
  const notes: string[] = [];
  const cores = availableParallelism();
  for (const hello of summaries.filter((x) => x.key === 'hello')) {
    const gen = hello.generatorUsPerRequest;
    if (hello.generatorCpu >= 85) {
      notes.push(
        `Generator-bound @${hello.connections}: autocannon used ${Math.round(hello.generatorCpu)}% of a core in the hello-world runs ` +
          `(${gen.toFixed(1)} µs of generator CPU per request, a ceiling of about ${Math.round(1e6 / gen).toLocaleString('en')} req/s for one thread) ` +
          `while the hello world used ${Math.round(hello.serverCpu)}%. The hello-world figure is then the generator's ceiling, not uWS's, and the ratios ` +
          "are relative to it: they overstate Flagwire's share of a uWS server driven by a native tool such as wrk. " +
          `On ${cores} cores more generator threads (--generator-workers) take CPU from the server under test; compare with such a run before concluding.`,
      );
    }
    const a = summaries.find((x) => x.key === 'a' && x.connections === hello.connections);
    if (a) {
      const threads = Object.entries(a.threadUsPerRequest)
        .map(([t, us]) => `${t} ${us.toFixed(1)}`)
        .join(' + ');
      notes.push(
        `Cost per request @${hello.connections} (CPU µs, independent of how the cores are shared): hello world ${hello.serverUsPerRequest.toFixed(1)}; ` +
          `Flagwire (a) ${a.serverUsPerRequest.toFixed(1)} (${threads}); the generator ${gen.toFixed(1)} (hello) / ${a.generatorUsPerRequest.toFixed(1)} ((a)). ` +
          `With all of it on ${cores} cores, CPU alone bounds the hello world at ≈ ${Math.round((cores * 1e6) / (hello.serverUsPerRequest + gen)).toLocaleString('en')} req/s ` +
          `and (a) at ≈ ${Math.round((cores * 1e6) / (a.serverUsPerRequest + a.generatorUsPerRequest)).toLocaleString('en')} req/s.`,
      );
    }
  }
  return notes;
}

/** Why the run fails (exit 1): any non-2xx or error in a scenario but the hello world's and (e)'s, or a stale read. */
export function failures(summaries: ScenarioSummary[], visibility: Visibility): string[] {
  const failed: string[] = [];
  for (const s of summaries) {
    if (s.key !== 'hello' && s.key !== 'e' && (s.non2xx > 0 || s.errors > 0)) {
      failed.push(`(${s.key}) @${s.connections}: ${s.non2xx} non-2xx, ${s.errors} errors (${JSON.stringify(s.statusCodes)})`);
    }
  }
  if (visibility.stale > 0) failed.push(`read-your-writes: ${visibility.stale} stale evaluations after an acknowledged PATCH`);
  return failed;
}

/** The notes under the targets: the generator's share, the read-your-writes check, and how (e) and (f) write. */
export function summaryNotes(summaries: ScenarioSummary[], visibility: Visibility): string[] {
  return [
    ...generatorNotes(summaries),
    `Read-your-writes check (sequential PATCH then evaluation, ${visibility.checks} times): ${visibility.stale} stale; single PATCH round trip p50 ${visibility.patchP50Ms.toFixed(2)} ms (one durable commit).`,
    `(e) alternates each connection's own flag between two trafficPercentage values (they move on each write run, so every PATCH is a real change); "mismatched" counts answers that were not \`{"changed":true…}\`. (f) runs ${kMixedWriteConnections} write connections at ${kMixedWriteRate} PATCH/s in total beside (a).`,
  ];
}
