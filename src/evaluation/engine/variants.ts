// A flag state with typed variants (issue 25): the spec's rules decide whether the caller is in, as
// for a boolean flag (decideState in evaluate.ts, unchanged: same cohorts, audience, percentage and
// bucketing); flagd's rules (src/targeting) then pick the variant. docs/design.md §2b:
//
//   gate (decideState)                      rule present                    no rule
//   state disabled                          DISABLED, no value (the caller's default)
//   out: audience not matched, 0%           the default variant, DEFAULT
//   out: the percentage split (or roll)     the default variant, SPLIT
//   in: cohort listed, audience matched     flagd's answer for the rule     the default variant, TARGETING_MATCH
//   in: 100%, no audience                   flagd's answer for the rule     the default variant, STATIC
//   in: the percentage split (or roll)      flagd's answer for the rule     the default variant, SPLIT
//
// A state with an experiment (issue 58) has each of these answers twice over in its metadata: every answer
// names the experiment (experimentKey), and inExperiment is true for the allocations (a rule's variant
// and the percentage split, in or out) and false for the rest (disabled, a cohort override, an audience
// or a default, a rule's error). Both are fixed per answer, so they are built here, once.
//
// Without a default variant, every "default variant" above is flagd's DEFAULT with no value. `enabled`
// (the Evaluation API's field) stays the gate's answer. Every answer but a rule's error that names its
// cause is built once per flag version: an evaluation returns one of them, most of them flagd's own
// (compiled-flag.ts), plus the one reason flagd has no answer for, SPLIT.
import { experimentMetadata, kInExperimentField, type TypedVariants } from '../../model/flags.js';
import { compileFlag, defaultVariantAnswer, type CompiledFlag, type Resolution } from '../../targeting/compiled-flag.js';
import { evaluateFlag } from '../../targeting/evaluate.js';
import { readsClock } from '../../targeting/reads-clock.js';
import type { SharedRules } from '../../targeting/compile-rule.js';
import { type CompiledUnleash, latestUnleashAnswer } from '../../unleash/rules/state.js';
import {
  blockedByPlan,
  type CompiledState,
  contextFreeDecision,
  type Decision,
  decidedBy,
  decisionValue,
  kDecidedAudience,
  kDecidedCohort,
  kDecidedDisabled,
  kDecidedStatic,
} from './evaluate.js';

/** What a request gives a rule: its whole evaluation context, built only when a rule runs. */
export interface RuleContext {
  ruleData(): Readonly<Record<string, unknown>>;
}

export interface CompiledVariants {
  readonly flag: CompiledFlag;
  /** The rule as written (flagd's JSON), null for none: kept for the playground's explanation only. */
  readonly targeting: Readonly<Record<string, unknown>> | null;
  /** The default variant, SPLIT: the percentage split decided, in or out. */
  readonly split: Resolution;
  /** The default variant, TARGETING_MATCH: a listed cohort or a matched audience let the caller in. */
  readonly matched: Resolution;
  /** Whether the rule may read `$flagd.timestamp`: its answer to one context may change with the time. */
  readonly readsClock: boolean;
  /**
   * With an experiment: each rule answer an allocation gives (inExperiment true) mapped to the same answer
   * marked false, served where a listed cohort let the caller in; null without an experiment.
   */
  readonly cohortAnswers: ReadonlyMap<Resolution, Resolution> | null;
  /**
   * A state in Unleash's model (src/unleash/rules/state.ts): past the disabled gate, its answer is the one its
   * decision (decideState, called just before for the same state) found. Null for typed variants.
   */
  readonly unleash: { answer(): Resolution } | null;
}

const kNoMetadata = Object.freeze({});

/** Whether an answer of a state with an experiment counts as an exposure (its metadata, built here). */
export function inExperiment(answer: Resolution): boolean {
  return answer.flagMetadata[kInExperimentField] === true;
}

/**
 * `flagKey` is `$flagd.flagKey` and the default seed of `fractional`: the flag's name, its key in a
 * flagd definition, so a definition moved between flagd and Flagwire splits callers the same way.
 * `shared`: the project's fragments as its rule holds them, compiled once for all its flags (engine.ts).
 */
