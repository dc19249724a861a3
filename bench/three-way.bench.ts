// The three-way differential of issue 44 (item 5) at full size: one real Flagwire with generated flags,
// and a million generated contexts (ASCII keys), every flag asked of OFREP over HTTP, the Flagwire
// provider and the stock flagd provider (test/sync/three-way.ts; the test file asks 150 contexts).
// Exits non-zero on a difference, which it prints.
// Run: npm run build && node dist/bench/three-way.bench.js [contexts, default 1000000] [flags, default 8] [seed]
import { threeWay } from '../test/sync/three-way.js';

const contexts = Number(process.argv[2] ?? 1_000_000);
const flags = Number(process.argv[3] ?? 8);
const seed = Number(process.argv[4] ?? 44);

const started = process.hrtime.bigint();
const cpu = process.cpuUsage();
const tally = await threeWay({ flags, contexts, seed }, (line) => console.error(line));
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const used = process.cpuUsage(cpu);
console.log(
  `seed ${seed}: ${tally.flags} flags (${tally.omitted} left out of the flag set), ${tally.contexts} contexts: ` +
    `${tally.flagwireCompared} Flagwire provider answers and ${tally.flagdCompared} flagd provider answers compared with OFREP ` +
    `(${tally.flagdSkipped} without a key on a split), ${tally.mismatchCount} differences, in ${seconds.toFixed(0)} s ` +
    `(${((used.user + used.system) / 1e6).toFixed(0)} CPU s in this process)`,
);
for (const line of tally.mismatches) console.log(line);
process.exit(tally.mismatchCount === 0 ? 0 : 1);
