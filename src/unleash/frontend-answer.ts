// What Unleash's front-end API says of one flag for one context (docs/api.md: Unleash's front-end API),
// in Unleash Edge's toggle shape: `{name, enabled, variant: {name, enabled, payload?}, impressionData}`.
// The answer is Flagwire's own engine's, the Evaluation API's for the same context:
//
//   enabled                  the Evaluation API's `enabled` (a flag whose audience the plan no longer
//                            allows is false, as on the project route)
//   boolean flag             variant {name: "disabled", enabled: false}: Unleash's "no variant"
//   typed flag with a value  variant {name: the variant, enabled: true, payload: the value}
//   typed flag, no value     (disabled, no default variant, a rule's error) the "disabled" variant
//
// A payload is Unleash's `{type, value}` with the value as text: a string is `string`, a number
// `number`, an object `json`, and a boolean `json` too (`"true"`: Unleash has no boolean payload, and
// JSON's text gives the value back with its type). impressionData is always false: Flagwire has no
// impression events to ask for. A state in Unleash's model answers as Unleash does: its variant (payload as
// stored) or "disabled", and its impressionData.
//
// Bodies are built once per flag version and answer, never per request (kept with the compiled entry,
// dropped with it when the store moves).
import type { EvalState, FlagEntry } from '../evaluation/engine/engine.js';
import { blockedByPlan, decideState, decisionValue, type EvalContext } from '../evaluation/engine/evaluate.js';
import { type CompiledVariants, kPlanRefused, resolveVariant, type RuleContext, settledAnswer } from '../evaluation/engine/variants.js';
import type { VariantValue } from '../targeting/definition.js';
import type { Resolution } from '../targeting/compiled-flag.js';
import type { UnleashPayload, UnleashToggle, UnleashVariant } from './schemas.js';
import { unleashToggleVariant } from './rules/state.js';

/** Unleash's variant for "none": what its SDKs answer for a toggle without variants, or one turned off. */
export const kDisabledVariant: Readonly<UnleashVariant> = Object.freeze({ name: 'disabled', enabled: false });

export function payloadOf(value: VariantValue): UnleashPayload {
  if (typeof value === 'string') return { type: 'string', value };
  if (typeof value === 'number') return { type: 'number', value: String(value) };
  return { type: 'json', value: JSON.stringify(value) };
}

/** The toggle for a gate's answer (`enabled`) and, for a typed flag, the variant's answer. */
export function toggleOf(name: string, enabled: boolean, answer: Resolution | null): UnleashToggle {
  // A state in Unleash's model: its variant and impressionData as Unleash says them (src/unleash/rules/state.ts).
  const unleash = answer === null ? undefined : unleashToggleVariant(answer);
  if (unleash !== undefined) return { name, enabled, variant: { ...unleash.variant }, impressionData: unleash.impressionData };
  const variant =
    answer === null || answer.value === undefined || answer.variant === undefined
      ? { ...kDisabledVariant }
      : { name: answer.variant, enabled: true, payload: payloadOf(answer.value) };
  return { name, enabled, variant, impressionData: false };
}

/** A flag version's toggle bodies: boolean answers by `enabled` (0, 1), typed ones by `enabled` and answer. */
interface ToggleBodies {
  plain: [Buffer | undefined, Buffer | undefined];
  typed: [Map<Resolution, Buffer>, Map<Resolution, Buffer>] | null;
}

const kBodies = new WeakMap<FlagEntry, ToggleBodies>();

/** What a toggle is decided by: the gate's `enabled`, and the typed flag's answer (null for a boolean one). */
export interface ToggleDecision {
  enabled: boolean;
  answer: Resolution | null;
}

/** decideToggle's answer: one object, rewritten by each call, so a list of flags allocates none per flag. */
const decided: ToggleDecision = { enabled: false, answer: null };

/**
 * The Evaluation API's answer for `state` and `ctx` (src/evaluation/engine/engine.ts answerBody): the gate, then the
 * variant; a state whose audience the plan does not allow is off. `nowMs` gives `$flagd.timestamp`. The
 * object returned is rewritten by the next call: read it first.
 */
export function decideToggle(state: EvalState, ctx: EvalContext & RuleContext, audiencesAllowed: boolean, nowMs: number): ToggleDecision {
  decided.answer = null;
  if (blockedByPlan(state, audiencesAllowed)) {
    decided.enabled = false;
    return decided;
  }
  const decision = decideState(state, ctx);
  decided.enabled = decisionValue(decision);
  if (state.variants === null) return decided;
  decided.answer = sayable(state.variants, resolveVariant(state.variants, decision, ctx, nowMs));
  return decided;
}

/** A rule's error names its cause (a new answer each time); the toggle says only "no value": one per state. */
function sayable(variants: CompiledVariants, answer: Resolution): Resolution {
  return answer.errorCode === undefined ? answer : variants.flag.answers.ruleFailed;
}

/**
 * decideToggle's decision for `state` whatever the context (an object of its own), or null where the
 * context can change it (settledAnswer): a project's list writes those toggles once per flag version
 * (frontend-evaluator.ts).
 */
export function contextFreeToggle(state: EvalState, audiencesAllowed: boolean): ToggleDecision | null {
  const settled = settledAnswer(state, audiencesAllowed);
  if (settled === null) return null;
  if (settled === kPlanRefused) return { enabled: false, answer: null };
  const { decision, resolution } = settled;
  return {
    enabled: decisionValue(decision),
    answer: resolution === null || state.variants === null ? null : sayable(state.variants, resolution),
  };
}

/** The toggle's JSON for `flag` and `decision`, built on first use and kept with the flag version. */
export function toggleBody(flag: FlagEntry, { enabled, answer }: ToggleDecision): Buffer {
  let bodies = kBodies.get(flag);
  if (bodies === undefined) {
    bodies = { plain: [undefined, undefined], typed: null };
    kBodies.set(flag, bodies);
  }
  const index = enabled ? 1 : 0;
  if (answer === null) {
    bodies.plain[index] ??= Buffer.from(JSON.stringify(toggleOf(flag.name, enabled, null)));
    return bodies.plain[index];
  }
  bodies.typed ??= [new Map(), new Map()];
  let body = bodies.typed[index].get(answer);
  if (body === undefined) {
    body = Buffer.from(JSON.stringify(toggleOf(flag.name, enabled, answer)));
    bodies.typed[index].set(answer, body);
  }
  return body;
}
