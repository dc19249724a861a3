// The tally (src/events/tally.ts) against a recomputation: random exposures and outcomes of many
// subjects, counted batch by batch into a real tally file, give sums equal, bit for bit, to those
// computed afresh from each subject's final totals; a subject's second exposure changes nothing; an
// outcome before the exposure (stored earlier, or stamped earlier) counts only as the covariate.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import {
  type CountedEvent,
  emptySums,
  kMaxExperimentsPerSubject,
  kMaxMetricsPerSubject,
  eraseSubject,
  millionths,
  tallyBatch,
} from '../../src/events/tally.js';
import { type MetricSums, TallyFile, type TallyScope } from '../../src/events/tally/tally-file.js';
import { recompute } from '../helpers/event-tally.js';
import { random } from '../helpers/seeded-random.js';

const scope: TallyScope = { projectId: 'prj_1', environment: 'production' };

function openTally(t: Test): TallyFile {
  const dir = mkdtempSync(join(tmpdir(), 'flagwire-tally-'));
  const tally = TallyFile.open(dir);
  t.teardown(async () => {
    await tally.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return tally;
}

function stored(tally: TallyFile, experiments: readonly string[]) {
  const arms = new Map<string, number>();
  const sums = new Map<string, MetricSums>();
  for (const experiment of experiments) {
    const read = tally.experiment(scope, experiment);
    for (const arm of read.arms) arms.set(`${experiment}\n${arm.variant}`, arm.subjects);
    for (const s of read.sums) sums.set(`${experiment}\n${s.variant}\n${s.metric}`, s.sums);
  }
  return { arms, sums };
}

t.test('random batches: the stored sums equal a recomputation from the events, exactly', async (t) => {
  for (const seed of [1, 2, 3]) {
    const tally = openTally(t);
    const next = random(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
    const subjects = Array.from({ length: 40 }, (_, i) => `user-${i}`);
    const experiments = ['checkout', 'search'];
    const metrics = ['purchase', 'revenue', 'clicks'];
    const start = 1_795_000_000_000;
    const all: CountedEvent[] = [];
    for (let batch = 0; batch < 20; batch++) {
      const events: CountedEvent[] = [];
      for (let i = 0; i < 1 + Math.floor(next() * 60); i++) {
        const at = start + Math.floor(next() * 3_600_000);
        events.push(
          next() < 0.3
            ? { kind: 'exposure', subject: pick(subjects), experiment: pick(experiments), variant: pick(['a', 'b', 'c']), at }
            : {
                kind: 'track',
                subject: pick(subjects),
                metric: pick(metrics),
                // Whole, fractional, negative and large values: none of them rounds in the sums.
                value: millionths(pick([1, 2.5, -0.75, 123456.789, 999_999_999, 0.000001])),
                at,
              },
        );
      }
      await tally.transact((txn) => tallyBatch(txn, scope, events, new Set()));
      all.push(...events);
    }
    const expected = recompute(all);
    const got = stored(tally, experiments);
    t.strictSame(got.arms, expected.arms, `seed ${seed}: each variant's subjects`);
    t.strictSame(got.sums, expected.sums, `seed ${seed}: every sum, bit for bit`);
    t.ok(
      [...got.sums.values()].some((s) => s.covariateEvents > 0 && s.events > 0),
      `seed ${seed}: both sides were exercised`,
    );
  }
});

t.test("a subject's first exposure fixes its variant; outcomes before it are the covariate", async (t) => {
  const tally = openTally(t);
  const at = 1_795_000_000_000;
  const track = (value: number, when: number): CountedEvent => ({
    kind: 'track',
    subject: 'u1',
    metric: 'revenue',
    value: millionths(value),
    at: when,
  });
  const first = await tally.transact((txn) =>
    tallyBatch(
      txn,
      scope,
      [
        track(5, at),
        { kind: 'exposure', subject: 'u1', experiment: 'checkout', variant: 'b', at: at + 10 },
        { kind: 'exposure', subject: 'u1', experiment: 'checkout', variant: 'a', at: at + 20 },
        track(2.5, at + 30),
        // Stamped before the exposure though stored after it: before it.
        track(1, at + 5),
      ],
      new Set(),
    ),
  );
  t.strictSame(first, { counted: 4, duplicates: 1, refused: [] }, 'the second exposure is a duplicate');
  const read = tally.experiment(scope, 'checkout');
  t.strictSame(read.arms, [{ variant: 'b', subjects: 1 }], 'counted once, in the variant of its first exposure');
  t.strictSame(read.sums, [
    {
      variant: 'b',
      metric: 'revenue',
      sums: {
        events: 1,
        subjects: 1,
        sum: 2_500_000n,
        sumOfSquares: 2_500_000n ** 2n,
        covariateEvents: 2,
        covariateSubjects: 1,
        covariateSum: 6_000_000n,
        covariateSumOfSquares: 6_000_000n ** 2n,
        sumOfProducts: 6_000_000n * 2_500_000n,
      },
    },
  ]);
  t.strictSame(
    tally.experiment({ ...scope, environment: 'staging' }, 'checkout'),
    { arms: [], sums: [] },
    'another environment holds nothing',
  );
});

t.test("a subject's state is bounded: past its metrics or experiments, an event is refused and named", async (t) => {
  const tally = openTally(t);
  const at = 1_795_000_000_000;
  const tracks: CountedEvent[] = Array.from({ length: kMaxMetricsPerSubject + 2 }, (_, i) => ({
    kind: 'track',
    subject: 'u1',
    metric: `m${i}`,
    value: 1_000_000n,
    at,
  }));
  // Every name declared: the environment's bound on undeclared names is not what this tests.
  const declared = new Set(tracks.map((e) => (e.kind === 'track' ? e.metric : '')));
  const first = await tally.transact((txn) => tallyBatch(txn, scope, tracks, declared));
  t.equal(first.counted, kMaxMetricsPerSubject);
  t.strictSame(
    first.refused.map((r) => r.position),
    [kMaxMetricsPerSubject, kMaxMetricsPerSubject + 1],
  );
  t.match(first.refused[0]!.reason, `has ${kMaxMetricsPerSubject} metrics already`);
  const again = await tally.transact((txn) => tallyBatch(txn, scope, [{ ...tracks[0]!, at: at + 1 }], declared));
  t.equal(again.counted, 1, 'a metric it has still counts');

  const exposures: CountedEvent[] = Array.from({ length: kMaxExperimentsPerSubject + 1 }, (_, i) => ({
    kind: 'exposure',
    subject: 'u2',
    experiment: `e${i}`,
    variant: 'a',
    at,
  }));
  const exposed = await tally.transact((txn) => tallyBatch(txn, scope, exposures, new Set()));
  t.equal(exposed.counted, kMaxExperimentsPerSubject);
  t.match(exposed.refused, [{ position: kMaxExperimentsPerSubject, reason: /in 100 experiments already/ }]);
});

t.test('a subject named as an object key would be (__proto__, constructor) is a subject like any other', async (t) => {
  const tally = openTally(t);
  const at = 1_795_000_000_000;
  const events: CountedEvent[] = [
    { kind: 'exposure', subject: '__proto__', experiment: 'constructor', variant: 'toString', at },
    { kind: 'track', subject: '__proto__', metric: '__proto__', value: 2_000_000n, at: at + 1 },
  ];
  await tally.transact((txn) => tallyBatch(txn, scope, events, new Set()));
  const read = tally.experiment(scope, 'constructor');
  t.strictSame(read.arms, [{ variant: 'toString', subjects: 1 }]);
  t.equal(read.sums[0]?.metric, '__proto__');
  t.equal(read.sums[0]?.sums.sum, 2_000_000n);
});

t.test("a subject erased takes back exactly what it added: the sums are the other subjects' alone", async (t) => {
  const tally = openTally(t);
  const next = random(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const subjects = Array.from({ length: 25 }, (_, i) => `user-${i}`);
  const start = 1_795_000_000_000;
  const all: CountedEvent[] = [];
  for (let batch = 0; batch < 10; batch++) {
    const events: CountedEvent[] = Array.from({ length: 40 }, () => {
      const at = start + Math.floor(next() * 3_600_000);
      return next() < 0.3
        ? { kind: 'exposure', subject: pick(subjects), experiment: pick(['checkout', 'search']), variant: pick(['a', 'b']), at }
        : { kind: 'track', subject: pick(subjects), metric: pick(['purchase', 'clicks']), value: millionths(pick([1, 2.5, -3])), at };
    });
    await tally.transact((txn) => tallyBatch(txn, scope, events, new Set()));
    all.push(...events);
  }
  const erased = new Set(['user-3', 'user-11', 'user-17']);
  const erase = async (subject: string) => (await tally.transact((txn) => eraseSubject(txn, scope, subject))).erased;
  for (const subject of erased) t.equal(await erase(subject), true, `${subject} was kept`);
  t.equal(await erase('user-3'), false, 'erased twice: nothing left the second time');
  const expected = recompute(all.filter((e) => !erased.has(e.subject)));
  const got = stored(tally, ['checkout', 'search']);
  // An arm or a sum whose subjects were all erased stays, at zero: compare what is not zero.
  const nonZero = <V>(m: Map<string, V>, zero: (v: V) => boolean) => new Map([...m].filter(([, v]) => !zero(v)));
  const empty = (s: MetricSums) =>
    JSON.stringify(s, (_, v) => (typeof v === 'bigint' ? String(v) : v)) ===
    JSON.stringify(emptySums(), (_, v) => (typeof v === 'bigint' ? String(v) : v));
  t.strictSame(
    nonZero(got.arms, (n) => n === 0),
    expected.arms,
    "each variant's subjects, without the erased",
  );
  t.strictSame(nonZero(got.sums, empty), nonZero(expected.sums, empty), 'every sum, bit for bit, without the erased');
});