export function compileVariants(
  typed: TypedVariants,
  flagKey: string,
  shared: SharedRules | null = null,
  experiment: string | null = null,
): CompiledVariants {
  const targeting = Object.keys(typed.targeting).length === 0 ? null : typed.targeting;
  const own = typed.metadata ?? kNoMetadata;
  // The experiment's keys win over the state's own metadata of those names: they are Flagwire's to say.
  const metadata = experiment === null ? own : { ...own, ...experimentMetadata(experiment, false) };
  let flag = compileFlag(
    flagKey,
    { state: 'ENABLED', variants: typed.variants, defaultVariant: typed.defaultVariant, targeting, metadata },
    kNoMetadata,
    [],
    shared,
  );
  let split = defaultVariantAnswer(flag, 'SPLIT');
  let cohortAnswers: Map<Resolution, Resolution> | null = null;
  if (experiment !== null) {
    // The allocations: a rule's variant, and the split's default variant (in or out of the percentage).
    const exposed = Object.freeze({ ...metadata, ...experimentMetadata(experiment, true) });
    cohortAnswers = new Map();
    const matches = new Map<string, Resolution>();
    for (const [name, answer] of flag.answers.matches) {
      const allocated = Object.freeze({ ...answer, flagMetadata: exposed });
      matches.set(name, allocated);
      cohortAnswers.set(allocated, answer);
    }
    flag = { ...flag, answers: { ...flag.answers, matches } };
    split = Object.freeze({ ...split, flagMetadata: exposed });
  }
  const answers = flag.answers;
  return {
    flag,
    targeting,
    split,
    // A listed cohort or a matched audience: the default variant, never an allocation.
    matched:
      flag.defaultVariant === null
        ? answers.default
        : (cohortAnswers?.get(answers.matches.get(flag.defaultVariant)!) ?? answers.matches.get(flag.defaultVariant)!),
    readsClock: readsClock(targeting),
    cohortAnswers,
    unleash: null,
  };
}

/** What resolveVariant asks a state in Unleash's model: the answer its decision found. */
const kUnleashAnswer = { answer: latestUnleashAnswer };

/** A compiled state in Unleash's model as the typed-variant answers every route resolves. */
export function unleashVariants(state: CompiledUnleash): CompiledVariants {
  const flag = compileFlag(
    state.feature.name,
    {
      state: 'ENABLED',
      variants: { on: true, off: false },
      defaultVariant: 'off',
      targeting: null,
      metadata: {},
    },
    {},
  );
  return {
    flag: { ...flag, answers: { ...flag.answers, disabled: state.disabled } },
    targeting: null,
    split: state.off,
    matched: state.on,
    readsClock: state.readsClock,
    cohortAnswers: null,
    unleash: kUnleashAnswer,
  };
}

/** What every context gets from a state: its gate's decision and, for a typed state, the variant's answer. */
export interface SettledAnswer {
  readonly decision: Decision;
  readonly resolution: Resolution | null;
}

/** A state whose audience the organisation's plan refuses: each route set answers it its own way. */
export const kPlanRefused = 'planRefused';

/**
 * What `state` answers whatever the context, or null where the context (or the clock) can change it: the
 * plan's refusal of its audience, a decision contextFreeDecision takes alone, and for a typed state the
 * variant's answer where no rule runs (a rule reads the context). The one rule every list of a project's
 * flags asks, once per flag version (list-plan.ts); each route set says the answer in its own shape.
 */
export function settledAnswer(
  state: CompiledState & { readonly variants: CompiledVariants | null },
  audiencesAllowed: boolean,
): SettledAnswer | typeof kPlanRefused | null {
  if (blockedByPlan(state, audiencesAllowed)) return kPlanRefused;
  const decision = contextFreeDecision(state);
  if (decision === null) return null;
  if (state.variants === null) return { decision, resolution: null };
  if (decisionValue(decision) && state.variants.flag.rule !== null) return null;
  return { decision, resolution: resolveVariant(state.variants, decision, kNoRuleContext, 0) };
}

/** What resolveVariant is given where no rule runs: reading it is a defect, never a wrong answer. */
const kNoRuleContext: RuleContext = {
  ruleData() {
    throw new Error('a context-free answer ran a rule');
  },
};

/** The answer for a gate `decision` (decideState's); `nowMs` gives `$flagd.timestamp`. */
export function resolveVariant(variants: CompiledVariants, decision: Decision, context: RuleContext, nowMs: number): Resolution {
  const by = decidedBy(decision);
  const flag = variants.flag;
  const answers = flag.answers;
  if (by === kDecidedDisabled) return answers.disabled;
  if (variants.unleash !== null) return variants.unleash.answer();
  if (!decisionValue(decision)) return by === kDecidedAudience || by === kDecidedStatic ? answers.default : variants.split;
  if (flag.rule !== null) {
    const answer = evaluateFlag(flag, context.ruleData(), Math.floor(nowMs / 1000));
    // A listed cohort is an override, not an allocation: the rule's variant, not counted as an exposure.
    return by === kDecidedCohort && variants.cohortAnswers !== null ? (variants.cohortAnswers.get(answer) ?? answer) : answer;
  }
  if (by === kDecidedCohort || by === kDecidedAudience) return variants.matched;
  if (by === kDecidedStatic) return answers.static;
  return variants.split;
}
