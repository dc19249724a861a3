// What a schema cannot say of an Unleash model (src/model/unleash-model.ts): each part must be one Flagwire evaluates, so
// a stored model never says something it does not do.
import { parseStrict } from '../targeting/sem-ver.js';
import { compileRegex } from './constraints.js';
import {
  kUnleashOperators,
  kUnleashStrategies,
  type UnleashConstraint,
  type UnleashModel,
  type UnleashStrategy,
  type UnleashStrategyVariant,
} from '../model/unleash-model.js';

/** The operators that take a list of operands (`values`); every other one takes one (`value`). */
const kListOperators: ReadonlySet<string> = new Set(['IN', 'NOT_IN', 'STR_CONTAINS', 'STR_STARTS_WITH', 'STR_ENDS_WITH', 'IN_CIDR']);

/**
 * The problems of a state's model as a create or patch would store it, each prefixed `unleash` (then its
 * path in the model): the model's own, and typed variants or an experiment beside it (`typed`,
 * `experiment`), which would make two rules of one state.
 */
export function unleashStateProblems(model: UnleashModel, typed: boolean, experiment: boolean): string[] {
  const problems = modelProblems(model).map((p) => `unleash.${p}`);
  if (experiment)
    problems.unshift("unleash: a state with Unleash's model has no experiment (Unleash's variants are its own): drop one of them");
  if (typed)
    problems.unshift(
      "unleash: a state with Unleash's model has no typed variants (variants, defaultVariant, targeting): send one or the other",
    );
  return problems;
}

/**
 * What is wrong with a model that has the schema's shape, each said with where it is (`at`, e.g.
 * `strategies[0].constraints[1]`); empty when Flagwire evaluates every part of it. A model the SDKs would
 * read as never true in part (an unknown strategy or operator, a segment that does not exist, an operand
 * that does not parse) is refused: it would say something it does not do.
 */
export function modelProblems(model: UnleashModel): string[] {
  const problems: string[] = [];
  const segmentIds = new Set<number>();
  (model.segments ?? []).forEach((segment, i) => {
    if (segmentIds.has(segment.id)) problems.push(`segments[${i}]: the id ${segment.id} is used twice`);
    segmentIds.add(segment.id);
    segment.constraints.forEach((c, j) => {
      constraintProblems(c, `segments[${i}].constraints[${j}]`, problems);
    });
  });
  model.strategies.forEach((strategy, i) => {
    const at = `strategies[${i}]`;
    if (!(kUnleashStrategies as readonly string[]).includes(strategy.name)) {
      problems.push(`${at}: "${strategy.name}" is not a strategy Flagwire evaluates (${kUnleashStrategies.join(', ')})`);
    }
    parameterProblems(strategy, at, problems);
    (strategy.constraints ?? []).forEach((c, j) => {
      constraintProblems(c, `${at}.constraints[${j}]`, problems);
    });
    for (const id of strategy.segments ?? []) {
      if (!segmentIds.has(id)) problems.push(`${at}.segments: no segment of the model has the id ${id}`);
    }
    variantProblems(strategy.variants ?? [], `${at}.variants`, problems);
  });
  variantProblems(model.variants ?? [], 'variants', problems);
  return problems;
}

function parameterProblems(strategy: UnleashStrategy, at: string, problems: string[]): void {
  const parameters = strategy.parameters ?? {};
  const percentage = (name: string) => {
    const value = parameters[name];
    const n = Number(value);
    if (value === undefined || value === '' || !Number.isFinite(n) || n < 0 || n > 100) {
      problems.push(`${at}.parameters.${name}: a percentage from 0 to 100 is required`);
    }
  };
  switch (strategy.name) {
    case 'flexibleRollout':
      percentage('rollout');
      break;
    case 'gradualRolloutUserId':
    case 'gradualRolloutSessionId':
    case 'gradualRolloutRandom':
      percentage('percentage');
      break;
    case 'userWithId':
      if (typeof parameters.userIds !== 'string') problems.push(`${at}.parameters.userIds: a comma-separated list of user ids is required`);
      break;
    case 'remoteAddress':
      if (typeof parameters.IPs !== 'string') problems.push(`${at}.parameters.IPs: a comma-separated list of addresses is required`);
      break;
  }
}

function constraintProblems(constraint: UnleashConstraint, at: string, problems: string[]): void {
  const { operator } = constraint;
  if (!(kUnleashOperators as readonly string[]).includes(operator)) {
    problems.push(`${at}: "${operator}" is not one of Unleash's operators (${kUnleashOperators.join(', ')})`);
    return;
  }
  if (!kListOperators.has(operator)) {
    if (constraint.value === undefined) problems.push(`${at}: ${operator} takes one operand, "value"`);
    else if (operator.startsWith('NUM_') && Number.isNaN(Number(constraint.value)))
      problems.push(`${at}: "${constraint.value}" is not a number`);
    else if (operator.startsWith('DATE_') && Number.isNaN(Date.parse(constraint.value)))
      problems.push(`${at}: "${constraint.value}" is not a date`);
    else if (operator.startsWith('SEMVER_') && parseStrict(constraint.value) === null)
      problems.push(`${at}: "${constraint.value}" is not a semantic version (MAJOR.MINOR.PATCH[-PRERELEASE])`);
    else if (operator === 'REGEX' && compileRegex(constraint.value, constraint.caseInsensitive === true) === null)
      problems.push(`${at}: "${constraint.value}" is not a regular expression RE2 accepts`);
  } else if (constraint.values === undefined) problems.push(`${at}: ${operator} takes a list of operands, "values"`);
}

function variantProblems(variants: readonly UnleashStrategyVariant[], at: string, problems: string[]): void {
  const names = new Set<string>();
  variants.forEach((variant, i) => {
    if (names.has(variant.name)) problems.push(`${at}[${i}]: the name "${variant.name}" is used twice`);
    names.add(variant.name);
  });
}
