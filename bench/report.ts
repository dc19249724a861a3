// Turns a bench run into the RESULTS.md section, the SVG chart, the raw figures in bench/out/ and the
// table on stdout. RESULTS.md may hold hand-written notes (profiles, before/after figures): only the
// block between this run's markers is replaced,
//   <!-- bench:LABEL:begin --> … <!-- bench:LABEL:end -->
// and a label that is not in the file yet is appended, so variants (e.g. `--label workers-2`) sit
// side by side with the main run.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kRepo } from './locations.js';
import { log } from './log.js';
import type { MicroResult } from './micro.js';
import { kScenarios, type ScenarioKey } from './scenarios.js';

export interface ScenarioSummary {
  key: ScenarioKey;
  connections: number;
  rounds: number;
  /** Medians over rounds. */
  rps: number;
  helloRps: number;
  /** Median of the per-round ratios to the hello world of the same round and connection count. */
  ratio: number;
  p50Ms: number;
  p99Ms: number;
  /** % of one core. */
  serverCpu: number;
  /** The busiest server threads in the median round, % of one core. */
  serverThreads: Record<string, number>;
  /** CPU per answered request (median over rounds), µs: the cost, whatever else shares the cores. */
  serverUsPerRequest: number;
  generatorUsPerRequest: number;
  /** Per thread, in the median round, µs per request. */
  threadUsPerRequest: Record<string, number>;
  generatorCpu: number;
  /** Max over rounds, MiB. */
  peakRssMb: number;
  /** Sums over rounds. */
  errors: number;
  non2xx: number;
  mismatches: number;
  statusCodes: Record<string, number>;
  /** (f): the writes running beside the evaluations, and (a)'s p99 in the same rounds. */
  writes?: { rps: number; p50Ms: number; p99Ms: number; non2xx: number; errors: number; mismatches: number };
  p99WithoutWritesMs?: number;
}

export interface Target {
  what: string;
  goal: string;
  measured: string;
  met: boolean | null;
}

export interface Report {
  label: string;
  mode: string;
  date: string;
  command: string;
  machine: Record<string, string>;
  versions: Record<string, string>;
  settings: Record<string, string>;
  dataset: string;
  summaries: ScenarioSummary[];
  targets: Target[];
  notes: string[];
  micro: MicroResult[];
  chartFile: string;
  failed: string[];
}

const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en') : '–');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '–');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '–');
const pct = (n: number) => (Number.isFinite(n) ? `${Math.round(n)}%` : '–');

