// Webhooks through the writer's own commands, in process: every audited change is queued for the
// project's webhooks that subscribe to it, in the change's transaction (a refused change queues nothing);
// a delivery is claimed by one node at a time, delivered on a 2xx, retried with a growing backoff
// otherwise and given up after its age; redelivered as the same message; the log stays bounded.
import t from 'tap';
import { Webhook as Verifier } from 'standardwebhooks';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { jsonBody } from '../../src/model/request-body.js';
import { signedHeaders, verifySignature } from '../../src/webhooks/signature.js';
import type { WebhookDelivery } from '../../src/webhooks/webhook.js';
import { kDroppedError, kKeptDeliveries, kMaxOutboxBytes, kMaxPendingDeliveries } from '../../src/webhooks/webhook-commands.js';
import { refusedCommand } from '../helpers/refused.js';
import { tempDataDir } from '../helpers/server.js';
import { runCommand } from '../../src/writer/thread/commands.js';
import { buildWorld } from '../helpers/world.js';
import {
  deletePayload,
  getDelivery,
  getOutboxUsage,
  getPayload,
  getWebhook,
  deliveriesPast,
  listDeliveries,
  listDueDeliveries,
  scanDue,
  listWebhooks,
  putDelivery,
} from '../../src/webhooks/records.js';

const world = buildWorld(tempDataDir());
t.teardown(() => world.store.close());
const { ids } = world;
const t0 = Date.now();
const read = () => {
  world.store.resetReadTxn();
  return world.store;
};
const create = (body: unknown, projectId = ids.single) =>
  world.run('webhookCreate', { principal: kOperator, projectId, received: jsonBody(JSON.stringify(body)) }, t0);
const patch = (flagId: string, body: Record<string, unknown>, now = t0) =>
  world.run('flagPatch', { flagId, env: null, principal: kOperator, patch: body } as never, now);
const deliveries = (webhookId: string) => listDeliveries(read(), webhookId, 10_000);
/** What a delivery sends: its change's body in the format of its webhook. */
const bodyOf = (d: WebhookDelivery, format: 'standard' | 'slack' = 'standard') => getPayload(read(), d.auditSeq)!.bodies[format]!;

t.test('a change is queued for each webhook that subscribes, in its transaction, its body the change as committed', async (t) => {
  const all = create({ url: 'https://hooks.example.com/all' });
  t.match(all, { id: /^whk_/, secret: /^whsec_/, events: ['flag', 'token', 'plan'], format: 'standard' });
  const tokens = create({ url: 'https://hooks.example.com/tokens', events: ['token'] });
  const slack = create({ url: 'https://hooks.slack.example.com/x', events: ['flag'], format: 'slack' });
  t.same(
    listWebhooks(read(), ids.single)
      .map((h) => h.id)
      .sort(),
    [all.id, tokens.id, slack.id].sort(),
  );

  patch(ids.flag, { trafficPercentage: 42 });
  const [sent] = deliveries(all.id);
  t.match(sent, { id: /^msg_/, event: 'flag.patch', status: 'pending', attempts: 0, nextAttemptAt: t0, projectId: ids.single });
  const body = JSON.parse(bodyOf(sent!));
  t.match(body, {
    type: 'flag.patch',
    timestamp: new Date(t0).toISOString(),
    data: {
      projectId: ids.single,
      audit: { action: 'flag.patch', flagId: ids.flag, changes: { trafficPercentage: { after: 42 } } },
      flag: { id: ids.flag, trafficPercentage: 42 },
    },
  });
  t.equal(body.data.audit.seq, sent!.auditSeq);
  t.same(deliveries(tokens.id), [], 'a token-only webhook hears nothing of a flag');
  t.match(JSON.parse(bodyOf(deliveries(slack.id)[0]!, 'slack')), {
    text: /^Flagwire: console \(console\) flag\.patch .* trafficPercentage 50 → 42$/,
  });

  const before = world.snapshot();
  refusedCommand(t, world, 'INVALID_REQUEST', () => patch(ids.flag, { trafficPercentage: 101 }));
  t.equal(world.snapshot(), before, 'a refused change queues nothing');
  t.equal(deliveries(all.id).length, 1);

  world.run('tokenCreate', { projectId: ids.single, principal: principalOf(ids.owner), name: 'hooked', permission: 'read' }, t0);
  t.match(deliveries(tokens.id), [{ event: 'token.create' }], 'a token event reaches the token webhook');
  t.equal(deliveries(all.id).length, 2);
});

