// Where an experiment's statistics are read (issue 96, item 3; docs/events.md: Statistics): on the events
// thread, never the front end's, a bounded number at a time. Against a real embedded node: the
// statistics route and the results route answer as before; a read of the front end's events handle
// (in-process, on the node's data dir) gives the tally file's rows, of every metric or of those named
// only; and past kMaxStatisticsReads reads in flight one is refused, 503 Server busy with Retry-After in
// the Management API's envelope, while those in flight are answered, and the next read is too.
import pino from 'pino';
import t from 'tap';
import { Clock } from '../../src/clock.js';
import { errorEnvelope, FlagwireError, retryAfterSeconds } from '../../src/errors.js';
import { EventCounter, kMaxStatisticsReads } from '../../src/events/event-counter.js';
import { statisticsView } from '../../src/events/statistics.js';
import { TallyFile } from '../../src/events/tally/tally-file.js';
import { experimentPlan } from '../helpers/experiment-plan.js';
import { must, startExperimentServer } from '../helpers/experiment-server.js';
import { call } from '../helpers/http.js';

const { server, world, base, clientKey, statistics } = await startExperimentServer(t, { FLAGWIRE_HTTP_THREADS: '1' });
const { secrets } = world;
const api = (method: string, path: string, body?: unknown, token = secrets.write) => call(base, method, path, { token, body });
const flagId = (must(await api('GET', '/api/v1/flags', undefined, secrets.read), 200).flags as { id: string; name: string }[]).find(
  (f) => f.name === 'new-checkout',
)!.id;
// The planned experiment (declaring `purchase` and `revenue`) takes the flag over from the hand-made one.
must(await api('PATCH', `/api/v1/flags/${flagId}`, { experiment: null }), 200);
must(await api('POST', '/api/v1/experiments', experimentPlan(flagId, 1000)), 201);
must(await api('POST', '/api/v1/experiments/checkout-2026/start'), 200);

const now = Date.now();
const events = Array.from({ length: 40 }, (_, i) => {
  const subject = `user-${i}`;
  return [
    { kind: 'exposure', key: 'new-checkout', targetingKey: subject, variant: i % 2 ? 'on' : 'off', timestamp: now },
    { kind: 'track', key: 'purchase', targetingKey: subject, value: 1 + (i % 3), timestamp: now + 1 },
    { kind: 'track', key: 'revenue', targetingKey: subject, value: i * 1.5, timestamp: now + 1 },
    { kind: 'track', key: `page-${i % 4}`, targetingKey: subject, value: 1, timestamp: now + 1 },
  ];
}).flat();
must(await call(base, 'POST', '/ofrep/v1/events', { token: clientKey, body: { events } }), 200);

const scope = { projectId: world.ids.single, environment: '' };
const config = {
  dataDir: server.dataDir,
  databaseUrl: null,
  eventsPerSecond: 1_000_000,
  httpThreads: 1,
  eventSubjectsPerEnvironment: 1_000_000,
  rawEventBytesPerProject: 1_000_000,
};

t.test('the routes answer from the events thread as from the tally file', async (t) => {
  const file = TallyFile.open(server.dataDir);
  t.teardown(() => file.close());
  const stored = file.experiment(scope, 'checkout-2026');
  t.equal(stored.sums.length, 2 * 4, "two variants, each with the two declared metrics and its subjects' two undeclared ones");
  t.strictSame(await statistics(), statisticsView('checkout-2026', null, stored), 'the statistics route: every metric, as stored');
  const results = must(await api('GET', '/api/v1/experiments/checkout-2026/results', undefined, secrets.read), 200);
  t.strictSame(
    results.comparisons.map((c: { metric: string; treatment: { subjects: number } }) => [c.metric, c.treatment.subjects]),
    [
      ['purchase', 20],
      ['revenue', 20],
    ],
    "the results route: the plan's metrics",
  );
});

t.test('a read on the events thread: every metric, or those named; past the bound a 503 with Retry-After', async (t) => {
  const file = TallyFile.open(server.dataDir);
  t.teardown(() => file.close());
  const counter = new EventCounter(config, pino({ level: 'silent' }), Clock.create());
  t.teardown(() => counter.close());
  const stored = file.experiment(scope, 'checkout-2026');
  t.strictSame(await counter.experiment(scope, 'checkout-2026'), stored, 'every metric');
  const named = await counter.experiment(scope, 'checkout-2026', ['revenue', 'nope']);
  t.strictSame(
    named,
    { arms: stored.arms, sums: stored.sums.filter((s) => s.metric === 'revenue') },
    'only the metric named that is counted',
  );
  t.strictSame((await counter.experiment(scope, 'checkout-2026', [])).sums, [], 'no metric: the arms alone');
  t.strictSame(
    JSON.parse(await counter.statisticsJson(scope, 'checkout-2026', null)),
    statisticsView('checkout-2026', null, stored),
    "the statistics route's answer, made on the thread",
  );

  const reads = Array.from({ length: kMaxStatisticsReads + 1 }, () => counter.experiment(scope, 'checkout-2026'));
  const settled = await Promise.allSettled(reads);
  t.strictSame(
    settled.slice(0, kMaxStatisticsReads).map((s) => s.status === 'fulfilled' && s.value.sums.length),
    Array.from({ length: kMaxStatisticsReads }, () => stored.sums.length),
    'the reads in flight are answered',
  );
  const refused = settled[kMaxStatisticsReads]!;
  t.equal(refused.status, 'rejected', 'the read past the bound is refused');
  const err = (refused as PromiseRejectedResult).reason as FlagwireError;
  t.ok(err instanceof FlagwireError, String(err));
  t.equal(err.status, 503);
  t.equal(retryAfterSeconds(err, 60_000), 1, 'with a Retry-After');
  t.match(errorEnvelope(err, 'https://docs').error, 'Server busy');
  t.match(err.detail, `reading ${kMaxStatisticsReads} experiments' statistics already`);
  t.strictSame(await counter.experiment(scope, 'checkout-2026'), stored, 'once they are answered, a read is taken again');
});
