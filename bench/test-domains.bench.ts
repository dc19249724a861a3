// What a test's error domain costs the test process's promises (bench/RESULTS.md, test-domains.bench): a
// million awaited calls, made inside a domain as tap makes one for each test, with no domain, with
// async-hook-domain's (the package tap imports) and with scripts/tap-domain.mjs's (what the test bundle
// gives tap instead). Each in a fresh process, `runs` times in turn; the process's CPU (user + system) of
// the loop as minimum / median / maximum.
// Run: npm run build && node dist/bench/test-domains.bench.js [--runs N]
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { machineInfo } from './environment.js';
import { median } from './stats.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const kRuns = Number(values.runs);
const kCalls = 1_000_000;

/** The module each variant takes `Domain` from; null: none made. */
const kVariants: [string, string | null][] = [
  ['no domain', null],
  ['async-hook-domain (the package)', 'async-hook-domain'],
  ['scripts/tap-domain.mjs (the stand-in)', pathToFileURL(fileURLToPath(new URL('../../scripts/tap-domain.mjs', import.meta.url))).href],
];

/** The child's code: the loop's CPU in ms, printed. */
const program = (from: string | null) => `
${from === null ? '' : `const { Domain } = await import(${JSON.stringify(from)}); new Domain(() => {});`}
async function call(i) { await null; return i; }
const before = process.cpuUsage();
let sum = 0;
for (let i = 0; i < ${kCalls}; i++) sum += await call(i);
const used = process.cpuUsage(before);
console.log((used.user + used.system) / 1000);
`;

const figures = new Map<string, number[]>(kVariants.map(([name]) => [name, []]));
const loadBefore = loadavg()[0]!;
for (let run = 0; run < kRuns; run++) {
  for (const [name, from] of kVariants) {
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', program(from)], { encoding: 'utf8' });
    if (child.status !== 0) throw new Error(`${name}: ${child.stderr}`);
    figures.get(name)!.push(Number(child.stdout.trim()));
  }
}
console.log(
  `# ${JSON.stringify(machineInfo())}; ${kCalls.toLocaleString('en')} awaited calls, ${kRuns} runs each; load ${loadBefore.toFixed(1)}-${loadavg()[0]!.toFixed(1)}`,
);
console.log('| domain | CPU ms (min / median / max) |');
console.log('|---|---:|');
for (const [name, xs] of figures) {
  console.log(`| ${name} | ${Math.round(Math.min(...xs))} / ${Math.round(median(xs))} / ${Math.round(Math.max(...xs))} |`);
}