export function renderMarkdown(r: Report): string {
  const lines: string[] = [];
  lines.push(`### Run \`${r.label}\` (${r.mode}, ${r.date})`, '');
  if (r.failed.length > 0) lines.push(`**FAILED:** ${r.failed.join('; ')}`, '');
  lines.push('Command:', '', '```sh', r.command, '```', '');
  lines.push(
    `Machine: ${Object.entries(r.machine)
      .map(([k, v]) => `${k} ${v}`)
      .join(' · ')}  `,
  );
  lines.push(
    `Versions: ${Object.entries(r.versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(' · ')}  `,
  );
  lines.push(
    `Settings: ${Object.entries(r.settings)
      .map(([k, v]) => `${k} ${v}`)
      .join(' · ')}  `,
  );
  lines.push(`Data set: ${r.dataset}`, '');
  lines.push(
    '| scenario | conns | req/s (median) | vs hello | p50 ms | p99 ms | server CPU | server µs/req | server peak RSS | generator CPU | generator µs/req | errors / non-2xx |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const s of r.summaries) {
    const bad = `${s.errors} / ${s.non2xx}${s.mismatches > 0 ? ` (+${s.mismatches} mismatched)` : ''}`;
    lines.push(
      `| ${kScenarios[s.key].title} | ${s.connections} | ${f0(s.rps)} | ${s.key === 'hello' ? '1.00' : !kScenarios[s.key].vsHello ? '–' : f2(s.ratio)} | ${f2(s.p50Ms)} | ${f2(s.p99Ms)} | ${pct(s.serverCpu)} | ${f1(s.serverUsPerRequest)} | ${f0(s.peakRssMb)} MiB | ${pct(s.generatorCpu)} | ${f1(s.generatorUsPerRequest)} | ${bad} |`,
    );
  }
  lines.push(
    '',
    'CPU is % of one core (this machine has ' +
      (r.machine.cores ?? '?') +
      '); µs/req is CPU time per answered request, ' +
      'a cost that holds however the cores are shared. "vs hello" is the median over rounds of ' +
      'scenario req/s ÷ hello-world req/s measured in the same round at the same connection count.',
    '',
  );

  const mixed = r.summaries.filter((s) => s.key === 'f' && s.writes);
  if (mixed.length > 0) {
    lines.push(
      'Mixed run (f):',
      '',
      '| conns | eval req/s | eval p99 with writes | eval p99 without (a) | factor | writes/s | write p50 / p99 ms | write non-2xx / not changed |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const s of mixed) {
      const w = s.writes!;
      lines.push(
        `| ${s.connections} | ${f0(s.rps)} | ${f2(s.p99Ms)} | ${f2(s.p99WithoutWritesMs ?? Number.NaN)} | ${f2(s.p99Ms / (s.p99WithoutWritesMs ?? Number.NaN))} | ${f0(w.rps)} | ${f2(w.p50Ms)} / ${f2(w.p99Ms)} | ${w.non2xx} / ${w.mismatches} |`,
      );
    }
    lines.push('');
  }

  const threads = r.summaries.filter((s) => s.key !== 'hello' && Object.keys(s.serverThreads).length > 0);
  if (threads.length > 0) {
    lines.push(
      'Where the server CPU goes, per thread of the Flagwire process (above 2% of a core; median round): CPU µs per request ' +
        '(and % of a core). `main` is the uWS thread, `eval`/`writer` were recognised in the warm-up, `tNNN` are other threads ' +
        '(libuv pool, V8 GC and compiler):',
      '',
    );
    for (const s of threads) {
      lines.push(
        `- ${s.key} @${s.connections}: ${Object.entries(s.serverThreads)
          .map(([t, p]) => `${t} ${f1(s.threadUsPerRequest[t] ?? Number.NaN)} µs (${p}%)`)
          .join(', ')}`,
      );
    }
    lines.push('');
  }

  lines.push('Targets (issue 7):', '', '| target | goal | measured | met |', '|---|---|---|---|');
  for (const t of r.targets) lines.push(`| ${t.what} | ${t.goal} | ${t.measured} | ${t.met === null ? 'n/a' : t.met ? 'yes' : '**no**'} |`);
  lines.push('');
  if (r.notes.length > 0) {
    for (const note of r.notes) lines.push(`- ${note}`);
    lines.push('');
  }
  lines.push(`![req/s per scenario against the hello world](${r.chartFile})`, '');
  for (const m of r.micro) lines.push(`Micro-bench \`${m.name}\`:`, '', '```', m.output.trimEnd(), '```', '');
  return lines.join('\n');
}

