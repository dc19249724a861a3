// The differential check of the flagd flag set (src/sync/flag-set.ts, docs/design.md §2c) at full size:
// a million generated contexts over generated project environments, every served flag of a project
// asked of @openfeature/flagd-core on the built document and of Flagwire's OFREP rules, zero mismatches
// (test/sync/flag-set-differential.ts; the test file asks a twentieth of it, to stay quick on a busy
// machine). Exits non-zero on the first mismatch, which it prints with the fast-check seed to replay.
// Run: npm run build && node dist/bench/flag-set.bench.js [contexts, default 1000000] [seed]
import fc from 'fast-check';
import { checkProject, newTally, projectArb } from '../test/sync/flag-set-differential.js';

const kContexts = Number(process.argv[2] ?? 1_000_000);
const kContextsPerProject = 1000;
const seed = process.argv[3] === undefined ? Date.now() : Number(process.argv[3]);
const projects = Math.ceil(kContexts / kContextsPerProject);

const tally = newTally();
const started = process.hrtime.bigint();
const startedCpu = process.cpuUsage();
fc.assert(
  fc.property(projectArb, (project) => checkProject(project, kContextsPerProject, tally)),
  { numRuns: projects, seed },
);
const ms = Number(process.hrtime.bigint() - started) / 1e6;
const cpu = process.cpuUsage(startedCpu);
console.log(`seed ${seed}: ${tally.projects} projects, ${tally.flags} flags (${tally.omitted} left out)`);
console.log(
  `${tally.contexts} contexts, ${tally.evaluations} evaluations (${tally.keyMissing} without a key on a split): 0 mismatches ` +
    `in ${(ms / 1000).toFixed(1)} s (${((cpu.user + cpu.system) / 1e6).toFixed(1)} CPU s)`,
);
console.log(`OFREP answers: ${JSON.stringify(tally.byReason)}`);
console.log(`reasons flagd gives otherwise (OFREP>flagd): ${JSON.stringify(tally.reasonPairs)}`);
