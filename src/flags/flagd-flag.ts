// A flag as flagd's language says it (flagd.dev/schema/v0/flags.json), so that a stock flagd provider
// given it answers as Flagwire's OFREP does (docs/design.md §2c): the one translation, which the flag sets
// of the sync service (src/sync/flag-set.ts), `flagwire export --format flagd` and GET /api/v1/export
// (src/flags-as-code/export.ts) and whether a flag is served (src/flags/flagd-serving.ts) all call.
//
// Each flag becomes a flagd flag whose targeting is the gate of design §2 written in JsonLogic, in front
// of what lets the caller through (a typed flag's own rule, or a variant):
//
//   {"if": [gate, in, out]}
//   gate   = {"if": [listed, true, audience]}        (only the parts the state has; constants folded)
//   listed = {"in": [{"var": "cohort"}, [the effective cohorts]]}
//   audience: every rule met (nested `if`s), then the percentage: true (100), false (0), or the split,
//            {"if": [targetingKey a non-empty string, split(targetingKey), cohort one, split(cohort), false]}
//   split(key) = {"===": [{"fractional": [{"cat": [id, ":", key]}, ["in", p], ["out", 100 - p]]}, "in"]}
//   in     = "on" (a boolean flag); a typed flag's rule, or its default variant by name (TARGETING_MATCH)
//   out    = "off" (a boolean flag); null for a typed flag (its default variant, DEFAULT)
//
// A gate every caller passes or none does needs no targeting where flagd's STATIC is OFREP's reason too.
// The gate uses only `if`, `in`, `===`, `cat`, `var` and `fractional`: json-logic-engine (flagd-core)
// compiles `and` and `or` without parentheses (test/targeting/definition-arbitraries.ts).
//
// A state with an experiment whose answers include exposures (issue 58: OFREP's `inExperiment: true`)
// names them in the variant, as flagd's flag metadata is fixed per flag (docs/decisions.md: flagd names
// an exposure in its variant): each variant an exposure can answer gets a twin of the same value, its
// name followed by a marker no variant of the flag ends with ("~", else "~1", "~2"...), which the
// metadata names (kExposureMarkerField); the targeting answers the twin exactly where OFREP says
// inExperiment: true. Its targeting is then a decision tree, not a gate in front of an answer:
//
//   {"if": [listed, cohort, matched, allocated, out]}   (only the parts the state has)
//   allocated = the arm for 100%, out for 0%, or the split with three ends:
//     {"if": [has key, {"if": [split(key), in, outOfSplit]}, out]}   key = targetingKey, else cohort
//   a boolean flag: cohort, out "on", "off"; in, outOfSplit "on~", "off~" (only the split allocates)
//   a typed flag:   cohort: its rule, or its default variant; out: null; 100%: twin(rule), or its
//                   default variant; in: twin(rule), or twin(default); outOfSplit: twin(default)
//   twin(rule) = {"if": [{"in": [text, [the variants' names]]}, {"cat": [text, "~"]}, rule]}
//   text       = {"cat": [{"if": [{"var": "$flagd.flagKey"}, rule, null]}]}
//
// flagd names the variant by the rule's answer's text (toString: true is "true", [7] is "7"); `text` is
// that text (`'' + x`), so twin(rule) answers the twin of the variant the rule names and anything else
// as the rule does (null, a name of no variant: the same DEFAULT or error). The rule is an operand of
// `cat` only inside an `if`, which json-logic-engine parenthesises; the `if` asks the flag's key, set
// by flagd over the caller's and never empty, so it is always true yet never folded: a constant rule's
// `cat`, folded when flagd-core builds it, throws on null (a PARSE_ERROR). Only where a variant is
// named "null" is a null answer (whose text that is) caught first:
// {"if": [{"in": [rule, [null]]}, null, ...]}. The rule then stands three or four times in the document,
// for experiment states only. A state whose tree gives no twin (a disabled state, a boolean one at 0
// or 100%, a typed one with no rule at 100%) is said as without an experiment, its metadata naming the
// experiment only.
// `flagwire flags import` takes such a flag back to the same state without its experiment by saying it
// again with flagdFlag (src/flags/flagd-exposure-undo.ts): a change to these shapes changes what it
// recognises with it.
//
// A flag that flagd's language cannot say exactly is not said at all: the answer names why
// (flagdInexpressible), and each caller leaves the flag out and names it.
import { effectiveState, type EffectiveState } from './records/flag-state.js';
import { type Flag, kExperimentKeyField, kExposureMarkerField, type TypedVariants } from '../model/flags.js';
import type { Audience, AudienceRule } from '../model/projects.js';
import { kNoFragments } from './records/fragment-records.js';
import { ResolvedFragments } from './records/fragment-resolve.js';

