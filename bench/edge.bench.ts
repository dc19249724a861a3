// Flagwire at the edge (issue 101; docs/edge.md): the packed package (scripts/pack-edge.mjs) in workerd
// beside the server it reads, over the flags of every shape of test/edge/edge-flags.ts.
//
//   size          the tarball, and the worker's one file as deployed (and gzipped, as Workers count it)
//   cold start    workerd spawned to its first OFREP answer (the isolate, the snapshot's request and compile)
//   CPU           bulk answers of one project, each every flag: evaluations per CPU-second of workerd's
//                 process beside the server's (its eval workers included), the same contexts for both
//   propagation   a PATCH on the server to the worker answering the new value, polled every 5 ms: p50, p99
//   differential  generated contexts through the bulk route of both: mismatches counted (test/edge/differential-run.ts)
//
//   npm run build && node dist/bench/edge.bench.js [--contexts 1000000] [--edits 50] [--poll-ms 1000]
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { buildEvalWorld } from '../test/evaluation/engine/eval-world.js';
import { runDifferential } from '../test/edge/differential-run.js';
import { edgeContexts, makeEdgeFlags } from '../test/edge/edge-flags.js';
import { packEdge, startWorkerd } from '../test/edge/edge-hosts.js';
import { edgeReadToken } from '../test/edge/edge-world.js';
import { ask } from '../test/edge/ofrep-cases.js';
import { call } from '../test/helpers/http.js';
import { startTestServer } from '../test/helpers/server.js';
import { kNoEvalBodyBudget } from '../test/helpers/world-server.js';
import { log } from './log.js';

const { values } = parseArgs({
  options: {
    contexts: { type: 'string', default: '1000000' },
    edits: { type: 'string', default: '50' },
    'poll-ms': { type: 'string', default: '1000' },
    'cpu-requests': { type: 'string', default: '4000' },
  },
});
const kFlags = 60;

/** A process's CPU seconds so far (user + system, every thread), from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function main(): Promise<void> {
  const world = buildEvalWorld();
  const { ids } = world;
  const flags = makeEdgeFlags(world, kFlags);
  const token = edgeReadToken(world);
  const server = await startTestServer({ dataDir: world.dataDir, env: kNoEvalBodyBudget });
  const pkg = packEdge();
  const worker = join(pkg.dir, 'dist/worker.js');
  log(
    `size: tarball ${statSync(pkg.tarball).size} B; dist/worker.js ${statSync(worker).size} B, gzipped ${gzipSync(readFileSync(worker)).length} B`,
  );
  const bindings = {
    FLAGWIRE_URL: server.baseUrl,
    FLAGWIRE_TOKEN: token,
    FLAGWIRE_PROJECT: ids.single,
    FLAGWIRE_POLL_MS: values['poll-ms']!,
  };
  const project = { 'X-Flagwire-Project': ids.single };
  const first = { label: 'first', key: null, body: JSON.stringify({ context: { targetingKey: 'u1' } }), headers: project };

  const colds: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    const host = await startWorkerd(pkg, bindings);
    const answered = await ask(host.baseUrl, first);
    colds.push(performance.now() - started);
    if (answered.status !== 200) throw new Error(`the worker answered ${answered.status}: ${answered.body}`);
    await host.stop();
  }
  colds.sort((a, b) => a - b);
  log(
    `cold start (spawn to first bulk answer, 5 runs): median ${colds[2]!.toFixed(0)} ms, min ${colds[0]!.toFixed(0)}, max ${colds[4]!.toFixed(0)}`,
  );

  const host = await startWorkerd(pkg, bindings);
  const next = edgeContexts(0xc0ffee);
  const bodies = Array.from({ length: Number(values['cpu-requests']) }, () => JSON.stringify({ context: next() }));
  for (const [name, baseUrl, pid] of [
    ['workerd', host.baseUrl, host.process.pid!],
    ['server', server.baseUrl, server.proc.pid!],
  ] as const) {
    for (const body of bodies.slice(0, 200)) await ask(baseUrl, { label: 'warm', key: null, body, headers: project });
    const cpu = cpuSeconds(pid);
    const wall = performance.now();
    let at = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (at < bodies.length) await ask(baseUrl, { label: 'cpu', key: null, body: bodies[at++]!, headers: project });
      }),
    );
    const spent = cpuSeconds(pid) - cpu;
    const evaluations = bodies.length * (flags.ids.length + 7);
    log(
      `${name}: ${bodies.length} bulk answers of ${flags.ids.length + 7} flags in ${((performance.now() - wall) / 1000).toFixed(1)} s wall, ` +
        `${spent.toFixed(2)} CPU s: ${Math.round(evaluations / spent)} evaluations per CPU-second`,
    );
  }

  const delays: number[] = [];
  const request = { label: 'edit', key: ids.off, body: JSON.stringify({ context: { targetingKey: 'u1' } }), headers: {} };
  for (let i = 0; i < Number(values.edits); i++) {
    const enabled = i % 2 === 0;
    const patched = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.off}`, { token: world.writeToken, body: { enabled } });
    if (patched.status !== 200) throw new Error(patched.text);
    const started = performance.now();
    while ((JSON.parse((await ask(host.baseUrl, request)).body) as { value: boolean }).value !== enabled) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    delays.push(performance.now() - started);
  }
  delays.sort((a, b) => a - b);
  log(
    `propagation (pollMs ${values['poll-ms']}, ${delays.length} edits): p50 ${percentile(delays, 50).toFixed(0)} ms, ` +
      `p99 ${percentile(delays, 99).toFixed(0)} ms, max ${delays.at(-1)!.toFixed(0)} ms`,
  );

  const started = performance.now();
  const result = await runDifferential({
    serverUrl: server.baseUrl,
    edgeUrl: host.baseUrl,
    projectId: ids.single,
    flagIds: flags.ids,
    contexts: Number(values.contexts),
    concurrency: 8,
    progress: (contexts, so) => log(`differential: ${contexts} contexts asked, ${so.mismatches} mismatches so far`),
  });
  log(
    `differential: ${result.requests} requests (${Number(values.contexts)} contexts), ${result.answers} flag answers, ` +
      `${result.mismatches} mismatches in ${((performance.now() - started) / 1000).toFixed(0)} s; ${JSON.stringify(result.byReason)}`,
  );
  for (const example of result.examples) log(example);
  await host.stop();
  await server.stop();
  await world.store.close();
}

await main();
