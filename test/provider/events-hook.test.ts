// FlagwireEvents (src/provider/events.ts) with the stock OpenFeature server SDK against a real server
// (issue 58, item 3): its hook on a client of the stock OFREP provider sends each subject's exposure
// once, however often it is evaluated, only for answers that are exposures; FlagwireProvider's
// `client.track(...)` sends outcomes; the timer sends without a flush; a batch whose answer was lost is
// sent again under its id and counted once; what cannot be sent waits, bounded; a batch is at most
// 1,000 events and 10 s, whatever the options ask.
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { OpenFeature } from '@openfeature/server-sdk';
import t from 'tap';
import { FlagwireEvents } from '../../src/provider/events.js';
import { FlagwireProvider } from '../../src/provider/provider.js';
import { startExperimentServer } from '../helpers/experiment-server.js';

const { base, world, clientKey, statistics } = await startExperimentServer(t);
const { ids, secrets } = world;
t.teardown(() => OpenFeature.close());

const subjectsOf = (stats: { variants: { variant: string; subjects: number }[] }) =>
  Object.fromEntries(stats.variants.map((v) => [v.variant, v.subjects]));

/** A fetch that counts the events it sends. */
function countingFetch(): { fetch: typeof fetch; sent: { kind: string; targetingKey: string }[] } {
  const sent: { kind: string; targetingKey: string }[] = [];
  return {
    sent,
    fetch: async (input, init) => {
      sent.push(...(JSON.parse(String(init?.body)) as { events: { kind: string; targetingKey: string }[] }).events);
      return fetch(input, init);
    },
  };
}

t.test('the hook on the stock OFREP provider: each subject exposed once, in the variant it got', async (t) => {
  const counting = countingFetch();
  const events = new FlagwireEvents({ url: base, clientKey, fetch: counting.fetch, onError: (err) => t.fail(err.message) });
  await OpenFeature.setProviderAndWait('ofrep', new OFREPProvider({ baseUrl: base, headers: [['X-Flagwire-Project', ids.single]] }));
  const client = OpenFeature.getClient('ofrep');
  client.addHooks(events.hook);
  const got: Record<string, number> = {};
  const inExperiment = new Set<unknown>();
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 40; i++) {
      const details = await client.getBooleanDetails('new-checkout', false, { targetingKey: `user-${i}` });
      inExperiment.add(details.flagMetadata.inExperiment);
      if (round === 0) got[details.variant!] = (got[details.variant!] ?? 0) + 1;
    }
  }
  t.strictSame([...inExperiment], [true], 'every split answer is an exposure');
  // A flag without an experiment, and a subject without a targeting key: no exposure.
  await client.getBooleanDetails('banner', false, { targetingKey: 'user-1' });
  await client.getBooleanDetails('new-checkout', false, {});
  await events.close();
  t.equal(counting.sent.length, 40, 'one exposure per subject, however often it was evaluated');
  t.strictSame(subjectsOf(await statistics()), got, 'each in the variant its answer named');
  t.ok(Object.keys(got).length === 2, 'both variants were served');
});

t.test("FlagwireProvider: client.track sends outcomes, and its answers' exposures go through the hook", async (t) => {
  const events = new FlagwireEvents({ url: base, clientKey, onError: (err) => t.fail(err.message) });
  await OpenFeature.setProviderAndWait('flagwire', new FlagwireProvider({ url: base, token: secrets.read, project: ids.single, events }));
  const client = OpenFeature.getClient('flagwire');
  client.addHooks(events.hook);
  const details = await client.getBooleanDetails('new-checkout', false, { targetingKey: 'buyer-1' });
  client.track('purchase', { targetingKey: 'buyer-1' }, { value: 59.9, currency: 'EUR' });
  client.track('purchase', { targetingKey: 'buyer-1' }, { value: 0.1 });
  await events.close();
  const arm = (await statistics()).variants.find((v: { variant: string }) => v.variant === details.variant);
  t.match(arm.metrics, [{ metric: 'purchase', events: 2, subjects: 1, sum: '60', sumOfSquares: '3600' }]);
});

t.test('the timer sends what waits, without a flush', async (t) => {
  const events = new FlagwireEvents({ url: base, clientKey, flushIntervalMs: 50 });
  t.teardown(() => events.close());
  events.track('timer-metric', { targetingKey: 'buyer-1' });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const stats = await statistics();
    if (JSON.stringify(stats).includes('timer-metric')) break;
    if (Date.now() > deadline) throw new Error('the timer never sent the event');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.pass('sent by the timer');
});