/** A project without shared fragments: nothing to resolve. */
const kNoResolvedFragments = new ResolvedFragments(kNoFragments);

/** What decides how a project's flag is said in one environment. */
export interface FlagdFlagContext {
  /** null: a single-environment project. */
  environment: string | null;
  /** The project's audiences (src/model/projects.ts). */
  audiences: readonly Audience[];
  /** The organisation's plan allows audiences (EvalEngine.audiencesAllowed). */
  audiencesAllowed: boolean;
  /**
   * The project's shared fragments (src/fragments), resolved once for the whole document and shared by
   * every flag that names one; absent: none.
   */
  fragments?: ResolvedFragments;
  /**
   * How a rule's `{"$ref": NAME}` is written: `resolved`, replaced (a flag set carries no `$evaluators`:
   * docs/decisions.md, Shared fragments), or `kept` as stored, for a document that carries the fragments
   * as `$evaluators` (the export). Either way the checks read the rule resolved, as it evaluates.
   */
  refs: 'resolved' | 'kept';
}

/** A flagd flag definition. */
export interface FlagdFlag {
  state: 'ENABLED' | 'DISABLED';
  variants: Record<string, unknown>;
  defaultVariant: string | null;
  targeting?: Record<string, unknown>;
  metadata: Record<string, string | number | boolean>;
}

/** The flag as flagd says it, or why it cannot be said (and then no flag). */
export type FlagdTranslation = { flag: FlagdFlag; omitted: null } | { flag: null; omitted: string };

/** `flag` in flagd's language in `ctx.environment`: its definition, or why flagd cannot say it exactly. */
export function flagInFlagd(flag: Flag, ctx: FlagdFlagContext): FlagdTranslation {
  const stored = effectiveState(flag, ctx.environment);
  const state = withFragments(stored, ctx.fragments ?? kNoResolvedFragments);
  const reason = whyInexpressible(flag, state, ctx.audiences, ctx.audiencesAllowed);
  if (reason !== null) return { flag: null, omitted: reason };
  return { flag: flagdFlag(flag, ctx.refs === 'resolved' ? state : stored, ctx.audiences), omitted: null };
}

/** A JsonLogic expression, or a constant the gate folds. */
type Logic = boolean | Record<string, unknown>;
/** What a targeting branch answers: a variant's name, null (the default variant), or JsonLogic that gives one. */
type Answer = string | null | Record<string, unknown>;

const kBooleanVariants = Object.freeze({ on: true, off: false });
/** What Flagwire's attribute lookup never answers (src/ofrep/context.ts): a rule on them is never met. */
const kNotAttributes = new Set(['targetingKey', 'cohort', 'env']);
const kTargetingKey = { var: 'targetingKey' };
const kCohort = { var: 'cohort' };
/** flagd's `$flagd.flagKey`: the flag's name, never empty, which the caller's context cannot replace. */
const kFlagKey = { var: '$flagd.flagKey' };

/**
 * Why an attribute name cannot be read by flagd's `var` as Flagwire reads it (the context's own key of
 * that name), or null. A dot or backslash makes `var` read a path; "" reads the whole context;
 * flagd-core copies the context with Object.assign, where "__proto__" sets the prototype, and puts its
 * own `$flagd` over the caller's.
 */
