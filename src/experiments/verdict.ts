// The plain sentence a results page leads with: what the always-valid interval says, in the metric's
// words, and whether the experiment can stop. A sentence never claims more than the interval: "raises"
// only where the whole interval is above 0, and "no difference" never where it is not yet known.
import { numberFormatOnUse } from '../load-on-use.js';
import type { MetricComparison } from './comparison.js';
import type { SrmResult } from './srm.js';

const kFigures = numberFormatOnUse({ maximumSignificantDigits: 3 });
const kCount = numberFormatOnUse();
const kPercent = numberFormatOnUse({ minimumFractionDigits: 1, maximumFractionDigits: 1 });

/** An effect's size in its metric's words: a lift in %, a conversion's difference in points, a mean's in its units. */
function size(value: number, kind: 'relative' | 'conversion' | 'mean'): string {
  if (kind === 'relative') return `${kPercent.format(value * 100)}%`;
  if (kind === 'conversion') return `${kPercent.format(value * 100)} points`;
  return kFigures.format(value);
}

/** The comparison as a sentence, given the sample-ratio check and how many subjects are in against the plan. */
export function metricVerdict(c: Omit<MetricComparison, 'verdict'>, srm: SrmResult, subjects: number, plannedSubjects: number): string {
  if (srm.verdict === 'mismatch')
    return `The arms' subjects do not match the planned split (p = ${srm.pValue.toPrecision(2)}): ${c.variant}'s results on ${c.metric} cannot be trusted until the cause is found.`;
  const read = c.relative ?? c.absolute;
  const kind = c.relative !== null ? 'relative' : c.kind;
  if (!Number.isFinite(read.lower) || !Number.isFinite(read.upper))
    return `Not enough subjects yet to compare ${c.variant} with the control on ${c.metric}; keep it running.`;
  if (c.decision !== 'inconclusive') {
    const raises = c.decision === 'higher';
    const [near, far] = raises ? [read.lower, read.upper] : [-read.upper, -read.lower];
    return `${c.variant} ${raises ? 'raises' : 'lowers'} ${c.metric} by ${size(Math.abs(read.estimate), kind)} (${size(near, kind)} to ${size(far, kind)}); you can stop.`;
  }
  const [lower, upper] = [size(read.lower, kind), size(read.upper, kind)];
  if (subjects < plannedSubjects)
    return `No difference detected between ${c.variant} and the control on ${c.metric} yet (${lower} to ${upper}); keep it running: ${kCount.format(subjects)} of ${kCount.format(plannedSubjects)} planned subjects.`;
  return `${c.variant}'s effect on ${c.metric} is between ${lower} and ${upper}, too small to tell from none at the planned ${kCount.format(plannedSubjects)} subjects; you can stop.`;
}
