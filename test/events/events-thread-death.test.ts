// The events thread dying with batches in flight (docs/events.md: When the events thread dies), against
// a real embedded node whose test switch kills its first events thread once it has counted one batch and
// before it answers it: every batch held is answered at once with 503 in the spec's envelope (never a
// hang), the next batch starts a new thread, and the batches sent again under their ids until answered
// leave every event counted once and kept once, none lost with the thread, none twice. The rule of when
// a thread that keeps dying is started again is tested in-process.
import t from 'tap';
import type { CountedEvent } from '../../src/events/tally.js';
import { millionths } from '../../src/events/tally.js';
import { ThreadRestarts } from '../../src/events/thread-restarts.js';
import { recomputedStatistics } from '../helpers/event-tally.js';
import { startExperimentServer, must } from '../helpers/experiment-server.js';
import { call, type Reply } from '../helpers/http.js';
import { until } from '../helpers/smtp.js';

t.test('the thread killed after counting a batch, others in flight: 503s at once, a new thread, every event counted once', async (t) => {
  const { server, base, world, clientKey, statistics } = await startExperimentServer(t, {
    FLAGWIRE_TEST_HOOKS: '1',
    FLAGWIRE_TEST_EVENTS_CRASH_BATCH_ID: 'dies-here',
    // One front end, so one events thread holds every batch.
    FLAGWIRE_HTTP_THREADS: '1',
  });
  must(await call(base, 'PATCH', '/api/v1/events/settings', { token: world.secrets.write, body: { rawEventRetentionDays: 30 } }), 200);
  const now = Date.now();
  const subjects = Array.from({ length: 30 }, (_, i) => `user-${i}`);
  const counted: CountedEvent[] = [];
  const wire: Record<string, unknown>[] = [];
  /** Events sent: as kept (raw) and as counted. */
  const sent = (events: Record<string, unknown>[]) => {
    wire.push(...events);
    for (const e of events) {
      const [subject, at] = [e.targetingKey as string, e.timestamp as number];
      counted.push(
        e.kind === 'track'
          ? { kind: 'track', subject, metric: e.key as string, value: millionths(e.value as number), at }
          : { kind: 'exposure', subject, experiment: 'checkout-2026', variant: e.variant as string, at },
      );
    }
  };
  const send = (batchId: string, events: Record<string, unknown>[]) =>
    call(base, 'POST', '/ofrep/v1/events', { token: clientKey, body: { batchId, events } });

  // Exposures first, answered before the death: none of them may be lost with the thread.
  const exposures = subjects.map((s, i) => ({
    kind: 'exposure',
    key: 'new-checkout',
    targetingKey: s,
    variant: i % 2 ? 'on' : 'off',
    timestamp: now - 60_000,
  }));
  t.strictSame((await send('exposures', exposures)).json, { accepted: subjects.length, duplicates: 0, rejected: [] });
  sent(exposures);

  // Then outcomes: the batch the switch names among others, all at once, so some are in flight when it dies.
  const outcomes = (n: number) =>
    subjects.slice(0, 10).map((s, i) => ({ kind: 'track', key: 'purchase', targetingKey: s, value: n * 100 + i / 4, timestamp: now }));
  const ids = ['dies-here', ...Array.from({ length: 12 }, (_, n) => `load-${n}`)];
  const bodies = new Map(ids.map((id, n) => [id, outcomes(n)]));
  for (const events of bodies.values()) sent(events);
  const first = await Promise.all(ids.map((id) => send(id, bodies.get(id)!)));
  const refused = first.filter((r) => r.status !== 200);
  for (const r of refused) {
    t.equal(r.status, 503, r.text);
    t.equal(r.headers.get('retry-after'), '1');
    t.match(r.json, {
      error: 'Server busy',
      detail: /events thread stopped while it held this batch.*send it again under its batchId, and it is counted once/,
      docs: String,
    });
  }
  t.equal(first[0]!.status, 503, 'the batch counted when the thread died was not answered as counted');
  t.comment(`${refused.length} of ${ids.length} batches held by the thread when it died`);
  // Its log line reaches the server's stderr on its own time: waited for (the bound only catches a hang).
  await until('the death logged', () => /the events thread died/.test(server.logs()));
  t.match(server.logs(), /the events thread died/, 'the death is logged');

  const exportedNow = async () =>
    (await (await fetch(`${base}/api/v1/events/export`, { headers: { authorization: `Bearer ${world.secrets.read}` } })).text())
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const values = (events: Record<string, unknown>[]) => events.filter((e) => e.kind === 'track').map((e) => e.value);
  const beforeResending = values(await exportedNow());
  t.ok(
    values(bodies.get('dies-here')!).every((v) => beforeResending.includes(v)),
    'the batch the thread died after was counted (its raw events kept) though not answered',
  );

  // Each batch not answered is sent again under its id until it is: the next batch starts a new thread.
  const answers = new Map<string, Reply>();
  for (const [n, id] of ids.entries()) {
    let r = first[n]!;
    for (let tries = 0; r.status !== 200 && tries < 20; tries++) r = await send(id, bodies.get(id)!);
    t.equal(r.status, 200, `${id}: answered by the new thread: ${r.text}`);
    answers.set(id, r);
  }
  t.strictSame(
    answers.get('dies-here')!.json,
    { accepted: 10, duplicates: 0, rejected: [] },
    'the batch the thread died after is answered as counted',
  );
  for (const [id, r] of answers) t.equal(r.json.accepted, 10, `${id} accepted whole`);

  t.strictSame(await statistics(), recomputedStatistics('checkout-2026', null, counted), 'every event counted once: none lost, none twice');
  const kept = await exportedNow();
  const asSet = (events: Record<string, unknown>[]) =>
    events.map((e) => JSON.stringify([e.kind, e.key, e.targetingKey, e.variant ?? null, e.value ?? null, e.timestamp])).sort();
  t.strictSame(
    asSet(kept.map((e) => ({ ...e, value: e.kind === 'track' ? e.value : null }))),
    asSet(wire.map((e) => ({ ...e, value: e.kind === 'track' ? e.value : null }))),
    'every event kept once',
  );
});

t.test('a thread that keeps dying is started again after a wait that doubles, up to a minute; a minute alive ends the row', (t) => {
  const restarts = new ThreadRestarts();
  let now = 1_000_000;
  restarts.started(now);
  t.equal(restarts.waitSeconds(now), 0, 'never died: starts at once');
  now += 10;
  restarts.died(now);
  t.equal(restarts.waitSeconds(now), 0, 'the first death: the next batch starts another');
  const waits: number[] = [];
  for (let death = 2; death <= 9; death++) {
    restarts.started(now);
    now += 10;
    restarts.died(now);
    waits.push(restarts.waitSeconds(now));
    t.ok(restarts.waitSeconds(now + waits.at(-1)! * 1000 - 1) > 0, `death ${death}: refused until the wait is over`);
    now += waits.at(-1)! * 1000;
    t.equal(restarts.waitSeconds(now), 0, `death ${death}: starts once it is over`);
  }
  t.strictSame(waits, [1, 2, 4, 8, 16, 32, 60, 60], 'each death in a row waits twice as long, at most a minute');
  restarts.started(now);
  now += 60_000;
  restarts.died(now);
  t.equal(restarts.waitSeconds(now), 0, 'a thread that ran a minute: its death starts a new row');
  t.end();
});