t.test('claimed by one node at a time; delivered on a 2xx; retried with backoff; given up after its age', async (t) => {
  const hook = create({ url: 'https://hooks.example.com/retry', events: ['flag'] });
  patch(ids.flag2, { enabled: true });
  const [queued] = deliveries(hook.id);
  const claim = (nodeId: string, now: number) => world.run('webhookClaim', { deliveryId: queued!.id, nodeId, claimMs: 30_000 }, now);
  const result = (status: number | null, now: number, giveUpMs = 24 * 3_600_000) =>
    world.run(
      'webhookResult',
      {
        deliveryId: queued!.id,
        outcome: { status, error: status === null ? 'ECONNREFUSED' : `answered ${status}`, latencyMs: 12.3 },
        giveUpMs,
      },
      now,
    );

  t.ok(scanDue(read(), t0, 1000).webhookIds.includes(hook.id), 'the webhook has a delivery due');
  t.same(
    listDueDeliveries(read(), hook.id, t0, 10).map((d) => d.id),
    [queued!.id],
  );
  t.match(claim('node_a', t0 + 1), { delivery: { claimedBy: 'node_a', nextAttemptAt: t0 + 30_001 }, webhook: { id: hook.id } });
  t.equal(claim('node_b', t0 + 2), null, 'another node leaves a claimed delivery alone');
  t.same(listDueDeliveries(read(), hook.id, t0 + 2, 10), [], 'claimed: out of the due window until its claim ends');
  const failed = result(500, t0 + 100)!;
  t.match(failed, { status: 'pending', attempts: 1, lastStatus: 500, lastError: 'answered 500', claimedBy: null });
  t.ok(
    failed.nextAttemptAt! >= t0 + 100 + 2500 && failed.nextAttemptAt! <= t0 + 100 + 5000,
    `first backoff 2.5-5 s: ${failed.nextAttemptAt! - t0 - 100}`,
  );
  t.equal(claim('node_b', t0 + 200), null, 'not before its next try');
  t.ok(claim('node_b', failed.nextAttemptAt!), 'node b takes it when due');
  const second = result(null, failed.nextAttemptAt! + 10)!;
  const secondDelay = second.nextAttemptAt! - (failed.nextAttemptAt! + 10);
  t.ok(secondDelay >= 5000 && secondDelay <= 10_000, `the next backoff doubles: ${secondDelay}`);
  claim('node_a', second.nextAttemptAt!);
  t.match(result(204, second.nextAttemptAt! + 5), {
    status: 'delivered',
    attempts: 3,
    lastStatus: 204,
    lastError: null,
    nextAttemptAt: null,
  });
  t.equal(result(200, second.nextAttemptAt! + 6), null, 'a second outcome of a delivered one is ignored');
  t.same(
    listDueDeliveries(read(), hook.id, t0 + 100 * 3_600_000, 100).filter((d) => d.id === queued!.id),
    [],
    'no longer due',
  );

  const again = world.run('webhookRedeliver', { principal: kOperator, deliveryId: queued!.id }, t0 + 1000);
  t.match(again, {
    id: queued!.id,
    auditSeq: queued!.auditSeq,
    status: 'pending',
    nextAttemptAt: t0 + 1000,
    queuedAt: t0 + 1000,
    doneAt: null,
  });
  t.ok(getPayload(read(), queued!.auditSeq), 'its body is still kept: the same message is sent again');
  world.run('webhookClaim', { deliveryId: queued!.id, nodeId: 'node_a', claimMs: 1 }, t0 + 1000);
  t.match(result(503, t0 + 2000, 3_600_000), { status: 'pending' });
  world.run('webhookClaim', { deliveryId: queued!.id, nodeId: 'node_a', claimMs: 1 }, t0 + 2 * 3_600_000);
  t.match(
    result(503, t0 + 2 * 3_600_000, 3_600_000),
    { status: 'failed', nextAttemptAt: null },
    'given up once queued longer than the give-up age',
  );
  t.match(read().listAudit(ids.single, { limit: 1, before: null })[0], { action: 'webhook.redeliver' });
});

