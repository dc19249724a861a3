// Exact counts after replay (issue 58, "Proved"): many random batches (exposures of two experiments,
// one of three variants; outcomes of several metrics, some stamped before their subject's exposure, some
// sent before it; exposures sent again; batches sent twice under their id; events the server rejects)
// go to a real server, several at once, with the project keeping raw events. The raw events are then
// exported, and the statistics recomputed from them here, by this file's own plain code in the export's
// order, equal GET /api/v1/experiments/{key}/statistics exactly, every sum as an exact decimal.
import t from 'tap';
import { call } from '../helpers/http.js';
import { emptySums } from '../../src/events/tally.js';
import type { MetricSums } from '../../src/events/tally/tally-file.js';
import { kColourFlag, must, startExperimentServer } from '../helpers/experiment-server.js';
import { random } from '../helpers/seeded-random.js';

const { base, world, clientKey } = await startExperimentServer(t);
const { secrets } = world;
must(
  await call(base, 'POST', '/api/v1/flags', {
    token: secrets.write,
    body: { ...kColourFlag, variants: { ...kColourFlag.variants, green: 'green' } },
  }),
  201,
);
must(await call(base, 'PATCH', '/api/v1/events/settings', { token: secrets.write, body: { rawEventRetentionDays: 30 } }), 200);

/** Flag key -> the experiment it runs and its variants. */
const kFlags: Record<string, { experiment: string; variants: string[] }> = {
  'new-checkout': { experiment: 'checkout-2026', variants: ['on', 'off'] },
  'button-colour': { experiment: 'colour-test', variants: ['red', 'blue', 'green'] },
};
const kMetrics = ['purchase', 'signup', 'time-on-page'];

const seed = Number(process.env.REPLAY_SEED ?? 58);
const rnd = random(seed);
const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
const now = Date.now();

function randomEvent(): object {
  const subject = `user-${Math.floor(rnd() * 60)}`;
  // Up to two hours back: outcomes are often stamped before their subject's exposure.
  const timestamp = now - Math.floor(rnd() * 7_200_000);
  const roll = rnd();
  if (roll < 0.3) {
    const flag = pick(Object.keys(kFlags));
    // One in twenty names a variant the flag does not have: rejected, never kept.
    const variant = rnd() < 0.05 ? 'purple' : pick(kFlags[flag]!.variants);
    return { kind: 'exposure', key: flag, targetingKey: subject, variant, timestamp };
  }
  const event: Record<string, unknown> = { kind: 'track', key: pick(kMetrics), targetingKey: subject, timestamp };
  // Cents, negative ones too; some without a value (a conversion: 1).
  if (rnd() < 0.85) event.value = Math.floor(rnd() * 200_000 - 20_000) / 100;
  return event;
}

t.test('the statistics equal a recomputation from the exported raw events, bit for bit', async (t) => {
  let accepted = 0;
  let sentTwice = 0;
  for (let round = 0; round < 15; round++) {
    // Four batches at once: their transactions interleave as the server applies them.
    const batches = Array.from({ length: 4 }, (_, i) => ({
      batchId: `b-${round}-${i}`,
      events: Array.from({ length: 1 + Math.floor(rnd() * 120) }, randomEvent),
    }));
    const answers = await Promise.all(batches.map((body) => call(base, 'POST', '/ofrep/v1/events', { token: clientKey, body })));
    for (const answer of answers) {
      t.equal(answer.status, 200, answer.text);
      accepted += answer.json.accepted;
    }
    if (round % 3 === 0) {
      // A retry whose answer was lost: counted once, answered as the first time.
      const again = await call(base, 'POST', '/ofrep/v1/events', { token: clientKey, body: batches[0] });
      t.strictSame(again.json, answers[0]!.json, 'a batch sent again is answered as before');
      sentTwice++;
    }
  }
  t.ok(sentTwice > 0);

  const exported = await fetch(`${base}/api/v1/events/export`, { headers: { authorization: `Bearer ${secrets.read}` } });
  t.equal(exported.status, 200);
  const raw = (await exported.text())
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as RawEvent);
  t.equal(raw.length, accepted, 'every event accepted is kept once: none of a batch sent twice, none rejected');
  for (let i = 1; i < raw.length; i++) if (raw[i]!.storedAt < raw[i - 1]!.storedAt) t.fail(`storedAt goes back at ${i}`);

  const recomputed = recompute(raw);
  t.ok(recomputed.size === 2, 'both experiments have subjects');
  for (const [experiment, expected] of recomputed) {
    const r = await call(base, 'GET', `/api/v1/experiments/${experiment}/statistics`, { token: secrets.read });
    t.equal(r.status, 200);
    t.strictSame(served(r.json), expected, `${experiment}: every variant's subjects and every sum`);
  }
});

