// `flagwire experiment create|list|show|start|stop|results` (issue 59), run as users run it: made with the
// Management API's rules and words, started (the flag's state takes the key) and stopped; results from
// the data directory's tally file equal src/experiments computed from the same statistics, and the
// look's sample-ratio p-value is kept; bad input exits 1 with {error, detail} and changes nothing.
import t from 'tap';
import { statisticsView } from '../../src/events/statistics.js';
import { tallyBatch } from '../../src/events/tally.js';
import { experimentResults, kDefaultAnalysis } from '../../src/experiments/results.js';
import { TallyFile } from '../../src/events/tally/tally-file.js';
import { cli, expectAllRefused, ok } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { buildWorld } from '../helpers/world.js';

const dataDir = tempDir(t);
const world = buildWorld(dataDir);
const { ids } = world;
await world.store.close();

const create = [
  'experiment',
  'create',
  ids.single,
  'checkout-2026',
  '--flag',
  ids.flag,
  '--variant',
  'off=1',
  '--variant',
  'on=1',
  '--control',
  'off',
  '--metric',
  'purchase:conversion',
  '--metric',
  'revenue:mean',
  '--primary',
  'purchase',
  '--planned',
  '500',
];

t.test("bad input exits 1 with the API's words and changes nothing", async (t) => {
  await expectAllRefused(t, dataDir, [
    [[...create, '--alpha', '1'], { error: 'Invalid request', detail: /alpha/ }],
    [[...create.slice(0, -1), '0'], { error: 'Invalid request', detail: /plannedSubjects/ }],
    [create.map((a) => (a === 'off=1' ? 'blue=1' : a)), { error: 'Invalid request', detail: /control: "off" must be one of variants/ }],
    [['experiment', 'start', ids.single, 'nothing'], { error: 'Not found', detail: /No experiment "nothing"/ }],
    [['experiment', 'show', ids.multi, 'checkout-2026'], { error: 'Invalid request', detail: /add the "env"/ }],
  ]);
});

t.test('made, started, counted, its results read and kept, stopped', async (t) => {
  const made = await ok(t, dataDir, [...create, '--as', ids.editor]);
  t.match(made, {
    key: 'checkout-2026',
    status: 'draft',
    variants: [
      { variant: 'off', weight: 1 },
      { variant: 'on', weight: 1 },
    ],
  });
  t.match(await ok(t, dataDir, ['experiment', 'start', ids.single, 'checkout-2026', '--as', ids.editor]), { status: 'running' });
  t.equal((await ok(t, dataDir, ['flag', 'show', ids.flag])).experiment, 'checkout-2026', "the flag's state carries the key");

  // What the events thread would count: 30 subjects on, 10 off (a split the check can find skewed).
  const scope = { projectId: ids.single, environment: '' };
  const tally = TallyFile.open(dataDir);
  const events = Array.from({ length: 40 }, (_, i) => [
    { kind: 'exposure' as const, subject: `s${i}`, experiment: 'checkout-2026', variant: i % 4 === 0 ? 'off' : 'on', at: 1000 + i },
    ...(i % 3 === 0 ? [{ kind: 'track' as const, subject: `s${i}`, metric: 'purchase', value: 1_000_000n, at: 2000 + i }] : []),
    { kind: 'track' as const, subject: `s${i}`, metric: 'revenue', value: BigInt(i) * 500_000n, at: 2000 + i },
  ]).flat();
  await tally.transact((txn) => tallyBatch(txn, scope, events, new Set(['purchase', 'revenue'])));
  const statistics = statisticsView('checkout-2026', null, tally.experiment(scope, 'checkout-2026'));
  await tally.close();

  const results = await ok(t, dataDir, ['experiment', 'results', ids.single, 'checkout-2026']);
  const expected = experimentResults(
    statistics,
    { control: 'off', allocation: made.variants, metrics: made.metrics, plannedSubjects: 500 },
    { ...kDefaultAnalysis, previousSrmPValue: 1 },
    { primaryMetric: made.primaryMetric, status: made.status, flag: { id: made.flagId, environment: made.environment, typed: false } },
  );
  t.equal(results.srm.pValue, expected.srm.pValue);
  t.ok(results.srm.pValue < 1, 'a 75/25 split against 50/50 lowers it');
  t.same(
    results.comparisons.map((c: { metric: string; absolute: { estimate: number; lower: number } }) => [
      c.metric,
      c.absolute.estimate,
      c.absolute.lower,
    ]),
    expected.comparisons.map((c) => [c.metric, c.absolute.estimate, c.absolute.lower]),
  );
  t.equal(results.comparisons[0].treatment.subjects, 30);
  const human = await cli(dataDir, ['experiment', 'results', ids.single, 'checkout-2026'], { json: false });
  t.match(human.stdout, /Sample ratio: .*\nMETRIC\s+VARIANT\s+DECISION\s+VERDICT\npurchase\s+on\s+/);
  t.equal(
    (await ok(t, dataDir, ['experiment', 'show', ids.single, 'checkout-2026'])).lowestSrmPValue,
    results.srm.pValue,
    'the look is kept',
  );

  t.match(await ok(t, dataDir, ['experiment', 'stop', ids.single, 'checkout-2026']), { status: 'stopped' });
  t.notOk('experiment' in (await ok(t, dataDir, ['flag', 'show', ids.flag])), "the flag's key is cleared");
  const listed = await cli(dataDir, ['experiment', 'list', ids.single], { json: false });
  t.match(listed.stdout, /KEY\s+STATUS\s+FLAG\s+PRIMARY\s+STARTED\ncheckout-2026\s+stopped\s+/);
});