function attributeProblem(name: string): string | null {
  if (name.includes('.') || name.includes('\\')) return 'which flagd reads as a path (a dot or a backslash in the name)';
  if (name === '' || name === '__proto__' || name === '$flagd') return 'which flagd does not read as an attribute';
  return null;
}

/** The operators json-logic-engine compiles to a conditional expression without parentheses. */
const kUnparenthesised = new Set(['and', 'or', 'missing', 'missing_some']);

function unparenthesised(logic: unknown): boolean {
  if (logic === null || typeof logic !== 'object' || Array.isArray(logic)) return false;
  const op = Object.keys(logic)[0];
  return op !== undefined && kUnparenthesised.has(op);
}

/**
 * Whether flagd-core would answer `rule` by JavaScript's operator precedence instead of JsonLogic's:
 * its compiler pastes an operand of `cat` (`'' + a + b`) and the list of `in` (`(list || []).includes`)
 * without parentheses (test/targeting/compile-rule.test.ts). Flagwire, and flagd's other evaluators,
 * answer as JsonLogic. Conservative: an operand the engine folds or interprets is caught too.
 */
function precedenceSlip(logic: unknown): boolean {
  if (logic === null || typeof logic !== 'object') return false;
  if (Array.isArray(logic)) return logic.some(precedenceSlip);
  for (const [op, args] of Object.entries(logic)) {
    if (Array.isArray(args) && ((op === 'cat' && args.some(unparenthesised)) || (op === 'in' && unparenthesised(args[1])))) return true;
    if (precedenceSlip(args)) return true;
  }
  return false;
}

function audienceOf(audiences: readonly Audience[], id: string, projectId: string): Audience | undefined {
  return audiences.find((a) => a.id === id && a.projectId === projectId);
}

/** Why `flag` cannot be served to flagd in `environment`; null when it can. */
export function flagdInexpressible(
  flag: Flag,
  environment: string | null,
  audiences: readonly Audience[],
  audiencesAllowed: boolean,
  fragments: ResolvedFragments = kNoResolvedFragments,
): string | null {
  return whyInexpressible(flag, withFragments(effectiveState(flag, environment), fragments), audiences, audiencesAllowed);
}

function whyInexpressible(flag: Flag, state: EffectiveState, audiences: readonly Audience[], audiencesAllowed: boolean): string | null {
  if (state.unleash !== undefined) {
    return (
      "it is in Unleash's model, which flagd's rule language does not say (strategies hash with Unleash's groups and seeds, " +
      "and OFREP answers its variants by Unleash's names): Unleash's SDKs read it from /api/client/features"
    );
  }
  // OFREP refuses the flag (GENERAL) before it looks at anything else, disabled or not (blockedByPlan).
  if (state.audienceId !== null && !audiencesAllowed) {
    return "it applies an audience and the organisation's plan has no audiences: OFREP answers it GENERAL";
  }
  if (!state.enabled) return null;
  if (state.typed !== undefined && precedenceSlip(state.typed.targeting)) {
    return (
      'its rule has `and`, `or`, `missing` or `missing_some` as an operand of `cat` or as the list of `in`, which ' +
      'flagd-core (the Node provider) reads by JavaScript precedence: wrap that operand in an `if` to serve it'
    );
  }
  const p = state.trafficPercentage;
  if (p > 0 && p < 100 && flag.bucketing !== 'fractional') {
    return (
      `it turns on for ${p}% of callers by design §2's modulo bucketing, which flagd's fractional cannot reproduce ` +
      '(a flag made with bucketing "fractional" can be served)'
    );
  }
  const audience = state.audienceId === null ? undefined : audienceOf(audiences, state.audienceId, flag.projectId);
  for (const rule of audience?.rules ?? []) {
    const problem = attributeProblem(rule.attribute);
    if (problem !== null) return `its audience "${audience!.name}" reads the attribute "${rule.attribute}", ${problem}`;
  }
  return null;
}