interface RawEvent {
  kind: 'exposure' | 'track';
  key: string;
  targetingKey: string;
  variant: string | null;
  value: number | null;
  timestamp: number;
  storedAt: number;
}

/** Variant -> {subjects, metric -> its sums}, values in millionths (squares and products in millionths squared). */
type Statistics = Map<string, { subjects: number; metrics: Map<string, MetricSums> }>;

/**
 * The statistics from raw events alone, in their order, by the documented rules: a subject's first
 * exposure to an experiment fixes its variant and time; each outcome of the subject counts after
 * exposure in each experiment it was exposed to before this outcome was stored and not stamped later
 * than it, else before (the covariate), outcomes stored before the exposure included.
 */
function recompute(raw: readonly RawEvent[]): Map<string, Statistics> {
  const exposures = new Map<string, Map<string, { variant: string; at: number }>>(); // subject -> experiment -> first
  const outcomes = new Map<string, { metric: string; value: bigint; at: number; position: number }[]>(); // subject -> tracks
  const exposedAt = new Map<string, number>(); // subject + experiment -> position of the first exposure
  raw.forEach((event, position) => {
    if (event.kind === 'exposure') {
      const { experiment } = kFlags[event.key]!;
      const mine = exposures.get(event.targetingKey) ?? new Map();
      exposures.set(event.targetingKey, mine);
      if (!mine.has(experiment)) {
        mine.set(experiment, { variant: event.variant!, at: event.timestamp });
        exposedAt.set(`${event.targetingKey}\u0000${experiment}`, position);
      }
    } else {
      const list = outcomes.get(event.targetingKey) ?? [];
      outcomes.set(event.targetingKey, list);
      // Cents to millionths, without the server's rounding.
      list.push({ metric: event.key, value: BigInt(Math.round(event.value! * 100)) * 10_000n, at: event.timestamp, position });
    }
  });
  const result = new Map<string, Statistics>();
  for (const [subject, mine] of exposures)
    for (const [experiment, { variant, at }] of mine) {
      const stats = result.get(experiment) ?? new Map();
      result.set(experiment, stats);
      const arm = stats.get(variant) ?? { subjects: 0, metrics: new Map<string, MetricSums>() };
      stats.set(variant, arm);
      arm.subjects++;
      const first = exposedAt.get(`${subject}\u0000${experiment}`)!;
      const totals = new Map<string, { pre: bigint; preEvents: number; post: bigint; postEvents: number }>();
      for (const outcome of outcomes.get(subject) ?? []) {
        const total = totals.get(outcome.metric) ?? { pre: 0n, preEvents: 0, post: 0n, postEvents: 0 };
        totals.set(outcome.metric, total);
        if (outcome.position > first && outcome.at >= at) {
          total.post += outcome.value;
          total.postEvents++;
        } else {
          total.pre += outcome.value;
          total.preEvents++;
        }
      }
      for (const [metric, { pre, preEvents, post, postEvents }] of totals) {
        const s = arm.metrics.get(metric) ?? emptySums();
        arm.metrics.set(metric, s);
        s.events += postEvents;
        s.subjects += postEvents > 0 ? 1 : 0;
        s.sum += post;
        s.sumOfSquares += post * post;
        s.covariateEvents += preEvents;
        s.covariateSubjects += preEvents > 0 ? 1 : 0;
        s.covariateSum += pre;
        s.covariateSumOfSquares += pre * pre;
        s.sumOfProducts += pre * post;
      }
    }
  return result;
}

/** An exact decimal of the API to an integer of 10^-scale: "-12.5" at scale 6 is -12500000n. */
function units(decimal: string, scale: number): bigint {
  const [whole, fraction = ''] = decimal.replace('-', '').split('.');
  const n = BigInt(whole! + fraction.padEnd(scale, '0'));
  return decimal.startsWith('-') ? -n : n;
}

/** The route's answer in the recomputation's shape. */
function served(answer: any): Statistics {
  const stats: Statistics = new Map();
  for (const v of answer.variants)
    stats.set(v.variant, {
      subjects: v.subjects,
      metrics: new Map(
        v.metrics.map((m: any) => [
          m.metric,
          {
            events: m.events,
            subjects: m.subjects,
            sum: units(m.sum, 6),
            sumOfSquares: units(m.sumOfSquares, 12),
            covariateEvents: m.covariate.events,
            covariateSubjects: m.covariate.subjects,
            covariateSum: units(m.covariate.sum, 6),
            covariateSumOfSquares: units(m.covariate.sumOfSquares, 12),
            sumOfProducts: units(m.sumOfProducts, 12),
          },
        ]),
      ),
    });
  return stats;
}
