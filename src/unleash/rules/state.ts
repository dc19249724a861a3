// A flag state in Unleash's model (src/model/unleash-model.ts) as Flagwire's evaluation routes answer it: compiled once per
// flag version with every answer it can give, so an evaluation picks one and allocates no result.
//
// The gate (src/evaluation/engine/evaluate.ts decideState) reads `enabled` first, as for every state: not
// enabled is DISABLED. An enabled state is then Unleash's isEnabled and getVariant for the context
// (feature.ts), in place of the percentage, audience and cohorts, which are not read. Its answers:
//
//   Unleash says                          value   variant                 reason            decision
//   the state is not enabled              false   "disabled"              DISABLED          disabled
//   on: no strategies                     true    its variant or "disabled"  STATIC         static, true
//   on: a strategy let the context in     true    its variant or "disabled"  TARGETING_MATCH  audience, true
//   off: no strategy did, or a dependency false   "disabled"              DEFAULT           audience, false
//
// "disabled" is Unleash's own name for "no variant". A variant with a payload adds it to the answer's flag
// metadata (unleashPayloadType, unleashPayload: Unleash's type and text), and Unleash's front-end API
// serves the variant as Unleash does (unleashToggleVariant). Strategies that roll at random
// (gradualRolloutRandom, a rollout with random stickiness or without a user or session id) are Unleash's
// own: they roll on every evaluation, on OFREP too.
import type { Resolution } from '../../targeting/compiled-flag.js';
import type { FlagMetadata } from '../../targeting/definition.js';
import { type CompiledFeature, compileFeature, evaluateFeature, type FeatureLookup, type UnleashFields } from './feature.js';
import type { UnleashModel, UnleashPayload } from '../../model/unleash-model.js';

/** The decisions an Unleash state gives (src/evaluation/engine/evaluate.ts's encoding, reason << 1 | value: kDecidedAudience 2, kDecidedStatic 3). */
const kDecisionOff = 2 << 1;
const kDecisionOn = (2 << 1) | 1;
const kDecisionStatic = (3 << 1) | 1;

/** A compiled Unleash state: the feature, and each answer it can give. */
export interface CompiledUnleash {
  readonly feature: CompiledFeature;
  readonly off: Resolution;
  /** Not enabled: DISABLED, the gate's answer before the feature is asked. */
  readonly disabled: Resolution;
  /** On without a variant, by a strategy (or STATIC without strategies). */
  readonly on: Resolution;
  /** On with each variant, by the variant's place in the feature's allVariants. */
  readonly variants: readonly Resolution[];
  /** Whether its answer to one context may change with time alone (DATE_* constraints, random rolls). */
  readonly readsClock: boolean;
}

/** A variant as Unleash's SDKs answer getVariant ("disabled", not enabled: none), its payload as the model stores it. */
interface ToggleVariant {
  readonly name: string;
  readonly enabled: boolean;
  readonly payload?: UnleashPayload;
}

/** What Unleash's front-end API serves for an Unleash answer: its variant as Unleash says it, and impressionData. */
interface ToggleFacts {
  readonly variant: ToggleVariant;
  readonly impressionData: boolean;
}

const kToggles = new WeakMap<Resolution, ToggleFacts>();
/** The answer of the latest decideUnleash (read through latestUnleashAnswer right after; see there). */
let latest: Resolution | null = null;

function resolution(reason: Resolution['reason'], value: boolean, variant: string, flagMetadata: FlagMetadata): Resolution {
  return Object.freeze({ value, variant, reason, errorCode: undefined, errorMessage: undefined, flagMetadata });
}

/** Whether a model's answers may change for one context as time passes alone. */
function modelReadsClock(model: UnleashModel): boolean {
  const constraints = [...model.strategies.flatMap((s) => s.constraints ?? []), ...(model.segments ?? []).flatMap((s) => s.constraints)];
  const rolls = model.strategies.some(
    (s) => s.name === 'gradualRolloutRandom' || s.name === 'flexibleRollout' || (s.variants?.length ?? 0) > 0,
  );
  return rolls || (model.variants?.length ?? 0) > 0 || constraints.some((c) => c.operator.startsWith('DATE_'));
}

/**
 * The state `enabled` with `model`, of the flag named `name` (Unleash's feature name: a flexibleRollout's
 * default group and the feature variants' hash group). `parents` finds the states it depends on.
 */
export function compileUnleash(name: string, enabled: boolean, model: UnleashModel, parents: FeatureLookup): CompiledUnleash {
  const feature = compileFeature(name, enabled, model, parents);
  const impressionData = model.impressionData === true;
  const none: ToggleVariant = { name: 'disabled', enabled: false };
  const kNoMetadata = Object.freeze({});
  const onReason = model.strategies.length === 0 ? 'STATIC' : 'TARGETING_MATCH';
  const off = resolution('DEFAULT', false, 'disabled', kNoMetadata);
  const on = resolution(onReason, true, 'disabled', kNoMetadata);
  const disabled = resolution('DISABLED', false, 'disabled', Object.freeze({}));
  kToggles.set(off, { variant: none, impressionData });
  kToggles.set(on, { variant: none, impressionData });
  kToggles.set(disabled, { variant: { name: 'disabled', enabled: false }, impressionData: false });
  const variants = feature.allVariants.map((v) => {
    const payload = v.payload;
    const metadata =
      payload === undefined ? kNoMetadata : Object.freeze({ unleashPayloadType: payload.type, unleashPayload: payload.value });
    const answer = resolution(onReason, true, v.name, metadata);
    const variant: ToggleVariant =
      payload === undefined ? { name: v.name, enabled: true } : { name: v.name, enabled: true, payload: { ...payload } };
    kToggles.set(answer, { variant, impressionData });
    return answer;
  });
  return { feature, off, disabled, on, variants, readsClock: modelReadsClock(model) };
}

/**
 * The decision for an enabled Unleash state (decideState's, src/evaluation/engine/evaluate.ts), with its answer
 * kept for latestUnleashAnswer.
 */
export function decideUnleash(state: CompiledUnleash, ctx: UnleashFields): number {
  const answer = evaluateFeature(state.feature, ctx, Date.now());
  if (!answer.enabled) {
    latest = state.off;
    return kDecisionOff;
  }
  const variant = answer.variant;
  latest = variant === null ? state.on : state.variants[state.feature.allVariants.indexOf(variant)]!;
  return state.feature.strategies.length === 0 ? kDecisionStatic : kDecisionOn;
}

/**
 * The answer of the latest decideUnleash: what src/evaluation/engine/variants.ts's resolveVariant answers for an
 * Unleash state, which every route calls right after the decision for the same state.
 */
export function latestUnleashAnswer(): Resolution {
  return latest!;
}

/** The variant and impressionData Unleash's front-end API serves for an Unleash state's answer; undefined for any other answer. */
export function unleashToggleVariant(answer: Resolution): ToggleFacts | undefined {
  return kToggles.get(answer);
}
