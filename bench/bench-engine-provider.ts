// The bench's own in-process OpenFeature provider (issue 44, item 6): what a provider holding a
// compiled snapshot does per call, made of the engine's own functions (compileState with the flag's
// bucketing, compileVariants, decideState, resolveVariant, as src/eval/engine.ts and
// src/ofrep/evaluate.ts use them), over flag records the bench hands it. It has no sync, no snapshot
// file and no events: it exists to be measured until src/provider's FlagwireProvider is merged, and
// in-process.bench.ts swaps one for the other in one line (its kInProcessProvider).
//
// Answers are OFREP's (src/ofrep/evaluate.ts): the same reasons, `on`/`off` for a boolean state, a
// split without a key is TARGETING_KEY_MISSING, a typed state answers flagd's resolution.
import {
  ErrorCode,
  type EvaluationContext,
  type JsonValue,
  type Provider,
  type ResolutionDetails,
  StandardResolutionReasons,
} from '@openfeature/server-sdk';
import { effectiveState } from '../src/flags/flag-state.js';
import type { Flag } from '../src/flags/records.js';
import type { Audience } from '../src/model/projects.js';
import {
  type CompiledState,
  compileState,
  decidedBy,
  decideState,
  decisionValue,
  type EvalContext,
  kDecidedAudience,
  kDecidedCohort,
  kDecidedDisabled,
  kDecidedRoll,
  kDecidedSplit,
  kDecidedStatic,
} from '../src/eval/evaluate.js';
import { type CompiledVariants, compileVariants, resolveVariant, type RuleContext } from '../src/eval/variants.js';

/** One flag of the snapshot, compiled once: the engine's state and, for a typed flag, its variants. */
export interface BenchFlagState {
  readonly id: string;
  readonly name: string;
  readonly state: CompiledState;
  readonly variants: CompiledVariants | null;
  /** What every answer carries: flagd's flag metadata (typed flags), then the flag's id and name, as OFREP's. */
  readonly metadata: Readonly<Record<string, string | number | boolean>>;
}

/**
 * Compiles a single-environment flag as EvalEngine.compileFlag does (a group flag would be compiled per
 * environment; the bench measures single flags). An audience that is not among `audiences` never matches.
 */
export function compileBenchFlag(flag: Flag, audiences: readonly Audience[]): BenchFlagState {
  const effective = effectiveState(flag, null);
  const audience = audiences.find((a) => a.id === effective.audienceId && a.projectId === flag.projectId);
  const variants = effective.typed === undefined ? null : compileVariants(effective.typed, flag.name);
  return {
    id: flag.id,
    name: flag.name,
    state: compileState(effective, audience, flag.bucketing),
    variants,
    metadata: { ...effective.typed?.metadata, id: flag.id, name: flag.name },
  };
}

/**
 * An OpenFeature evaluation context as the engine reads it: one object, reset per call (no allocation).
 * Attributes follow OFREP's rule (OfrepContext.attribute, src/ofrep/context.ts): strings as they are,
 * numbers and booleans by their text, anything else absent; targetingKey, cohort and env are not
 * attributes, and empty ones count as absent.
 */
export class BenchContext implements EvalContext, RuleContext {
  cohort: string | null = null;
  targetingKey: string | null = null;
  env: string | null = null;
  private data: Readonly<Record<string, unknown>> = {};

  set(context: EvaluationContext): this {
    this.data = context;
    this.targetingKey = nonEmpty(context.targetingKey);
    this.cohort = nonEmpty(context.cohort);
    this.env = nonEmpty(context.env);
    return this;
  }

  attribute(name: string): string | undefined {
    if (name === 'targetingKey' || name === 'cohort' || name === 'env') return undefined;
    if (!Object.hasOwn(this.data, name)) return undefined;
    const value = this.data[name];
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    return undefined;
  }

  ruleData(): Readonly<Record<string, unknown>> {
    return this.data;
  }
}

/**
 * OFREP's reason for each rule that decides a boolean state (src/ofrep's kReasons, which moves to
 * src/ofrep/answer.ts with src/provider; named here so the bench builds on either side of that merge).
 */
const kReasonOf: Record<number, string> = {
  [kDecidedDisabled]: StandardResolutionReasons.DISABLED,
  [kDecidedCohort]: StandardResolutionReasons.TARGETING_MATCH,
  [kDecidedAudience]: StandardResolutionReasons.TARGETING_MATCH,
  [kDecidedStatic]: StandardResolutionReasons.STATIC,
  [kDecidedSplit]: StandardResolutionReasons.SPLIT,
};

