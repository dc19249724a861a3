// A project's event storage limits (issue 58, item 5; docs/events.md: Limits) against a real server
// with small ones: a batch that would take a project environment past its subjects, or comes when a
// project's raw events take their bytes, is refused whole, 429 Event storage full with Retry-After, and
// nothing of it is applied; within the limits (subjects already kept, an erasure, raw events expired)
// batches count again.
import t from 'tap';
import { call } from '../helpers/http.js';
import { must, startExperimentServer } from '../helpers/experiment-server.js';
import { advanceClock } from '../helpers/test-hooks.js';

const { server, base, world, clientKey, statistics } = await startExperimentServer(t, {
  FLAGWIRE_TEST_HOOKS: '1',
  FLAGWIRE_EVENT_SUBJECTS_PER_ENVIRONMENT: '3',
  FLAGWIRE_RAW_EVENT_BYTES_PER_PROJECT: '3000',
});
const { secrets } = world;
const send = (key: string, events: unknown[]) => call(base, 'POST', '/ofrep/v1/events', { token: key, body: { events } });
const exposure = (subject: string) => ({
  kind: 'exposure',
  key: 'new-checkout',
  targetingKey: subject,
  variant: 'on',
  timestamp: Date.now(),
});

t.test('subjects: a batch that would pass the limit is refused whole; one within it counts', async (t) => {
  t.equal((await send(clientKey, [exposure('ann'), exposure('bob')])).status, 200);
  const before = await statistics();
  const refused = await send(clientKey, [exposure('ann'), exposure('cay'), exposure('dan')]);
  t.equal(refused.status, 429, refused.text);
  t.equal(refused.headers.get('retry-after'), '3600', 'subjects leave only when erased: an hour');
  t.match(refused.json, { error: 'Event storage full', detail: /2 subjects, and this batch would add 2: at most 3/ });
  t.strictSame(await statistics(), before, "nothing of it applied, ann's exposure included");
  t.equal((await send(clientKey, [exposure('cay')])).status, 200, 'up to the limit exactly');
  t.strictSame(
    (await send(clientKey, [exposure('ann'), exposure('bob'), exposure('cay')])).json,
    { accepted: 3, duplicates: 3, rejected: [] },
    'subjects already kept still count',
  );
  t.equal((await send(clientKey, [exposure('dan')])).status, 429, 'a fourth is refused');
  const erased = await call(base, 'POST', '/api/v1/events/subjects/erase', { token: secrets.write, body: { targetingKey: 'ann' } });
  t.equal(erased.json.erased, true);
  t.equal((await send(clientKey, [exposure('dan')])).status, 200, 'an erasure makes room');
  t.equal((await statistics()).variants[0].subjects, 3);
});

t.test("raw events: past the project's bytes a batch is refused until its oldest expire", async (t) => {
  must(await call(base, 'PATCH', '/api/v1/events/settings', { token: secrets.multiWrite, body: { rawEventRetentionDays: 1 } }), 200);
  const key = must(
    await call(base, 'POST', '/api/v1/client-keys', {
      token: secrets.multiWrite,
      body: { name: 'web', uses: ['events'], environment: 'staging' },
    }),
    201,
  ).secret as string;
  const track = (at: number) => ({
    kind: 'track',
    key: 'purchase',
    targetingKey: 'eve',
    value: 5,
    details: { page: 'x'.repeat(200) },
    timestamp: at,
  });
  const first = await send(
    key,
    Array.from({ length: 12 }, () => track(Date.now())),
  );
  t.strictSame(first.json, { accepted: 12, duplicates: 0, rejected: [] }, 'a batch that starts below the limit passes whole');
  const refused = await send(key, [track(Date.now())]);
  t.equal(refused.status, 429, refused.text);
  const wait = Number(refused.headers.get('retry-after'));
  t.ok(wait > 86_400 - 120 && wait <= 86_400, `Retry-After ${wait}: when the oldest raw event expires, a day after it was stored`);
  t.match(refused.json, { error: 'Event storage full', detail: /bytes of raw events, its most/ });
  const exported = await fetch(`${base}/api/v1/events/export?env=staging`, { headers: { authorization: `Bearer ${secrets.multiRead}` } });
  t.equal((await exported.text()).trim().split('\n').length, 12, 'nothing of the refused batch kept');
  await advanceClock(server, wait + 1);
  const after = await send(key, [track(Date.now() + (wait + 1) * 1000)]);
  t.equal(after.status, 200, `the expired events forgotten in the same transaction make room: ${after.text}`);
});
