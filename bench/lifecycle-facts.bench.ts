// What one flag's lifecycle read costs (GET /api/v1/flags/{id}/lifecycle: src/flags/lifecycle-facts.ts
// flagLifecycle) in a large project: `flags` flags, a scan of `branches` branches naming every flag once,
// read `reads` times in process. "kept": through one reader, as a front end reads, so the project's facts
// (what its flag sets serve, its scans' references) are derived once and kept while nothing moves;
// "derived per read": a fresh reader each time, so they are derived anew, as every read did before they
// were kept. Prints each one's median and 99th percentile in microseconds, and their ratio.
// Run: npm run build && node dist/bench/lifecycle-facts.bench.js [--flags 2000] [--branches 5] [--reads 2000]
import { parseArgs } from 'node:util';
import { kOperator } from '../src/actor/audit-actor.js';
import { flagLifecycle } from '../src/flags/lifecycle-facts.js';
import { findFlagByName } from '../src/flags/records/flag-store.js';
import { runCommand } from '../src/writer/thread/commands.js';
import { getProject } from '../src/model/records/project-records.js';
import { jsonBody } from '../src/model/request-body.js';
import type { StoreReader } from '../src/store/interfaces.js';
import { tempDataDir } from '../test/helpers/server.js';
import { buildWorld } from '../test/helpers/world.js';
import { literalReference } from '../test/helpers/code-ref-push.js';

const { values } = parseArgs({
  options: {
    flags: { type: 'string', default: '2000' },
    branches: { type: 'string', default: '5' },
    reads: { type: 'string', default: '2000' },
  },
});
const flags = Number(values.flags);
const branches = Number(values.branches);
const reads = Number(values.reads);

const world = buildWorld(tempDataDir());
const projectId = world.ids.single;
const names = Array.from({ length: flags }, (_, i) => `bench-flag-${i}`);
// Every flag in one transaction per hundred: the bench measures reads, not the seeding.
for (let i = 0; i < flags; i += 100) {
  world.store.transact((w) => {
    for (const name of names.slice(i, i + 100))
      runCommand(w, 'flagCreate', { projectId, principal: kOperator, body: { name, enabled: true, trafficPercentage: 100 } }, Date.now());
  });
}
for (let b = 0; b < branches; b++) {
  const references = names.map((key, i) => literalReference(key, i + 1, `src/f${i % 50}.ts`));
  world.run('codeRefsPush', {
    principal: kOperator,
    projectId,
    received: jsonBody(JSON.stringify({ repository: 'acme/app', branch: `b${b}`, commit: 'c1', references })),
  });
}
world.store.resetReadTxn();
const project = getProject(world.store, projectId)!;
const flag = findFlagByName(world.store, projectId, names[flags >> 1]!)!;
const now = Date.now();

/** A reader of the same snapshot that no facts were kept for: each read derives them anew. */
const fresh = (): StoreReader => new Proxy(world.store, {}) as StoreReader;

function measure(reader: () => StoreReader): number[] {
  const micros: number[] = [];
  for (let i = 0; i < reads; i++) {
    const start = process.hrtime.bigint();
    flagLifecycle(reader(), flag, project, now);
    micros.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  return micros.sort((a, b) => a - b);
}
const at = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

const kept = world.store;
measure(() => kept); // warm-up: the first read derives the facts, and the code is compiled
const derived = measure(fresh);
const keptMicros = measure(() => kept);
console.log(`${flags} flags, ${branches} branches scanned (${flags * branches} references), ${reads} reads of one flag's lifecycle`);
console.log(`derived per read: median ${at(derived, 0.5).toFixed(1)} µs, p99 ${at(derived, 0.99).toFixed(1)} µs`);
console.log(`kept:             median ${at(keptMicros, 0.5).toFixed(1)} µs, p99 ${at(keptMicros, 0.99).toFixed(1)} µs`);
console.log(`ratio at the median: ${(at(derived, 0.5) / at(keptMicros, 0.5)).toFixed(0)}x`);
world.store.close();
