// The plain sentence a results page leads with: what the always-valid intervals say, in the metric's
// words, and what to do. A sentence never claims more than the numbers shown beside it: "raises" only
// where the lift's and the difference's intervals are both above 0; where the two disagree, or the
// Bayesian chance to beat control reads more into this look than the interval does, it says why; and it
// never calls an effect "none", since an interval that contains 0 also contains effects either side of
// it. Only the primary metric's sentence says what to do with the experiment: stop while it runs, ship
// or keep a variant once it stopped, with the step that does it.
import { numberFormatOnUse } from '../load-on-use.js';
import type { MetricComparison } from './comparison.js';
import type { ExperimentStatus } from './records.js';
import type { SrmResult } from './srm.js';

const kFigures = numberFormatOnUse({ maximumSignificantDigits: 3 });
const kCount = numberFormatOnUse();
const kPercent = numberFormatOnUse({ minimumFractionDigits: 1, maximumFractionDigits: 1 });

const kRoughCount = numberFormatOnUse({ maximumSignificantDigits: 2 });

/**
 * The sample-ratio check as a sentence: where it has found no mismatch but cannot rule one out, what it
 * can tell at the planned size (or at the subjects in, once past it) and what it takes to rule out the
 * tolerance: a check that has not found a mismatch has not shown there is none.
 */
export function srmSentence(srm: SrmResult, subjects: number, plannedSubjects: number, tolerance: number): string {
  const p = srm.pValue.toPrecision(2);
  if (srm.verdict === 'mismatch')
    return `The arms' subjects do not match the planned split (p = ${p}): find the cause before trusting any result.`;
  if (srm.verdict === 'no-mismatch') return `The arms' subjects match the planned split (p = ${p}).`;
  const at =
    subjects < plannedSubjects ? `the planned ${kCount.format(plannedSubjects)} subjects` : `these ${kCount.format(subjects)} subjects`;
  return `Not enough data to rule out a mismatch yet (p = ${p}): at ${at} the check can rule out only an arm off its planned share by more than ${kPercent.format(srm.resolution * 100)}% of it, not a smaller one; ruling out ${kPercent.format(tolerance * 100)}% takes about ${kRoughCount.format(srm.subjectsToRuleOut)} subjects.`;
}

/** Where the experiment stands, for what its primary metric's sentence says to do. */
export interface VerdictStage {
  /** The metric that decides; the other metrics' sentences say only what they show. */
  readonly primaryMetric: string;
  readonly status: ExperimentStatus;
  /** The experiment's flag, for the step that serves one variant to everyone once it stopped. */
  readonly flag: { readonly id: string; readonly environment: string | null; readonly typed: boolean };
}

/** What a sentence is told besides the comparison: the sample-ratio check, the size against the plan, the stage. */
export interface VerdictContext {
  readonly srm: SrmResult;
  /** The control's variant, the one kept where no effect is shown. */
  readonly control: string;
  readonly alpha: number;
  readonly subjects: number;
  readonly plannedSubjects: number;
  /** Absent (a release guard's reading): the sentence says what the numbers show and nothing to do. */
  readonly stage?: VerdictStage;
}

type Comparison = Omit<MetricComparison, 'verdict'>;

/** An effect's size in its metric's words: a lift in %, a conversion's difference in points, a mean's in its units. */
function size(value: number, kind: 'relative' | 'conversion' | 'mean'): string {
  if (kind === 'relative') return `${kPercent.format(value * 100)}%`;
  if (kind === 'conversion') return `${kPercent.format(value * 100)} points`;
  return kFigures.format(value);
}

/** Which side of 0 an interval lies on, if it lies on one. */
function side(interval: { lower: number; upper: number }): 'above' | 'below' | null {
  return interval.lower > 0 ? 'above' : interval.upper < 0 ? 'below' : null;
}

/** The command that makes the flag serve `variant` to everyone in the experiment's environment. */
export function serveStep(flag: VerdictStage['flag'], variant: string): string {
  const env = flag.environment === null ? '' : ` --env ${flag.environment}`;
  if (flag.typed) return `npx flagwire flag variants ${flag.id} --default-variant ${variant} --targeting '{}'${env}`;
  const body = variant === 'on' ? '{"enabled": true, "trafficPercentage": 100}' : '{"enabled": false}';
  const query = flag.environment === null ? '' : `?env=${flag.environment}`;
  return `PATCH /api/v1/flags/${flag.id}${query} ${body}`;
}