/** The state with its rule's references replaced: every check below, and the flagd document, see the rule as it evaluates. */
function withFragments(state: EffectiveState, fragments: ResolvedFragments): EffectiveState {
  return state.typed === undefined ? state : { ...state, typed: fragments.typed(state.typed) };
}

/**
 * `state` of `flag` in flagd's language, without the checks of flagInFlagd (a state it says): also what
 * the import asks to recognise a document it wrote (src/flags/flagd-exposure-undo.ts).
 */
export function flagdFlag(flag: Flag, state: EffectiveState, audiences: readonly Audience[]): FlagdFlag {
  // OFREP's metadata names the flag's id and name on every answer; flagd serves the flag's metadata. An
  // experiment is named too (issue 58); whether an answer is an exposure varies per answer, which flagd's
  // fixed metadata cannot say: the variant says it (the top of this file).
  const metadata: FlagdFlag['metadata'] = { ...state.typed?.metadata, id: flag.id, name: flag.name };
  if (state.experiment !== undefined) {
    metadata[kExperimentKeyField] = state.experiment;
    const allocating = state.enabled ? allocatingFlag(flag, state, audiences, metadata) : null;
    if (allocating !== null) return allocating;
  }
  const typed = state.typed;
  if (typed === undefined) return booleanFlag(flag, state, audiences, metadata);
  if (!state.enabled) {
    // flagd's DISABLED is OFREP's: no value, the caller's default (design §2b).
    return { state: 'DISABLED', variants: typed.variants, defaultVariant: typed.defaultVariant, metadata };
  }
  return typedFlag(gate(flag, state, audiences), typed, metadata);
}

/**
 * A boolean flag: variants "on" and "off" as OFREP names them. A disabled one is "off", STATIC (OFREP
 * answers false, variant "off", DISABLED; flagd's DISABLED would give the caller's default instead).
 */
function booleanFlag(flag: Flag, state: EffectiveState, audiences: readonly Audience[], metadata: FlagdFlag['metadata']): FlagdFlag {
  const g = state.enabled ? gate(flag, state, audiences) : false;
  const base = { state: 'ENABLED' as const, variants: kBooleanVariants, metadata };
  // No targeting where OFREP's reason is STATIC for every caller outside a listed cohort.
  if (g === true) return { ...base, defaultVariant: 'on' };
  if (g === false && (state.audienceId === null || !state.enabled)) return { ...base, defaultVariant: 'off' };
  return { ...base, defaultVariant: 'off', targeting: { if: [g, 'on', 'off'] } };
}

/** A typed flag, enabled: its rule (or default variant) behind the gate, its default variant outside. */
function typedFlag(g: Logic, typed: TypedVariants, metadata: FlagdFlag['metadata']): FlagdFlag {
  const rule = Object.keys(typed.targeting).length === 0 ? null : typed.targeting;
  const flag: FlagdFlag = { state: 'ENABLED', variants: typed.variants, defaultVariant: typed.defaultVariant, metadata };
  if (g === true) {
    if (rule !== null) flag.targeting = rule;
    return flag;
  }
  // The default variant by name is TARGETING_MATCH, as OFREP's answer for a caller a cohort or audience lets in.
  const inside = g === false ? null : (rule ?? typed.defaultVariant);
  // A gate nobody passes still has a rule that answers null: OFREP's reason is DEFAULT, not STATIC.
  flag.targeting = { if: [g, inside, null] };
  return flag;
}

/** The gate of design §2 for an enabled state: true, false, or the JsonLogic that decides. */
function gate(flag: Flag, state: EffectiveState, audiences: readonly Audience[]): Logic {
  const p = state.trafficPercentage;
  const percentage: Logic = p >= 100 ? true : p <= 0 ? false : split(flag.id, p);
  let passed = percentage;
  if (state.audienceId !== null) {
    const matched = audienceMatched(flag, state.audienceId, audiences);
    passed = percentage === false ? false : percentage === true ? matched : allOf([matched, percentage]);
  }
  const cohorts = listedCohorts(state);
  if (cohorts.length === 0 || passed === true) return passed;
  const listed = { in: [kCohort, cohorts] };
  return passed === false ? listed : { if: [listed, true, passed] };
}

