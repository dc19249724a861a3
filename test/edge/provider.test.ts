// The edge's OpenFeature provider (src/edge/provider.ts) over a FlagwireEdge fed by a real server: what
// in-worker code evaluates is what the server's OFREP route answers; an exposure of an experiment is
// sent through the events API only when flush() is given the runtime's waitUntil, in one batch.
import { type EvaluationContext, OpenFeature } from '@openfeature/server-sdk';
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { FlagwireEdge } from '../../src/edge/edge.js';
import { FlagwireEdgeProvider, FlagwireEvents } from '../../src/edge/provider.js';
import { jsonBody } from '../../src/model/request-body.js';
import { experimentPlan } from '../helpers/experiment-plan.js';
import { startEdgeWorld } from './edge-world.js';
import { ask } from './ofrep-cases.js';

t.setTimeout(600_000);
const { world, server, token, typed, stop } = await startEdgeWorld((world) => {
  const { ids } = world;
  world.run('experimentCreate', {
    principal: kOperator,
    projectId: ids.single,
    env: null,
    received: jsonBody(JSON.stringify({ ...experimentPlan(ids.half, 1000), key: 'edge-exp' })),
  });
  world.run('experimentStart', { principal: kOperator, projectId: ids.single, env: null, key: 'edge-exp' });
});
const { ids } = world;
const batches: string[] = [];
const events = new FlagwireEvents({
  url: server.baseUrl,
  clientKey: 'fwc_test',
  fetch: async (_url, init) => {
    batches.push(String(init?.body));
    return new Response('{}', { status: 202 });
  },
});
const edge = new FlagwireEdge({ url: server.baseUrl, token, project: ids.single });
const provider = new FlagwireEdgeProvider(edge, { events });
await OpenFeature.setProviderAndWait('edge', provider);
const client = OpenFeature.getClient('edge');
t.teardown(async () => {
  await OpenFeature.close();
  await events.close();
  await stop();
});

t.test('in-worker evaluations answer as the server OFREP route', async (t) => {
  const contexts: EvaluationContext[] = [{ targetingKey: 'u1' }, { targetingKey: 'u2', plan: 'beta', country: 'NL' }, { cohort: 'vip' }];
  for (const [key, type] of [
    [ids.on, 'boolean'],
    [ids.half, 'boolean'],
    [ids.aud, 'boolean'],
    [typed.id, 'string'],
  ] as const) {
    for (const context of contexts) {
      const reply = await ask(server.baseUrl, { label: key, key, body: JSON.stringify({ context }), headers: {} });
      const wanted = JSON.parse(reply.body);
      const got =
        type === 'boolean' ? await client.getBooleanDetails(key, false, context) : await client.getStringDetails(key, 'none', context);
      if (wanted.errorCode !== undefined) t.equal(got.errorCode, wanted.errorCode, `${key} ${JSON.stringify(context)}`);
      else t.same([got.value, got.variant, got.reason, got.flagMetadata], [wanted.value, wanted.variant, wanted.reason, wanted.metadata]);
    }
  }
});

t.test("an exposure goes out in a batch under the runtime's waitUntil", async (t) => {
  let exposed = 0;
  for (let i = 0; i < 50; i++) {
    const details = await client.getBooleanDetails(ids.half, false, { targetingKey: `subject-${i}` });
    if (details.flagMetadata.inExperiment === true) exposed++;
  }
  t.ok(exposed > 0, `${exposed} of 50 subjects exposed`);
  t.equal(batches.length, 0, 'nothing sent before a flush');
  const kept: Promise<unknown>[] = [];
  provider.flush({ waitUntil: (promise) => void kept.push(promise) });
  t.equal(kept.length, 1, 'the flush was handed to waitUntil');
  await Promise.all(kept);
  t.equal(batches.length, 1, 'one batch');
  const sent = JSON.parse(batches[0]!) as { events: { kind: string; key: string; targetingKey: string }[] };
  const subjects = sent.events.filter((e) => e.kind === 'exposure' && e.key === ids.half && e.targetingKey.startsWith('subject-'));
  t.equal(subjects.length, exposed, 'each exposure, once');
});
