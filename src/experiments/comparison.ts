// What an experiment's results say of one treatment against the control on one metric: the shape that
// results.ts computes, verdict.ts puts into a sentence and the views and guards read. Its own module, so
// the sentence reads the comparison without importing the module that makes it.
import type { Posterior } from './bayes.js';
import type { Estimate } from './effect.js';
import type { MetricKind } from './moments.js';
import type { SequentialInterval } from './sequential.js';

/** An effect at this look: estimate, standard error, the confidence sequence's interval and its p-value. */
export type EffectResult = Estimate & SequentialInterval;

/** How a treatment compares with the control on one metric. */
export interface MetricComparison {
  readonly metric: string;
  readonly kind: MetricKind;
  readonly variant: string;
  /** Each arm's subjects and unadjusted mean (a conversion's rate). */
  readonly control: { readonly subjects: number; readonly mean: number };
  readonly treatment: { readonly subjects: number; readonly mean: number };
  /** The difference of means, CUPED-adjusted where there is a covariate. */
  readonly absolute: EffectResult;
  /** The lift relative to the control's mean; null where that mean is 0. */
  readonly relative: EffectResult | null;
  /** CUPED's slope and the share of the difference's variance it removed; null without a covariate. */
  readonly cuped: { readonly theta: number; readonly varianceReduction: number } | null;
  /** The Bayesian view of the lift (of the difference where there is no lift); null where nothing is known yet. */
  readonly bayes: Posterior | null;
  /** Whether the always-valid intervals of the lift and the difference both exclude 0, and which way (the difference's alone where there is no lift). */
  readonly decision: 'higher' | 'lower' | 'inconclusive';
  readonly verdict: string;
}