/** Replaces (or appends) this label's block in `file`, keeping everything else. */
export function writeResultsFile(file: string, label: string, section: string): void {
  const begin = `<!-- bench:${label}:begin -->`;
  const end = `<!-- bench:${label}:end -->`;
  const block = `${begin}\n${section}\n${end}`;
  let text = existsSync(file)
    ? readFileSync(file, 'utf8')
    : '# Flagwire bench results\n\nProduced by `npm run bench` (bench/run.ts); each run replaces its own block below, notes outside the blocks are kept.\n\n';
  const at = text.indexOf(begin);
  const until = text.indexOf(end);
  if (at !== -1 && until > at) text = text.slice(0, at) + block + text.slice(until + end.length);
  else text = `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, text);
}

/**
 * Writes this run's block of RESULTS.md and its chart into `outDir`, and `raw` (every figure, per
 * thread and per round) into bench/out/.
 */
export function writeReport(outDir: string, report: Report, raw: Record<string, unknown>): void {
  mkdirSync(outDir, { recursive: true });
  writeResultsFile(join(outDir, 'RESULTS.md'), report.label, renderMarkdown(report));
  writeFileSync(join(outDir, report.chartFile), renderSvg(report));
  const rawDir = join(kRepo, 'bench', 'out');
  mkdirSync(rawDir, { recursive: true });
  const rawFile = join(rawDir, `${report.label}-${report.date.replace(/[:]/g, '')}.json`);
  writeFileSync(rawFile, JSON.stringify(raw, null, 2));
  log(`wrote ${join(outDir, 'RESULTS.md')} (block "${report.label}"), ${join(outDir, report.chartFile)}, ${rawFile}`);
}

/** The summaries and targets on stdout. */
export function printTable(summaries: ScenarioSummary[], targets: Target[]): void {
  const rows = summaries.map(
    (s) =>
      `${s.key.padEnd(5)} @${String(s.connections).padEnd(4)} ${Math.round(s.rps).toString().padStart(7)} req/s  ${s.key === 'hello' ? '     ' : s.ratio.toFixed(2).padStart(5)}  p50 ${s.p50Ms.toFixed(2)}  p99 ${s.p99Ms.toFixed(2)} ms  ` +
      `server ${Math.round(s.serverCpu)}% ${s.serverUsPerRequest.toFixed(1)} µs/req  gen ${Math.round(s.generatorCpu)}% ${s.generatorUsPerRequest.toFixed(1)} µs/req  peak ${Math.round(s.peakRssMb)} MiB  non2xx ${s.non2xx}`,
  );
  process.stdout.write(
    `${rows.join('\n')}\n\n${targets.map((t) => `${t.met === null ? ' n/a' : t.met ? '  ok' : 'MISS'}  ${t.what}: ${t.measured} (goal ${t.goal})`).join('\n')}\n`,
  );
}

// ---- SVG: grouped bars, one group per scenario, one bar per connection count --------------------

const kColours = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759'];

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function renderSvg(r: Report): string {
  const keys = [...new Set(r.summaries.map((s) => s.key))];
  const conns = [...new Set(r.summaries.map((s) => s.connections))].sort((a, b) => a - b);
  const top = Math.max(1, ...r.summaries.map((s) => (Number.isFinite(s.rps) ? s.rps : 0)));
  const scale = niceCeiling(top);
  const width = Math.max(760, 180 + keys.length * (conns.length * 34 + 30));
  const plotTop = 60;
  const plotBottom = 300;
  const height = plotBottom + 60 + Math.max(conns.length * 18, keys.length * 14);
  const left = 80;
  const y = (v: number) => plotBottom - (v / scale) * (plotBottom - plotTop);
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
  );
  out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  out.push(
    `<text x="${left}" y="24" font-size="15" font-weight="bold">Flagwire against a uWS hello world: median req/s per scenario</text>`,
  );
  out.push(
    `<text x="${left}" y="42" fill="#555">${escapeXml(`run "${r.label}", ${r.mode.split(',')[0]}; ${r.machine.cores ?? '?'} cores, ${r.machine.cpu ?? ''}, Node ${r.machine.node ?? ''}; above a bar: share of the hello world ((e): changes/s)`)}</text>`,
  );
  for (let i = 0; i <= 5; i++) {
    const v = (scale / 5) * i;
    out.push(`<line x1="${left}" x2="${width - 20}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#ddd"/>`);
    out.push(`<text x="${left - 8}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${f0(v)}</text>`);
  }
  let x = left + 20;
  for (const key of keys) {
    const groupStart = x;
    for (let c = 0; c < conns.length; c++) {
      const s = r.summaries.find((e) => e.key === key && e.connections === conns[c]);
      if (s && Number.isFinite(s.rps)) {
        const top = y(s.rps).toFixed(1);
        const h = (plotBottom - y(s.rps)).toFixed(1);
        out.push(
          `<rect x="${x}" y="${top}" width="28" height="${h}" fill="${kColours[c % kColours.length]}"><title>${escapeXml(`${kScenarios[key].title} @${conns[c]}: ${f0(s.rps)} req/s`)}</title></rect>`,
        );
        const label = key === 'hello' || !kScenarios[key].vsHello ? `${(s.rps / 1000).toFixed(1)}k` : `${Math.round(s.ratio * 100)}%`;
        out.push(`<text x="${x + 14}" y="${(y(s.rps) - 4).toFixed(1)}" text-anchor="middle" font-size="10">${label}</text>`);
      }
      x += 34;
    }
    const name = key === 'hello' ? 'hello' : `(${key})`;
    out.push(`<text x="${(groupStart + x - 6) / 2}" y="${plotBottom + 18}" text-anchor="middle">${name}</text>`);
    x += 30;
  }
  out.push(`<line x1="${left}" x2="${width - 20}" y1="${plotBottom}" y2="${plotBottom}" stroke="#333"/>`);
  let ly = plotBottom + 44;
  conns.forEach((c, i) => {
    out.push(`<rect x="${left}" y="${ly - 10}" width="12" height="12" fill="${kColours[i % kColours.length]}"/>`);
    out.push(`<text x="${left + 18}" y="${ly}">${c} connections</text>`);
    ly += 18;
  });
  let ky = plotBottom + 44;
  for (const key of keys) {
    out.push(`<text x="${left + 160}" y="${ky}" fill="#333">${escapeXml(kScenarios[key].title)}</text>`);
    ky += 14;
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

function niceCeiling(v: number): number {
  const magnitude = 10 ** Math.floor(Math.log10(v));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * magnitude >= v) return step * magnitude;
  return 10 * magnitude;
}