/** Whether the caller is in the state's audience, as JsonLogic: the gate and an experiment's tree both ask it. */
function audienceMatched(flag: Flag, audienceId: string, audiences: readonly Audience[]): Logic {
  const audience = audienceOf(audiences, audienceId, flag.projectId);
  // An audience that no longer exists never matches (src/evaluation/engine/evaluate.ts compileState).
  return audience === undefined ? false : allOf(audience.rules.map(ruleMet));
}

/** The state's cohorts that can match: an empty string is no cohort (OFREP's context reads it as absent). */
function listedCohorts(state: EffectiveState): string[] {
  return state.cohorts.filter((c) => c !== '');
}

/** Every condition true (an empty list is), as nested `if`s: see the top of this file for why not `and`. */
function allOf(conditions: readonly Logic[]): Logic {
  if (conditions.includes(false)) return false;
  const rest = conditions.filter((c) => c !== true);
  if (rest.length === 0) return true;
  let logic = rest[rest.length - 1]!;
  for (let i = rest.length - 2; i >= 0; i--) logic = { if: [rest[i], logic, false] };
  return logic;
}

/**
 * An audience rule as Flagwire matches it: the attribute present and, a string as it is, a number or
 * boolean by its JSON text, equal to one of the values. `in` is strict, so each value is listed with the
 * number or boolean whose text it is.
 */
function ruleMet(rule: AudienceRule): Logic {
  if (kNotAttributes.has(rule.attribute)) return false;
  const candidates: (string | number | boolean)[] = [];
  for (const value of rule.values) {
    candidates.push(value);
    const n = Number(value);
    if (Number.isFinite(n) && String(n) === value) candidates.push(n);
    else if (value === 'true' || value === 'false') candidates.push(value === 'true');
  }
  return { in: [{ var: rule.attribute }, candidates] };
}

/** A non-empty string, as OFREP's context takes targetingKey and cohort: `x === cat(x)` holds only for a string. */
function nonEmptyString(key: Record<string, unknown>): Logic {
  return { if: [key, { '===': [key, { cat: [key] }] }, false] };
}

/**
 * In the percentage split: the flag's fractional bucketing (contract 1, src/evaluation/engine/bucket.ts) over
 * `id:key`, key = targetingKey, else cohort. Neither: out (OFREP answers TARGETING_KEY_MISSING).
 */
function split(flagId: string, p: number): Logic {
  return {
    if: [nonEmptyString(kTargetingKey), inSplit(flagId, p, kTargetingKey), nonEmptyString(kCohort), inSplit(flagId, p, kCohort), false],
  };
}

/** Whether `key` (a non-empty string) is in the flag's first `p` percent, by its fractional bucketing. */
function inSplit(flagId: string, p: number, key: Record<string, unknown>): Logic {
  return { '===': [{ fractional: [{ cat: [flagId, ':', key] }, ['in', p], ['out', 100 - p]] }, 'in'] };
}

/** The marker of a flag's exposure twins: "~", else "~1", "~2"…, the first that no name of `variants` ends with. */
export function exposureMarker(variants: readonly string[]): string {
  for (let i = 0; ; i++) {
    const marker = i === 0 ? '~' : `~${i}`;
    if (!variants.some((name) => name.endsWith(marker))) return marker;
  }
}

/** What each end of an experiment state's decision tree answers (the top of this file); `in`, `outOfSplit` and `all` only where reached. */
interface Arms {
  /** A listed cohort let the caller in. */
  cohort: Answer;
  /** The audience is not matched, the percentage is 0, or a split has no key. */
  out: Answer;
  /** The percentage is 100 (after the audience, if any). */
  all(): Answer;
  /** The split let the caller in, or left it out. */
  in(): Answer;
  outOfSplit(): Answer;
}