/**
 * What the primary metric's sentence says to do, after "; ": `shown` is the side of 0 both intervals
 * agree on, or null; `known` whether there is any interval yet. Empty for another metric, or without a stage.
 */
function action(c: Comparison, context: VerdictContext, shown: 'above' | 'below' | null, known: boolean): string {
  const { stage } = context;
  if (stage === undefined || c.metric !== stage.primaryMetric || stage.status === 'draft') return '';
  const keep = `keep ${context.control}: \`${serveStep(stage.flag, context.control)}\``;
  if (stage.status === 'stopped') {
    if (shown === null) return `; it has stopped without showing an effect: ${keep}`;
    const better = shown === 'above' ? 'higher' : 'lower';
    return `; it has stopped: where a ${better} ${c.metric} is better, ship ${c.variant}: \`${serveStep(stage.flag, c.variant)}\`; otherwise ${keep}`;
  }
  if (shown !== null) return '; you can stop';
  if (!known) return '; keep it running';
  if (context.subjects < context.plannedSubjects)
    return `; keep it running: ${kCount.format(context.subjects)} of ${kCount.format(context.plannedSubjects)} planned subjects`;
  return '; the planned size is reached: you can stop, or keep it running to narrow the interval';
}

/** The comparison as a sentence, given the sample-ratio check, the size against the plan and the stage. */
export function metricVerdict(c: Comparison, context: VerdictContext): string {
  if (context.srm.verdict === 'mismatch')
    return `The arms' subjects do not match the planned split (p = ${context.srm.pValue.toPrecision(2)}): ${c.variant}'s results on ${c.metric} cannot be trusted until the cause is found.`;
  const read = c.relative ?? c.absolute;
  const kind = c.relative !== null ? 'relative' : c.kind;
  if (!Number.isFinite(read.lower) || !Number.isFinite(read.upper))
    return `Not enough subjects yet to compare ${c.variant} with the control on ${c.metric}${action(c, context, null, false)}.`;
  const shown = side(read);
  const absolute = side(c.absolute);
  if (shown !== null && (c.relative === null || absolute === shown)) {
    const raises = shown === 'above';
    const [near, far] = raises ? [read.lower, read.upper] : [-read.upper, -read.lower];
    return `${c.variant} ${raises ? 'raises' : 'lowers'} ${c.metric} by ${size(Math.abs(read.estimate), kind)} (${size(near, kind)} to ${size(far, kind)})${action(c, context, shown, true)}.`;
  }
  const interval = `${size(read.lower, kind)} to ${size(read.upper, kind)}`;
  let sentence: string;
  if (c.relative !== null && absolute !== shown) {
    // The lift divides by the control's mean, itself uncertain: its interval can hold 0 where the difference's does not, or the other way round.
    const difference = `${size(c.absolute.lower, c.kind)} to ${size(c.absolute.upper, c.kind)}`;
    const [clear, clearInterval, p, unclear, unclearInterval] =
      absolute !== null
        ? ['difference', difference, c.absolute.pValue, 'lift', interval]
        : ['lift', interval, c.relative.pValue, 'difference', difference];
    sentence = `${c.variant}'s effect on ${c.metric} is not shown yet: the ${clear} is ${absolute ?? shown} 0 (${clearInterval}, p = ${p.toPrecision(2)}) but the ${unclear}'s interval holds 0 (${unclearInterval}); an effect is shown only where both agree, and the lift also carries the uncertainty of the control's mean`;
  } else if (context.subjects >= context.plannedSubjects)
    sentence = `No difference detected between ${c.variant} and the control on ${c.metric} at the planned ${kCount.format(context.plannedSubjects)} subjects (${interval}): the data cannot tell its effect from 0, nor rule out one as large as either end`;
  else sentence = `No difference detected between ${c.variant} and the control on ${c.metric} yet (${interval})`;
  const chance = c.bayes?.chanceToBeatControl;
  if (chance !== undefined && (chance >= 1 - context.alpha / 2 || chance <= context.alpha / 2))
    sentence += `; the ${kPercent.format(chance * 100)}% chance to beat control reads this look as if it were the only one, while the interval holds at every look, so it is wider and decides`;
  return `${sentence}${action(c, context, null, true)}.`;
}
