// An application configured by the OpenFeature Operator for in-process evaluation (issue 97, item 4:
// "converges on a change made through the Management API, p99 within 1 s"): the stock flagd provider in
// a process whose only configuration is the environment the operator injects for
// deploy/kubernetes/openfeature-operator's InProcessConfiguration, against a real Flagwire; a flag toggled
// through the Management API `changes` times, each timed from sending its PATCH to the provider's answer
// changing (test/helpers/operator-convergence.ts; the test file checks 50 changes all arrive).
// Run: npm run build && node dist/bench/operator-in-process.bench.js [changes, default 500]
import { loadavg } from 'node:os';
import { operatorConvergence } from '../test/helpers/operator-convergence.js';
import { machineInfo } from './environment.js';
import { max, median, percentile } from './stats.js';

const changes = Number(process.argv[2] ?? 500);
const load = loadavg()[0]!.toFixed(1);
const { latenciesMs } = await operatorConvergence(changes);
const sorted = [...latenciesMs].sort((a, b) => a - b);
const p99 = percentile(sorted, 99);
console.log(JSON.stringify(machineInfo()));
console.log(
  `${sorted.length} changes: p50 ${median(sorted).toFixed(1)} ms, p90 ${percentile(sorted, 90).toFixed(1)} ms, ` +
    `p99 ${p99.toFixed(1)} ms, max ${max(sorted).toFixed(1)} ms (load average ${load} before, ${loadavg()[0]!.toFixed(1)} after); ` +
    `p99 within 1 s: ${p99 <= 1000 ? 'yes' : 'no'}`,
);
