// Rollouts by variant weights (issue 27, item 2): a step sets the weights of a flag's typed variants,
// written as the flag's (environment's) targeting, flagd's weighted split:
//
//   {"fractional": [bucketBy?, [variant, weight], [variant, weight], ...]}
//
// A rollout drives a split it owns whole: the targeting must be {} or a bare `fractional` when it
// starts, so that each step replaces one split with another and no other rule is lost. The split's
// leading bucketing expression (flagd's first argument when it is not a bucket), when it has one, is
// kept in every step. The rules here are pure; rollout-commands.ts writes the steps through PATCH.
import type { TypedVariants } from '../model/flags.js';
import type { RolloutStep, WeightsStep } from './rollouts.js';
import { sameJson } from '../flags/variant-rules.js';
import { keptArguments, splitWeights, weightsTargeting, weightsText } from '../flags/fractional-split.js';

type Targeting = Record<string, unknown>;

/** The largest total weight `fractional` splits (src/targeting/fractional.ts): above it every caller gets the default. */
const kMaxTotalWeight = 2147483647;

export function isWeightsStep(step: RolloutStep): step is WeightsStep {
  return 'variantWeights' in step;
}

/**
 * The problems of the steps themselves, the flag aside: kinds mixed, and weights whose total flagd
 * would not split (0, or more than it can bucket).
 */
export function weightStepProblems(steps: readonly RolloutStep[]): string[] {
  const problems: string[] = [];
  const first = steps[0];
  steps.forEach((step, i) => {
    if (first !== undefined && isWeightsStep(step) !== isWeightsStep(first))
      problems.push(
        `steps[${i}] ${isWeightsStep(step) ? 'sets variant weights' : 'sets a traffic percentage'} but steps[0] ${isWeightsStep(first) ? 'sets variant weights' : 'sets a traffic percentage'}: every step of a rollout is of one kind`,
      );
    if (!isWeightsStep(step)) return;
    const total = Object.values(step.variantWeights).reduce((sum, weight) => sum + weight, 0);
    if (total === 0) problems.push(`steps[${i}].variantWeights: the weights add up to 0; at least one must be above 0`);
    if (total > kMaxTotalWeight) problems.push(`steps[${i}].variantWeights: the weights add up to more than ${kMaxTotalWeight}`);
  });
  return problems;
}

/**
 * Why a rollout by variant weights cannot drive this flag (environment): it has no typed variants, its
 * targeting is another rule than a bare split, or a step names a variant it does not have.
 */
export function weightTargetProblems(typed: TypedVariants | undefined, steps: readonly RolloutStep[], env: string | null): string[] {
  const where = flagText(env);
  if (typed === undefined)
    return [
      `${where} has no variants: a rollout by variant weights sets the weights of a flag's typed variants (give it "variants" first, or roll out its trafficPercentage)`,
    ];
  const problems: string[] = [];
  const operators = Object.keys(typed.targeting).map((k) => `"${k}"`);
  if (keptArguments(typed.targeting) === null)
    problems.push(
      `${where} has a targeting rule that is not a bare split (its operator${operators.length === 1 ? ' is' : 's are'} ${operators.join(', ')}): a rollout by variant weights drives a targeting of {} or {"fractional": [...]} (a leading bucketing expression is kept); set it to one of those first`,
    );
  steps.forEach((step, i) => {
    if (isWeightsStep(step)) problems.push(...unknownVariants(typed, step, i, env));
  });
  return problems;
}

/** The variants step `index` names that the flag (environment) does not have, each as a problem. */
export function unknownVariants(typed: TypedVariants, step: WeightsStep, index: number, env: string | null): string[] {
  const variants = Object.keys(typed.variants).join(', ');
  return Object.keys(step.variantWeights)
    .filter((name) => !Object.hasOwn(typed.variants, name))
    .map((name) => `steps[${index}].variantWeights: "${name}" is not a variant of ${flagText(env)} (its variants: ${variants})`);
}

const flagText = (env: string | null) => (env === null ? 'this flag' : `this flag (environment ${env})`);

/**
 * What changed by hand since step `index` set its weights, or null when nothing did: the flag's
 * (environment's) targeting, compared with what the step wrote; and the variants, which must still
 * have every name the next step sets.
 */
export function weightsHandChange(
  initial: Targeting,
  steps: readonly RolloutStep[],
  index: number,
  typed: TypedVariants | undefined,
): string | null {
  const step = steps[index] as WeightsStep;
  const set = `step ${index + 1} set ${weightsText(step.variantWeights)}`;
  if (typed === undefined) return `the flag's variants were removed by hand (${set})`;
  if (!sameJson(typed.targeting, weightsTargeting(initial, step.variantWeights))) {
    const now = splitWeights(typed.targeting);
    return `the targeting was changed by hand${now === null ? ' to another rule' : ` to ${now}`} (${set})`;
  }
  const next = steps[index + 1];
  const gone = next === undefined ? [] : Object.keys((next as WeightsStep).variantWeights).filter((n) => !Object.hasOwn(typed.variants, n));
  if (gone.length === 0) return null;
  return `the flag's variants were changed by hand: step ${index + 2} sets ${gone.map((n) => `"${n}"`).join(', ')}, no longer a variant`;
}
