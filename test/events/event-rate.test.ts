// A project's event rate (docs/events.md: Limits) against a real server at the lowest rate
// (FLAGWIRE_EVENTS_PER_SECOND=1000): a flood of batches is refused 429 with Retry-After beyond a
// second's worth, nothing of a refused batch counted; sent again under its id after Retry-After, each
// batch is counted once; another project's events and every evaluation go on meanwhile.
import t from 'tap';
import { startExperimentServer, must } from '../helpers/experiment-server.js';
import { call } from '../helpers/http.js';

const { base, world, clientKey, statistics } = await startExperimentServer(t, { FLAGWIRE_EVENTS_PER_SECOND: '1000' });
const other = must(
  await call(base, 'POST', '/api/v1/client-keys', { token: world.secrets.writeB, body: { name: 'b', uses: ['events'] } }),
  201,
).secret as string;

const batch = (n: number) => ({
  batchId: `flood-${n}`,
  events: Array.from({ length: 1000 }, (_, i) => ({ kind: 'track', key: 'views', targetingKey: `u${n}-${i}`, timestamp: Date.now() })),
});
const send = (key: string, body: unknown) => call(base, 'POST', '/ofrep/v1/events', { token: key, body });

t.test('a flood is refused past a second of the rate; each batch sent again later counts once', async (t) => {
  const bodies = Array.from({ length: 8 }, (_, n) => batch(n));
  const started = performance.now();
  const answers = await Promise.all(bodies.map((body) => send(clientKey, body)));
  const seconds = (performance.now() - started) / 1000;
  const refused = answers.filter((a) => a.status === 429);
  // A second's worth at first, then 1,000 more a second: however slow a busy machine made the requests,
  // no more batches pass than the time they took allows, and eight sent at once cannot all pass.
  const passed = answers.length - refused.length;
  t.ok(
    passed <= 1 + Math.floor(seconds),
    `${passed} of 8 batches passed in ${seconds.toFixed(1)} s (${answers.map((a) => a.status).join(', ')})`,
  );
  t.ok(refused.length > 0, 'some were refused');
  for (const r of refused) {
    t.match(r.json, { error: 'Too many events', detail: /more than 1000 events a second; nothing of this batch was counted/ });
    t.ok(Number(r.headers.get('retry-after')) >= 1, 'Retry-After says how long');
  }
  t.ok(
    answers.every((a) => a.status === 200 || a.status === 429),
    'admitted or refused, nothing else',
  );

  const elsewhere = await send(other, { events: [{ kind: 'track', key: 'views', targetingKey: 'b1', timestamp: Date.now() }] });
  t.equal(elsewhere.status, 200, "another project's events are not held by this one's flood");
  const evaluated = await call(base, 'POST', '/ofrep/v1/evaluate/flags/new-checkout', {
    body: { context: { targetingKey: 'someone' } },
    headers: { 'x-flagwire-project': world.ids.single },
  });
  t.equal(evaluated.status, 200, 'evaluation goes on');

  // Each refused batch, sent again under its id after what Retry-After said, until it passes.
  for (const [n, answer] of answers.entries()) {
    let status = answer.status;
    let wait = Number(answer.headers.get('retry-after'));
    while (status === 429) {
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
      const again = await send(clientKey, bodies[n]);
      status = again.status;
      wait = Number(again.headers.get('retry-after'));
    }
    t.equal(status, 200, `batch ${n} counted in the end`);
  }
  // One subject per event, none exposed: the count shows in no experiment, so read it back by sending
  // every batch once more: a batch id already counted changes nothing and answers as before.
  for (const body of bodies) {
    let again = await send(clientKey, body);
    while (again.status === 429) {
      await new Promise((resolve) => setTimeout(resolve, Number(again.headers.get('retry-after')) * 1000));
      again = await send(clientKey, body);
    }
    t.strictSame(again.json, { accepted: 1000, duplicates: 0, rejected: [] }, `${body.batchId}: answered as when it was counted`);
  }
  t.strictSame((await statistics()).variants, [], 'no exposure was sent: nothing in the experiment');
});
