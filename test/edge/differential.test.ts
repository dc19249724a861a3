// Differential: flags of every shape (edge-flags.ts) in a real server and the packed edge package in
// workerd serving the same project; generated contexts through the bulk route (and a tenth through the
// single-flag route) get the same status, bytes and ETag from both. A sample here (EDGE_DIFF_CONTEXTS,
// default 2,000 contexts, each every flag twice); bench/edge.bench.ts runs 1,000,000.
import t from 'tap';
import { buildEvalWorld } from '../evaluation/engine/eval-world.js';
import { startTestServer } from '../helpers/server.js';
import { kNoEvalBodyBudget } from '../helpers/world-server.js';
import { runDifferential } from './differential-run.js';
import { makeEdgeFlags } from './edge-flags.js';
import { packEdge, startWorkerd } from './edge-hosts.js';
import { edgeReadToken } from './edge-world.js';

const kContexts = Number(process.env.EDGE_DIFF_CONTEXTS ?? 2_000);
const kFlags = 60;

t.setTimeout(600_000);
const world = buildEvalWorld();
const { ids } = world;
const flags = makeEdgeFlags(world, kFlags);
const token = edgeReadToken(world);
const server = await startTestServer({ dataDir: world.dataDir, env: kNoEvalBodyBudget });
const worker = await startWorkerd(packEdge(), { FLAGWIRE_URL: server.baseUrl, FLAGWIRE_TOKEN: token, FLAGWIRE_PROJECT: ids.single });
t.teardown(async () => {
  await worker.stop();
  await server.stop();
  await world.store.close();
});

t.test(`${kContexts} generated contexts over ${kFlags} flags of every shape: workerd answers as the server`, async (t) => {
  const result = await runDifferential({
    serverUrl: server.baseUrl,
    edgeUrl: worker.baseUrl,
    projectId: ids.single,
    flagIds: flags.ids,
    contexts: kContexts,
    concurrency: 8,
  });
  t.comment(
    `shapes ${JSON.stringify(flags.shapes)}; ${result.requests} requests, ${result.answers} answers: ${JSON.stringify(result.byReason)}`,
  );
  t.equal(result.mismatches, 0, result.examples.join('\n\n'));
  t.ok(result.answers >= kContexts * kFlags * 2, 'every flag answered in every bulk answer');
  for (const reason of ['TARGETING_MATCH', 'STATIC', 'DEFAULT', 'DISABLED', 'SPLIT', 'TARGETING_KEY_MISSING'])
    t.ok((result.byReason[reason] ?? 0) > 0, `some answers were ${reason}`);
});
