// Micro-benchmark: what counting costs the evaluation path per request, in one process. The batcher
// does, per request, `metrics.request(route, status)`, and per batch one `performance.now()` when the
// batch opens and one `metrics.batch(size, seconds)` when it is answered; with metrics off it does
// none of it. Both variants run the same loop (batches of 64) in alternating rounds; medians of 11.
// The end-to-end runs (h)/(i) of `npm run bench` cannot resolve a few per cent on a 2-core machine
// shared with the load generator; this is the bound to read them against.
// Run: npx tsc -p . && node dist/bench/metrics.bench.js
import { routeNumbers } from '../src/all-routes.js';
import { kEvaluationApiRoutes } from '../src/evaluation/engine/evaluation-api-routes.js';
import { Metrics } from '../src/metrics/metrics.js';
import { median } from './stats.js';

const kRouteFlag = routeNumbers(kEvaluationApiRoutes).evaluateFlag;
const kBatch = 64;
const kBatches = 50_000;
const metrics = new Metrics();
let sink = 0;

/** ns per request of one round; `on` does the batcher's metrics work, `off` only the loop. */
function round(on: boolean): number {
  const start = process.hrtime.bigint();
  for (let b = 0; b < kBatches; b++) {
    const openedAt = on ? performance.now() : 0;
    for (let i = 0; i < kBatch; i++) {
      sink += i;
      if (on) metrics.request(kRouteFlag, 200);
    }
    if (on) metrics.batch(kBatch, (performance.now() - openedAt) / 1000);
  }
  return Number(process.hrtime.bigint() - start) / (kBatches * kBatch);
}

const onNs: number[] = [];
const offNs: number[] = [];
for (let r = 0; r < 11; r++) {
  if (r % 2 === 0) {
    onNs.push(round(true));
    offNs.push(round(false));
  } else {
    offNs.push(round(false));
    onNs.push(round(true));
  }
}
const cost = median(onNs) - median(offNs);
console.log(
  `metrics on: ${median(onNs).toFixed(2)} ns/request, off: ${median(offNs).toFixed(2)} ns/request (loop only), batches of ${kBatch}`,
);
console.log(
  `counting costs ${cost.toFixed(2)} ns per request: ${((cost / 25_000) * 100).toFixed(3)}% of the ~25 µs of server CPU an evaluation request costs end to end (bench (a))`,
);
if (sink === 42) console.log('');