/**
 * A state with an experiment, enabled, as flagd says it with its exposures named (the top of this file);
 * null when no answer of it is an exposure, and it is said as without an experiment.
 */
function allocatingFlag(
  flag: Flag,
  state: EffectiveState,
  audiences: readonly Audience[],
  metadata: FlagdFlag['metadata'],
): FlagdFlag | null {
  const typed = state.typed;
  const variants: Record<string, unknown> = typed?.variants ?? kBooleanVariants;
  const names = Object.keys(variants);
  const marker = exposureMarker(names);
  const twins = new Set<string>();
  const twin = (name: string): string => {
    twins.add(name);
    return name + marker;
  };
  let arms: Arms;
  if (typed === undefined) {
    // Only the split allocates a boolean state: at 0 or 100% no answer is an exposure.
    if (state.trafficPercentage <= 0 || state.trafficPercentage >= 100) return null;
    arms = { cohort: 'on', out: 'off', all: () => 'on', in: () => twin('on'), outOfSplit: () => twin('off') };
  } else {
    const rule = Object.keys(typed.targeting).length === 0 ? null : typed.targeting;
    const fallback = typed.defaultVariant;
    const twinRule = (r: Record<string, unknown>): Answer => {
      for (const name of names) twin(name);
      const text = { cat: [{ if: [kFlagKey, r, null] }] };
      const named = [{ in: [text, names] }, { cat: [text, marker] }, r];
      return { if: names.includes('null') ? [{ in: [r, [null]] }, null, ...named] : named };
    };
    const twinDefault = (): Answer => (fallback === null ? null : twin(fallback));
    arms = {
      cohort: rule ?? fallback,
      out: null,
      all: () => (rule === null ? fallback : twinRule(rule)),
      in: () => (rule === null ? twinDefault() : twinRule(rule)),
      outOfSplit: twinDefault,
    };
  }
  const tree = decisionTree(flag, state, audiences, arms);
  if (twins.size === 0 || tree === null || typeof tree !== 'object') return null;
  const all: Record<string, unknown> = { ...variants };
  for (const name of twins) all[name + marker] = variants[name];
  metadata[kExposureMarkerField] = marker;
  return { state: 'ENABLED', variants: all, defaultVariant: typed === undefined ? 'off' : typed.defaultVariant, targeting: tree, metadata };
}

/** An experiment state's targeting: design §2's decision with each of its ends answered by `arms`. */
function decisionTree(flag: Flag, state: EffectiveState, audiences: readonly Audience[], arms: Arms): Answer {
  const matched = state.audienceId === null ? true : audienceMatched(flag, state.audienceId, audiences);
  const p = state.trafficPercentage;
  let passed: Answer = arms.out;
  if (matched !== false) {
    passed = p >= 100 ? arms.all() : p <= 0 ? arms.out : allocation(flag.id, p, arms);
    if (matched !== true) passed = { if: [matched, passed, arms.out] };
  }
  const cohorts = listedCohorts(state);
  return cohorts.length === 0 ? passed : { if: [{ in: [kCohort, cohorts] }, arms.cohort, passed] };
}

/**
 * The split with its three ends: in, out of it (both allocations), and no key (targetingKey, else
 * cohort, a non-empty string), which OFREP refuses (TARGETING_KEY_MISSING) and flagd answers "out".
 */
function allocation(flagId: string, p: number, arms: Arms): Answer {
  const hasKey = { if: [nonEmptyString(kTargetingKey), true, nonEmptyString(kCohort)] };
  const key = { if: [nonEmptyString(kTargetingKey), kTargetingKey, kCohort] };
  return { if: [hasKey, { if: [inSplit(flagId, p, key), arms.in(), arms.outOfSplit()] }, arms.out] };
}
