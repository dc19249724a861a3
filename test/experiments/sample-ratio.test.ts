// The sequential sample-ratio check, simulated (issue 59's proof): 2,000 experiments of 100,000 subjects
// each, the arms' counts read every day for 14 days through the statistics view, with the check's
// running p-value carried from look to look. Against an even plan: an even split raises a false alarm
// in at most α = 5% of them (a chi-squared test read the same way: at least 15%, so the harness can
// see peeking), and a 50.5/49.5 split is caught in at least 40%. The check reads only the arms' counts,
// so each day's are drawn (seeded) from their exact distribution, Binomial(the day's subjects, P(on)):
// the same counts, in law, as drawing each subject's arm one by one, at a tiny share of the cost.
import t from 'tap';
import { experimentResults } from '../../src/experiments/results.js';
import { binomial, evenArms, evenPlan, Random, statisticsOf } from './simulate.js';

const kExperiments = 2000;
const kDays = 14;
const kSubjects = 100_000;
const plan = evenPlan([], kSubjects);
// The chi-squared test's 5% critical value at one degree of freedom: 1.959964².
const kChiSquared = 3.841458820694124;

/** How many of the experiments, with P(on) = `share`, the check (and a daily chi-squared test) flag at any look. */
function simulate(seed: number, share: number) {
  const random = new Random(seed);
  let flagged = 0;
  let chiSquaredFlagged = 0;
  for (let e = 0; e < kExperiments; e++) {
    const arms = evenArms([]);
    const off = arms.get('off')!;
    const on = arms.get('on')!;
    let previousSrmPValue = 1;
    let chiSquaredAlarm = false;
    for (let day = 0; day < kDays; day++) {
      const today = Math.round(((day + 1) * kSubjects) / kDays) - Math.round((day * kSubjects) / kDays);
      const toOn = binomial(random, today, share);
      on.subjects += toOn;
      off.subjects += today - toOn;
      const { srm } = experimentResults(statisticsOf(arms, 1_000_000n), plan, {
        alpha: 0.05,
        priorSd: null,
        srmTolerance: 0.01,
        previousSrmPValue,
      });
      previousSrmPValue = srm.pValue;
      const n = off.subjects + on.subjects;
      if ((on.subjects - off.subjects) ** 2 / n > kChiSquared) chiSquaredAlarm = true;
      // The p-value is the running minimum: a mismatch found at any look is still one at the last.
      if (day === kDays - 1 && srm.verdict === 'mismatch') flagged++;
    }
    if (chiSquaredAlarm) chiSquaredFlagged++;
  }
  return { flagged: flagged / kExperiments, chiSquared: chiSquaredFlagged / kExperiments };
}

t.test('the daily counts are drawn from their binomial law', async (t) => {
  const random = new Random(7);
  const [n, p, draws] = [7143, 0.505, 20_000];
  let sum = 0;
  let squares = 0;
  for (let i = 0; i < draws; i++) {
    const k = binomial(random, n, p);
    sum += k;
    squares += k * k;
  }
  const mean = sum / draws;
  const variance = squares / draws - mean * mean;
  const sd = Math.sqrt(n * p * (1 - p));
  t.ok(Math.abs(mean - n * p) < (4 * sd) / Math.sqrt(draws), `mean ${mean} against np = ${n * p}`);
  t.ok(
    Math.abs(variance / (n * p * (1 - p)) - 1) < 0.05,
    `variance ${variance.toFixed(1)} against np(1 − p) = ${(n * p * (1 - p)).toFixed(1)}`,
  );
  t.equal(binomial(random, 10, 1e-9), 0, 'an outcome of all but no chance: 0');
});

t.test('an even split, read daily: false alarms at most α', async (t) => {
  const { flagged, chiSquared } = simulate(505, 0.5);
  t.ok(flagged <= 0.05, `the sequential check flagged ${(flagged * 100).toFixed(2)}% (at most 5%)`);
  t.ok(chiSquared >= 0.15, `a chi-squared test read daily flagged ${(chiSquared * 100).toFixed(2)}% (at least 15%)`);
});

t.test('a 50.5/49.5 split at 100,000 subjects: caught in at least 40%', async (t) => {
  const { flagged } = simulate(495, 0.505);
  t.ok(flagged >= 0.4, `the sequential check caught ${(flagged * 100).toFixed(2)}% (at least 40%)`);
});