t.test('a batch whose answer was lost is sent again under its id, and counted once', async (t) => {
  const tries: string[] = [];
  let lose = true;
  const events = new FlagwireEvents({
    url: base,
    clientKey,
    onError: () => {},
    fetch: async (input, init) => {
      tries.push(JSON.parse(String(init?.body)).batchId);
      const answer = await fetch(input, init);
      if (lose) {
        lose = false;
        throw new Error('connection reset after the server answered');
      }
      return answer;
    },
  });
  events.track('retried', { targetingKey: 'buyer-1' }, { value: 3 });
  await events.flush();
  await events.close();
  t.equal(tries.length, 2, 'sent twice');
  t.equal(tries[0], tries[1], 'under the same batch id');
  const arm = (await statistics()).variants.find((v: { metrics: { metric: string }[] }) => v.metrics.some((m) => m.metric === 'retried'));
  t.match(
    arm.metrics.find((m: { metric: string }) => m.metric === 'retried'),
    { events: 1, sum: '3' },
    'counted once',
  );
});

t.test('while nothing can be sent, at most maxQueued events wait; the oldest are dropped', async (t) => {
  const events = new FlagwireEvents({
    url: 'http://127.0.0.1:9',
    clientKey,
    maxBatch: 10,
    maxQueued: 20,
    closeTimeoutMs: 0,
    onError: () => {},
    fetch: async () => {
      throw new Error('unreachable');
    },
  });
  for (let i = 0; i < 35; i++) events.track('m', { targetingKey: `s${i}` });
  t.equal(events.dropped, 15);
  // close() gives up on the 20 that waited, and counts them too.
  await events.close();
  t.equal(events.dropped, 35);
});

t.test('the pairs remembered are the latest: an older one forgotten is sent again, a recent one is not', async (t) => {
  const sent: string[] = [];
  const events = new FlagwireEvents({
    url: 'http://127.0.0.1:9',
    clientKey,
    rememberExposures: 2,
    fetch: async (_input, init) => {
      sent.push(...(JSON.parse(String(init?.body)) as { events: { targetingKey: string }[] }).events.map((e) => e.targetingKey));
      return new Response('{"accepted":1,"duplicates":0,"rejected":[]}', { status: 200 });
    },
  });
  const expose = (subject: string) =>
    events.hook.after(
      { flagKey: 'new-checkout', context: { targetingKey: subject } },
      { variant: 'on', flagMetadata: { experimentKey: 'checkout-2026', inExperiment: true } },
    );
  for (const subject of ['a', 'b', 'c', 'c', 'b', 'a']) expose(subject);
  await events.close();
  t.strictSame(sent, ['a', 'b', 'c', 'a'], 'a, forgotten once c came, is sent again; b and c are not');
});

t.test('a batch holds at most 1,000 events: a full one is sent at once, the rest within 10 s, whatever the options ask', async (t) => {
  const batches: number[] = [];
  let accepted = 0;
  // Asked for more than the bounds allow: they hold nonetheless.
  const events = new FlagwireEvents({
    url: base,
    clientKey,
    maxBatch: 5000,
    flushIntervalMs: 600_000,
    onError: (err) => t.fail(err.message),
    fetch: async (input, init) => {
      batches.push((JSON.parse(String(init?.body)) as { events: unknown[] }).events.length);
      const answer = await fetch(input, init);
      accepted += ((await answer.clone().json()) as { accepted: number }).accepted;
      return answer;
    },
  });
  t.teardown(() => events.close());
  for (let i = 0; i < 999; i++) events.track('batched', { targetingKey: `b${i % 50}` });
  t.strictSame(batches, [], 'nothing sent before a batch is full');
  events.track('batched', { targetingKey: 'b0' });
  // The send begins in the same turn as the 1,000th event: no timer was waited for.
  t.strictSame(batches, [1000], 'the full batch is sent at once');
  for (let i = 0; i < 1500; i++) events.track('batched', { targetingKey: `b${i % 50}` });
  // The rest goes by the timer, never flushed here: 10 s at most (asked: 600 s). The bound only catches a hang.
  const deadline = Date.now() + 60_000;
  while (accepted < 2500) {
    if (Date.now() > deadline) throw new Error(`the timer did not send the rest within a minute: ${batches}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.ok(
    batches.every((size) => size <= 1000),
    `no batch above 1,000 events: ${batches}`,
  );
  t.equal(accepted, 2500, 'the server took every one');
});
