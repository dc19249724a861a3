// The deliverer's bodies (src/webhooks/sent-bodies.ts), in process: the sends of one change's body that
// run at once share one copy of its bytes, read from the store once; the last send to end lets it go; a
// body no longer kept is null. And a body signed as bytes is signed as its text is.
import t from 'tap';
import { Webhook as Verifier } from 'standardwebhooks';
import { kOperator } from '../../src/actor/audit-actor.js';
import { jsonBody } from '../../src/model/request-body.js';
import { SentBodies } from '../../src/webhooks/sent-bodies.js';
import { signedHeaders } from '../../src/webhooks/signature.js';
import { deletePayload, getPayload, listDeliveries } from '../../src/webhooks/records.js';
import { tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';

const world = buildWorld(tempDataDir());
t.teardown(() => world.store.close());
const { ids } = world;
const read = () => {
  world.store.resetReadTxn();
  return world.store;
};
const hook = (url: string, format: 'standard' | 'slack') =>
  world.run('webhookCreate', {
    principal: kOperator,
    projectId: ids.single,
    received: jsonBody(JSON.stringify({ url, events: ['flag'], format })),
  });
const standard = hook('https://hooks.example.com/a', 'standard');
hook('https://hooks.example.com/b', 'standard');
hook('https://hooks.slack.example.com/c', 'slack');
world.run('flagPatch', { flagId: ids.flag, env: null, principal: kOperator, patch: { trafficPercentage: 17 } } as never);
const [delivery] = listDeliveries(read(), standard.id, 1);
const seq = delivery!.auditSeq;
const payload = getPayload(read(), seq)!;

t.test('sends of one body at once share its bytes; the last one to end lets them go', async (t) => {
  const bodies = new SentBodies(read());
  const first = bodies.take(seq, 'standard')!;
  t.equal(first.toString('utf8'), payload.bodies.standard, 'the body as stored, as UTF-8 bytes');
  const second = bodies.take(seq, 'standard')!;
  t.equal(second, first, 'a second send of it at once: the same bytes, not read again');
  const slack = bodies.take(seq, 'slack')!;
  t.not(slack, first);
  t.equal(slack.toString('utf8'), payload.bodies.slack, 'each format its own body');
  bodies.release(seq, 'standard');
  t.equal(bodies.take(seq, 'standard'), first, 'still held while a send uses it');
  bodies.release(seq, 'standard');
  bodies.release(seq, 'standard');
  bodies.release(seq, 'slack');
  const again = bodies.take(seq, 'standard')!;
  t.not(again, first, 'let go by the last send: the next send reads it anew');
  t.equal(again.toString('utf8'), payload.bodies.standard);
  bodies.release(seq, 'standard');
});

t.test('a body no longer kept is null', async (t) => {
  world.store.transact((w) => deletePayload(w, getPayload(w, seq)!));
  const bodies = new SentBodies(read());
  t.equal(bodies.take(seq, 'standard'), null);
  t.equal(bodies.take(seq + 1_000_000, 'slack'), null, 'a change never queued');
});

t.test('a body signed as its bytes is signed as its text is', async (t) => {
  const { secret } = world.run('webhookCreate', {
    principal: kOperator,
    projectId: ids.single,
    received: jsonBody(JSON.stringify({ url: 'https://hooks.example.com/sig' })),
  });
  const body = JSON.stringify({ type: 'flag.patch', note: 'ünïcode ✓' });
  const timestamp = Math.floor(Date.now() / 1000);
  const asBytes = signedHeaders(secret, 'msg_abc', timestamp, Buffer.from(body));
  t.same(asBytes, signedHeaders(secret, 'msg_abc', timestamp, body));
  t.same(new Verifier(secret).verify(body, asBytes), JSON.parse(body), 'Standard Webhooks verifies it');
});
