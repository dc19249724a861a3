// Evaluating a compiled flag: flagd-core's resolution, step for step (its FeatureFlag.evaluate, then
// FlagdCore.resolve's type check):
//
//   flag not in the set            ERROR FLAG_NOT_FOUND (the set's metadata)
//   state DISABLED                 DISABLED, the caller's default
//   no rule                        STATIC, the default variant
//   rule throws                    ERROR GENERAL
//   rule overruns its work budget  ERROR GENERAL, naming the limit (work-budget.ts; Flagwire's, not flagd's)
//   rule gives null or undefined   DEFAULT, the default variant
//   rule gives anything else       its text (true is "true") names the variant: TARGETING_MATCH,
//                                  or ERROR GENERAL when no variant has that name
//   no default variant where one is needed: DEFAULT with the caller's default (no variant)
//   a value of another type than the caller asked for: ERROR TYPE_MISMATCH
//
// Each answer is one of the flag's prebuilt ones (compiled-flag.ts) except the errors that name their
// cause, and the context goes into this thread's one scope: an evaluation allocates nothing else.
import type { FlagValueType } from './definition.js';
import { type CompiledFlag, type CompiledFlagSet, errorAnswer, type Resolution } from './compiled-flag.js';
import { newScope } from './scope.js';
import { beginWorkBudget, kOverBudget, settleWorkBudget } from './work-budget.js';

const scope = newScope();
const kNoContext: Readonly<Record<string, unknown>> = Object.freeze({});

/** `timestamp` is $flagd.timestamp: the evaluation's time in whole seconds since the epoch. */
export function evaluateFlag(flag: CompiledFlag, context: Readonly<Record<string, unknown>>, timestamp: number): Resolution {
  const answers = flag.answers;
  if (!flag.enabled) return answers.disabled;
  const rule = flag.rule;
  if (rule === null) return answers.static;
  scope.data = context;
  scope.flagd.flagKey = flag.key;
  scope.flagd.timestamp = timestamp;
  beginWorkBudget();
  let result: unknown;
  try {
    result = rule(scope);
  } catch (err) {
    return err === kOverBudget ? answers.overBudget : answers.ruleFailed;
  } finally {
    // The context is the caller's: not kept past the evaluation.
    scope.data = kNoContext;
    settleWorkBudget();
  }
  if (result === null || result === undefined) return answers.default;
  let variant: string;
  if (typeof result === 'string') variant = result;
  else {
    // A result with no name (a list holding an object without a prototype, from a caller's own
    // context in process) is a rule that failed, never a throw out of evaluation.
    try {
      variant = (result as { toString(): string }).toString();
    } catch {
      return answers.ruleFailed;
    }
  }
  return (
    answers.matches.get(variant) ?? errorAnswer('GENERAL', `Variant '${variant}' not found in flag with key '${flag.key}'`, flag.metadata)
  );
}

/** evaluateFlag, for a caller that expects a value of `type` (an OpenFeature SDK's typed resolve). */
export function evaluateFlagAs(
  flag: CompiledFlag,
  type: FlagValueType,
  context: Readonly<Record<string, unknown>>,
  timestamp: number,
): Resolution {
  const resolution = evaluateFlag(flag, context, timestamp);
  if (resolution.value === undefined || typeof resolution.value === type) return resolution;
  return errorAnswer(
    'TYPE_MISMATCH',
    `Evaluated type of the flag ${flag.key} does not match. Expected ${type}, got ${typeof resolution.value}`,
    flag.metadata,
  );
}

/** A flag of a set by key: FLAG_NOT_FOUND, with the set's metadata, when it has none of that key. */
export function evaluateInSet(
  set: CompiledFlagSet,
  key: string,
  type: FlagValueType,
  context: Readonly<Record<string, unknown>>,
  timestamp: number,
): Resolution {
  const flag = set.flags.get(key);
  if (flag === undefined) return errorAnswer('FLAG_NOT_FOUND', `flag '${key}' not found`, set.metadata);
  return evaluateFlagAs(flag, type, context, timestamp);
}
