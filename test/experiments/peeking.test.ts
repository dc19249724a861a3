// Peeking, simulated (issue 59's proof): 2,000 A/A experiments, each read every day for 14 days through
// the statistics view. The always-valid confidence sequence declares a winner (an interval that excludes
// 0, either way, at any look) in at most 5% of them; a plain fixed-horizon test read the same way, on the
// same sums, declares one in at least 15%, so the harness can see what peeking does.
//
// Each subject is drawn one by one (seeded): an arm by a fair coin, a purchase with probability 0.1, its
// value uniform on 1..100. The metric is read both ways: as a conversion (0/1 per subject) and as the
// mean value per subject. 500 subjects a day; the plan is the 7,000 of 14 days.
import t from 'tap';
import { experimentResults } from '../../src/experiments/results.js';
import { evenArms, evenPlan, Random, statisticsOf } from './simulate.js';

const kExperiments = 2000;
const kDays = 14;
const kSubjectsPerDay = 500;
const plan = evenPlan(
  [
    { metric: 'purchase', kind: 'conversion' },
    { metric: 'purchase', kind: 'mean' },
  ],
  kDays * kSubjectsPerDay,
);
// The fixed-horizon test's two-sided 5% critical value. A t-test's at these sizes (Welch's degrees of
// freedom are above 200 from the first day) is within 1% of it: 1.972 at 200.
const kFixedCritical = 1.959963984540054;

t.test('2,000 A/A experiments read daily for 14 days', async (t) => {
  const random = new Random(59);
  const sequentialWinners = { conversion: 0, mean: 0 };
  const peekingWinners = { conversion: 0, mean: 0 };
  for (let e = 0; e < kExperiments; e++) {
    const arms = evenArms(['purchase']);
    const seen = { sequential: new Set<string>(), peeking: new Set<string>() };
    for (let day = 0; day < kDays; day++) {
      for (let s = 0; s < kSubjectsPerDay; s++) {
        const a = arms.get(random.uniform() < 0.5 ? 'off' : 'on')!;
        a.subjects++;
        const buys = random.uniform() < 0.1;
        a.metrics.get('purchase')!.add(buys ? 1 + Math.floor(random.uniform() * 100) : 0, buys ? 1 : 0);
      }
      const results = experimentResults(statisticsOf(arms, 1_000_000n), plan);
      for (const c of results.comparisons) {
        if (c.decision !== 'inconclusive') seen.sequential.add(c.kind);
        if (Math.abs(c.absolute.estimate / c.absolute.standardError) > kFixedCritical) seen.peeking.add(c.kind);
      }
    }
    for (const kind of seen.sequential) sequentialWinners[kind as 'conversion' | 'mean']++;
    for (const kind of seen.peeking) peekingWinners[kind as 'conversion' | 'mean']++;
  }
  for (const kind of ['conversion', 'mean'] as const) {
    const sequential = sequentialWinners[kind] / kExperiments;
    const peeking = peekingWinners[kind] / kExperiments;
    t.ok(sequential <= 0.05, `${kind}: the confidence sequence declared ${(sequential * 100).toFixed(2)}% winners (at most 5%)`);
    t.ok(peeking >= 0.15, `${kind}: the fixed-horizon test read daily declared ${(peeking * 100).toFixed(2)}% winners (at least 15%)`);
  }
});