function nonEmpty(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** The roll is never used: a split without a key is TARGETING_KEY_MISSING, as on OFREP. */
function noRoll(): number {
  return 0;
}

type Details<T> = ResolutionDetails<T>;

/** The bench's in-memory provider over the engine's functions (see the top of this file). */
export class BenchEngineProvider implements Provider {
  readonly metadata = { name: 'BenchEngineProvider (bench/bench-engine-provider.ts)' } as const;
  readonly runsOn = 'server' as const;
  private readonly flags = new Map<string, BenchFlagState>();
  private readonly context = new BenchContext();

  /** Flags are found by name, the key of a flagd flag set (and of OFREP with X-Flagwire-Project). */
  constructor(flags: readonly Flag[], audiences: readonly Audience[]) {
    for (const flag of flags) this.flags.set(flag.name, compileBenchFlag(flag, audiences));
  }

  // The SDK's resolvers return promises; each wraps the synchronous answer below, which the bench also
  // times on its own (the provider's work without the SDK).
  async resolveBooleanEvaluation(flagKey: string, defaultValue: boolean, context: EvaluationContext): Promise<Details<boolean>> {
    return this.booleanDetails(flagKey, defaultValue, context);
  }

  async resolveStringEvaluation(flagKey: string, defaultValue: string, context: EvaluationContext): Promise<Details<string>> {
    return this.valueDetails(flagKey, defaultValue, context);
  }

  async resolveNumberEvaluation(flagKey: string, defaultValue: number, context: EvaluationContext): Promise<Details<number>> {
    return this.valueDetails(flagKey, defaultValue, context);
  }

  async resolveObjectEvaluation<T extends JsonValue>(flagKey: string, defaultValue: T, context: EvaluationContext): Promise<Details<T>> {
    return this.valueDetails(flagKey, defaultValue, context);
  }

  booleanDetails(flagKey: string, defaultValue: boolean, context: EvaluationContext): Details<boolean> {
    const flag = this.flags.get(flagKey);
    if (flag === undefined) return notFound(defaultValue, flagKey);
    if (flag.variants !== null) return this.resolveTyped(flag, defaultValue, context);
    const decision = decideState(flag.id, flag.state, this.context.set(context), noRoll);
    const by = decidedBy(decision);
    if (by === kDecidedRoll) return failed(defaultValue, ErrorCode.TARGETING_KEY_MISSING, 'The flag splits by a targetingKey or cohort.');
    const value = decisionValue(decision);
    return { value, variant: value ? 'on' : 'off', reason: kReasonOf[by]!, flagMetadata: flag.metadata };
  }

  valueDetails<T extends JsonValue>(flagKey: string, defaultValue: T, context: EvaluationContext): Details<T> {
    const flag = this.flags.get(flagKey);
    if (flag === undefined) return notFound(defaultValue, flagKey);
    if (flag.variants === null) return failed(defaultValue, ErrorCode.TYPE_MISMATCH, `Flag "${flagKey}" is a boolean flag.`);
    return this.resolveTyped(flag, defaultValue, context);
  }

  /** A typed state: the gate (decideState), then flagd's resolution (resolveVariant) at this call's time. */
  private resolveTyped<T extends JsonValue>(flag: BenchFlagState, defaultValue: T, context: EvaluationContext): Details<T> {
    const ctx = this.context.set(context);
    const decision = decideState(flag.id, flag.state, ctx, noRoll);
    if (decidedBy(decision) === kDecidedRoll) {
      return failed(defaultValue, ErrorCode.TARGETING_KEY_MISSING, 'The flag splits by a targetingKey or cohort.');
    }
    const answer = resolveVariant(flag.variants!, decision, ctx, Date.now());
    if (answer.errorCode !== undefined) return failed(defaultValue, ErrorCode.GENERAL, answer.errorMessage ?? 'The targeting rule failed.');
    const metadata = flag.metadata;
    if (answer.value === undefined) return { value: defaultValue, reason: answer.reason, flagMetadata: metadata };
    if (typeof answer.value !== typeof defaultValue) {
      return failed(defaultValue, ErrorCode.TYPE_MISMATCH, `Flag "${flag.name}" is not of the type asked for.`);
    }
    return { value: answer.value as T, variant: answer.variant!, reason: answer.reason, flagMetadata: metadata };
  }
}

function notFound<T>(defaultValue: T, flagKey: string): Details<T> {
  return failed(defaultValue, ErrorCode.FLAG_NOT_FOUND, `No flag named "${flagKey}" in the snapshot.`);
}

function failed<T>(defaultValue: T, errorCode: ErrorCode, errorMessage: string): Details<T> {
  return { value: defaultValue, reason: StandardResolutionReasons.ERROR, errorCode, errorMessage };
}