t.test('the writer refuses a token limited to some environments every change to a webhook, as it is applied', async (t) => {
  const limited = { kind: 'token', tokenId: world.tokenIds.stagingWrite! } as const;
  const hook = create({ url: 'https://hooks.example.com/multi', events: ['flag'] }, ids.multi);
  world.run('flagPatch', { flagId: ids.groupFlag, env: 'staging', principal: kOperator, patch: { trafficPercentage: 7 } } as never, t0);
  const [delivery] = deliveries(hook.id);
  const said =
    /^A webhook carries the changes of every environment; this token is limited to: staging\. Use a token for every environment\.$/;
  for (const [name, input] of [
    [
      'webhookCreate',
      { principal: limited, projectId: ids.multi, received: jsonBody(JSON.stringify({ url: 'https://hooks.example.com/mine' })) },
    ],
    ['webhookDelete', { principal: limited, webhookId: hook.id }],
    ['webhookRedeliver', { principal: limited, deliveryId: delivery!.id }],
  ] as const) {
    t.match(
      refusedCommand(t, world, 'ENVIRONMENT_NOT_PERMITTED', () => world.run(name, input as never, t0)),
      said,
      name,
    );
  }
  t.same(
    listWebhooks(read(), ids.multi).map((h) => h.id),
    [hook.id],
    'none made, none deleted',
  );
  t.match(deliveries(hook.id), [{ id: delivery!.id, queuedAt: t0 }], 'not queued again');
  t.match(world.run('webhookDelete', { principal: { kind: 'token', tokenId: world.tokenIds.multiWrite! }, webhookId: hook.id }, t0), {
    deleted: true,
  });
});

t.test('Slack: names and values are escaped as its formatting says (&, <, >), so none mentions or links', async (t) => {
  const hook = create({ url: 'https://hooks.slack.example.com/escape', events: ['flag'], format: 'slack' });
  const flag = world.run(
    'flagCreate',
    { projectId: ids.single, principal: kOperator, body: { name: '<!channel> <@U024BE7LH> & <https://evil.example|x>' } } as never,
    t0,
  );
  patch(flag.id, { cohorts: ['<!here>', 'a&b'] });
  const text = (event: string) =>
    (JSON.parse(bodyOf(deliveries(hook.id).find((d) => d.event === event)!, 'slack')) as { text: string }).text;
  const name = '&lt;!channel&gt; &lt;@U024BE7LH&gt; &amp; &lt;https://evil.example|x&gt;';
  t.equal(text('flag.create'), `Flagwire: console (console) flag.create ${name} (${flag.id}): flag null → {"name":"${name}"}`);
  t.equal(text('flag.patch'), `Flagwire: console (console) flag.patch ${name} (${flag.id}): cohorts [] → ["&lt;!here&gt;","a&amp;b"]`);
  world.run('webhookDelete', { principal: kOperator, webhookId: hook.id }, t0);
});

