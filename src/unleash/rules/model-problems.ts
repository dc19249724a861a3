// What a schema cannot say of an Unleash model (src/model/unleash-model.ts), in two lists:
//   problems  a part Flagwire would evaluate otherwise than Unleash's SDKs, or one that is malformed: the
//             model is refused, so a stored model never says something it does not do;
//   warnings  a part the SDKs read, and so Flagwire reads, as never met (an operator they do not know, a
//             segment that does not exist, an expression RE2 does not compile): stored and served as
//             given, so every SDK answers as Flagwire does (Unleash's own server stores such models, and its
//             client specification asks them), and named on the flag's representation (unleashWarnings).
import { parseStrict } from '../../targeting/sem-ver.js';
import { compileRegex } from './constraints.js';
import {
  kUnleashOperators,
  kUnleashStrategies,
  type UnleashConstraint,
  type UnleashModel,
  type UnleashStrategy,
  type UnleashStrategyVariant,
} from '../../model/unleash-model.js';

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
 * The fields of a flag state that a state in Unleash's model keeps and does not read (its strategies
 * decide; docs/design.md §2d), each with what says the same thing in the model.
 */
const kUnreadFields = {
  trafficPercentage: 'a strategy\'s rollout (flexibleRollout\'s "rollout" parameter)',
  audienceId: "a strategy's constraints or segments",
  cohorts: 'a strategy\'s constraints (or userWithId\'s "userIds")',
} as const;

export type UnreadField = keyof typeof kUnreadFields;

export const kUnreadByUnleash = Object.keys(kUnreadFields) as readonly UnreadField[];

/** Why a patch may not change `field` of a state that keeps its Unleash model: it would change no answer. */
export function unreadFieldProblem(field: UnreadField): string {
  return `"${field}": this state answers by Unleash's model, which does not read it, so changing it would change no answer: change ${kUnreadFields[field]} in "unleash" instead, or send "unleash": null to leave Unleash's model`;
}

/**
 * What is wrong with a model that has the schema's shape, each said with where it is (`at`, e.g.
 * `strategies[0].constraints[1]`); empty when Flagwire evaluates every part of it as the SDKs do. A model
 * with an unknown strategy or a malformed part (an operand that does not parse, a percentage out of
 * range, an id used twice) is refused: it would say something it does not do.
 */
export function modelProblems(model: UnleashModel): string[] {
  return checked(model).problems;
}

/**
 * The parts of a model that are never met, as the SDKs read them, each said with where it is; stored,
 * and named. An unknown operator and a missing segment are never met (the strategy lets no context in);
 * an expression RE2 does not compile is never met, so inverted it is always met (docs/decisions.md).
 */
export function modelWarnings(model: UnleashModel): string[] {
  return checked(model).warnings;
}

function checked(model: UnleashModel): { problems: string[]; warnings: string[] } {
  const problems: string[] = [];
  const warnings: string[] = [];
  const segmentIds = new Set<number>();
  (model.segments ?? []).forEach((segment, i) => {
    if (segmentIds.has(segment.id)) problems.push(`segments[${i}]: the id ${segment.id} is used twice`);
    segmentIds.add(segment.id);
    segment.constraints.forEach((c, j) => {
      constraintProblems(c, `segments[${i}].constraints[${j}]`, problems, warnings);
    });
  });
  model.strategies.forEach((strategy, i) => {
    const at = `strategies[${i}]`;
    if (!(kUnleashStrategies as readonly string[]).includes(strategy.name)) {
      problems.push(`${at}: "${strategy.name}" is not a strategy Flagwire evaluates (${kUnleashStrategies.join(', ')})`);
    }
    parameterProblems(strategy, at, problems);
    (strategy.constraints ?? []).forEach((c, j) => {
      constraintProblems(c, `${at}.constraints[${j}]`, problems, warnings);
    });
    for (const id of strategy.segments ?? []) {
      if (!segmentIds.has(id))
        warnings.push(`${at}.segments: no segment of the model has the id ${id}, so the strategy never lets a context in`);
    }
    variantProblems(strategy.variants ?? [], `${at}.variants`, problems);
  });
  variantProblems(model.variants ?? [], 'variants', problems);
  return { problems, warnings };
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

/** What a constraint whose test always fails (the SDKs catch it as false) comes to, inverted or not. */
function neverMet(constraint: UnleashConstraint): string {
  return constraint.inverted === true ? 'the inverted constraint is always met' : 'the constraint is never met';
}

function constraintProblems(constraint: UnleashConstraint, at: string, problems: string[], warnings: string[]): void {
  const { operator } = constraint;
  if (!(kUnleashOperators as readonly string[]).includes(operator)) {
    warnings.push(
      `${at}: "${operator}" is not one of Unleash's operators (${kUnleashOperators.join(', ')}), so the constraint is never met, inverted or not`,
    );
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
      warnings.push(`${at}: "${constraint.value}" is not a regular expression RE2 accepts, so ${neverMet(constraint)}`);
  } else if (constraint.values === undefined) problems.push(`${at}: ${operator} takes a list of operands, "values"`);
}

function variantProblems(variants: readonly UnleashStrategyVariant[], at: string, problems: string[]): void {
  const names = new Set<string>();
  variants.forEach((variant, i) => {
    if (names.has(variant.name)) problems.push(`${at}[${i}]: the name "${variant.name}" is used twice`);
    names.add(variant.name);
  });
}