t.test('refusals: a URL that is not http(s), unknown events, too many webhooks; nothing written', async (t) => {
  for (const [body, said] of [
    [{ url: 'ftp://example.com/x' }, /url: "ftp:\/\/example.com\/x" must start with http:\/\/ or https:\/\//],
    [{ url: 'not a url' }, /is not a URL/],
    [{ url: 'https://example.com', events: ['flags'] }, /events/],
    [{ url: 'https://example.com', format: 'xml' }, /format/],
    [{ url: 'https://example.com', secret: 'mine' }, /secret/],
  ] as const)
    t.match(
      refusedCommand(t, world, 'INVALID_REQUEST', () => create(body, ids.multi)),
      said,
    );
  for (let i = listWebhooks(read(), ids.multi).length; i < 20; i++) create({ url: `https://example.com/${i}` }, ids.multi);
  t.match(
    refusedCommand(t, world, 'INVALID_REQUEST', () => create({ url: 'https://example.com/21' }, ids.multi)),
    /at most 20 webhooks/,
  );
});

t.test('the log stays bounded; deleting a webhook deletes its log', async (t) => {
  const hook = create({ url: 'https://hooks.example.com/bounded', events: ['flag'] });
  // In one transaction, each command in its own child transaction as world.run runs it (the writer
  // commits many commands in one too): a commit each, 3,045 fsyncs, was most of this file's time.
  world.store.transact((w) => {
    for (let i = 0; i < kKeptDeliveries + 15; i++) {
      const now = t0 + i + 1;
      runCommand(
        w,
        'flagPatch',
        { flagId: ids.flag, env: null, principal: kOperator, patch: { trafficPercentage: i % 100 } } as never,
        now,
      );
      const [latest] = listDeliveries(w, hook.id, 1);
      runCommand(w, 'webhookClaim', { deliveryId: latest!.id, nodeId: 'n', claimMs: 1 }, now);
      runCommand(
        w,
        'webhookResult',
        { deliveryId: latest!.id, outcome: { status: 200, error: null, latencyMs: 1 }, giveUpMs: 3_600_000 },
        now,
      );
    }
  });
  const kept = deliveries(hook.id);
  t.equal(kept.length, kKeptDeliveries, 'every delivery done: exactly the newest kKeptDeliveries kept');
  t.equal(kept.at(-1)!.createdAt, t0 + 16, 'the oldest kept is the newest but kKeptDeliveries');
  t.match(world.run('webhookDelete', { principal: kOperator, webhookId: hook.id }, t0), { id: hook.id, deleted: true });
  t.same(deliveries(hook.id), []);
  t.equal(getWebhook(read(), hook.id), undefined);
});

t.test('deliveriesPast answers what listDeliveries past the kept ones answers, read from either end', async (t) => {
  const hook = create({ url: 'https://hooks.example.com/past', events: ['token'] });
  world.store.transact((w) => {
    for (let i = 0; i < 40; i++) {
      const pending = i % 3 === 0;
      putDelivery(w, {
        id: `msg_past${String(i).padStart(3, '0')}`,
        webhookId: hook.id,
        projectId: ids.single,
        event: 'token.create',
        auditSeq: 1,
        createdAt: t0 + i,
        queuedAt: t0 + i,
        status: pending ? 'pending' : 'delivered',
        attempts: pending ? 0 : 1,
        nextAttemptAt: pending ? t0 + i : null,
        claimedBy: null,
        lastStatus: pending ? null : 200,
        lastError: null,
        lastLatencyMs: pending ? null : 1,
        lastAttemptAt: pending ? null : t0 + i,
        doneAt: pending ? null : t0 + i,
      });
    }
  });
  const idsOf = (list: readonly WebhookDelivery[]) => list.map((d) => d.id).sort();
  // [kept, limit]: past the newest 30 (read from the oldest end), past 2 (from the newest), a few past, none.
  for (const [kept, limit] of [
    [30, 10],
    [2, 10],
    [36, 10],
    [38, 3],
    [40, 10],
    [45, 10],
    [0, 50],
  ] as const) {
    const expected = listDeliveries(read(), hook.id, limit, kept);
    t.same(idsOf(deliveriesPast(read(), hook.id, kept, limit)), idsOf(expected), `kept ${kept}, limit ${limit}: ${expected.length}`);
  }
  world.run('webhookDelete', { principal: kOperator, webhookId: hook.id }, t0);
  t.same(deliveriesPast(read(), hook.id, 0, 10), [], 'a deleted webhook has none');
});

t.test('the signature is Standard Webhooks: a reference verifier accepts it, and refuses a changed body', async (t) => {
  const { secret } = create({ url: 'https://hooks.example.com/sig' });
  const body = '{"type":"flag.patch"}';
  const headers = signedHeaders(secret, 'msg_abc', Math.floor(Date.now() / 1000), body);
  t.same(new Verifier(secret).verify(body, headers), { type: 'flag.patch' });
  t.throws(() => new Verifier(secret).verify('{"type":"flag.delete"}', headers));
  t.ok(verifySignature(secret, 'msg_abc', Number(headers['webhook-timestamp']), body, headers['webhook-signature']!));
});

t.test('a change is stored once for all its webhooks, and dropped with the last delivery that sends it', async (t) => {
  const patchB = (body: Record<string, unknown>, now = t0) =>
    world.run('flagPatch', { flagId: ids.flagB, env: null, principal: kOperator, patch: body } as never, now);
  const hooks = Array.from({ length: 5 }, (_, i) => create({ url: `https://hooks.example.com/once-${i}`, events: ['flag'] }, ids.singleB));
  const slack = create({ url: 'https://hooks.slack.example.com/once', events: ['flag'], format: 'slack' }, ids.singleB);
  patchB({ enabled: false });
  const sent = [...hooks, slack].map((h) => deliveries(h.id)[0]!);
  t.equal(new Set(sent.map((d) => d.auditSeq)).size, 1, 'every delivery sends the one change');
  const payload = getPayload(read(), sent[0]!.auditSeq)!;
  t.same(Object.keys(payload.bodies).sort(), ['slack', 'standard'], 'one body per format, not per webhook');
  t.equal(payload.bytes, Buffer.byteLength(payload.bodies.standard!) + Buffer.byteLength(payload.bodies.slack!));
  t.same(getOutboxUsage(read(), ids.singleB), { pending: 6, bytes: payload.bytes });
  t.notOk('body' in sent[0]!, 'a delivery holds no body');

  for (const h of hooks.slice(0, 4)) world.run('webhookDelete', { principal: kOperator, webhookId: h.id }, t0);
  t.ok(getPayload(read(), payload.auditSeq), 'kept while a delivery sends it');
  for (const h of [hooks[4]!, slack]) world.run('webhookDelete', { principal: kOperator, webhookId: h.id }, t0);
  t.equal(getPayload(read(), payload.auditSeq), undefined, 'dropped with the last one');
  t.same(getOutboxUsage(read(), ids.singleB), { pending: 0, bytes: 0 });
});

t.test("past a project's outbox bound its oldest changes are dropped: pending ones given up, not redeliverable", async (t) => {
  const patchB = (body: Record<string, unknown>, now: number) =>
    world.run('flagPatch', { flagId: ids.flagB, env: null, principal: kOperator, patch: body } as never, now);
  const hooks = Array.from({ length: 20 }, (_, i) => create({ url: `https://hooks.example.com/full-${i}`, events: ['flag'] }, ids.singleB));
  const changes = kMaxPendingDeliveries / hooks.length;
  // The outbox filled in one transaction, each change in its child transaction (as world.run runs it),
  // not a commit and an fsync each.
  world.store.transact((w) => {
    for (let i = 0; i < changes; i++)
      runCommand(w, 'flagPatch', { flagId: ids.flagB, env: null, principal: kOperator, patch: { enabled: i % 2 === 0 } } as never, t0 + i);
  });
  const full = getOutboxUsage(read(), ids.singleB);
  t.equal(full.pending, kMaxPendingDeliveries, 'exactly full');
  const oldest = deliveries(hooks[0]!.id).at(-1)!;
  const before = world.snapshot();
  patchB({ trafficPercentage: 7 }, t0 + changes);
  t.not(world.snapshot(), before);
  t.equal(getOutboxUsage(read(), ids.singleB).pending, kMaxPendingDeliveries, 'still at the bound: the oldest change made room');
  t.ok(getOutboxUsage(read(), ids.singleB).bytes <= kMaxOutboxBytes);
  t.equal(getPayload(read(), oldest.auditSeq), undefined, "the oldest change's body is dropped");
  for (const h of hooks) {
    const log = deliveries(h.id);
    t.match(log.at(-1), { auditSeq: oldest.auditSeq, status: 'failed', lastError: kDroppedError, nextAttemptAt: null });
    t.match(log[0], { event: 'flag.patch', status: 'pending' }, 'the new change is queued');
  }
  const refused = refusedCommand(t, world, 'INVALID_REQUEST', () =>
    world.run('webhookRedeliver', { principal: kOperator, deliveryId: oldest.id }, t0 + changes),
  );
  t.match(refused, /body is no longer kept/);
  for (const h of hooks) world.run('webhookDelete', { principal: kOperator, webhookId: h.id }, t0);
  t.same(getOutboxUsage(read(), ids.singleB), { pending: 0, bytes: 0 }, 'every count back to nothing');
});

t.test('a delivery whose body was never kept (an older node on PostgreSQL) is given up when claimed, saying so', async (t) => {
  const hook = create({ url: 'https://hooks.example.com/lost', events: ['flag'] }, ids.singleB);
  world.run('flagPatch', { flagId: ids.flagB, env: null, principal: kOperator, patch: { trafficPercentage: 3 } } as never, t0);
  const [queued] = deliveries(hook.id);
  world.store.transact((w) => deletePayload(w, getPayload(w, queued!.auditSeq)!));
  t.equal(world.run('webhookClaim', { deliveryId: queued!.id, nodeId: 'n', claimMs: 1 }, t0 + 1), null, 'nothing to send');
  t.match(getDelivery(read(), queued!.id), { status: 'failed', lastError: 'its body was not kept', nextAttemptAt: null, doneAt: t0 + 1 });
  t.same(getOutboxUsage(read(), ids.singleB), { pending: 0, bytes: 0 });
  world.run('webhookDelete', { principal: kOperator, webhookId: hook.id }, t0);
});
