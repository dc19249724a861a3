// One evaluation from a compiled snapshot, in OpenFeature's terms: OFREP's answer (src/ofrep/answer.ts,
// the code the server's OFREP route set runs) turned into resolution details, and its failures into
// the OpenFeature errors whose codes OFREP answers (FLAG_NOT_FOUND, INVALID_CONTEXT, TARGETING_KEY_MISSING,
// GENERAL), plus TYPE_MISMATCH where the value is not of the type asked for, as the OFREP provider says.
import {
  type EvaluationContext,
  FlagNotFoundError,
  type FlagValueType,
  GeneralError,
  InvalidContextError,
  type JsonValue,
  ProviderNotReadyError,
  type ResolutionDetails,
  TargetingKeyMissingError,
  TypeMismatchError,
} from '@openfeature/server-sdk';
import { decidedBy, decisionInExperiment, kAudiencePlanDetail } from '../evaluation/engine/evaluate.js';
import { experimentMetadata } from '../model/flags.js';
import { kKeyMissingDetails, kReasons, kSlotAudiencePlan, kSlotKeyMissing, ofrepAnswer } from '../ofrep/answer.js';
import type { OfrepContext } from '../ofrep/context.js';
import type { CompiledSnapshot, ProviderFlag } from './compile.js';
import type { UsageCounts } from './usage-reporter.js';

export type FlagValue = boolean | string | number | JsonValue;

/**
 * The resolution of `flagKey` (a flag's id or name) for `context`, or a thrown OpenFeature error.
 * `ctx` is reused (one per provider: evaluations are synchronous); `nowMs` gives `$flagd.timestamp`.
 * `counts`: where an evaluation of a flag that exists is counted, by its variant ('' when it has none,
 * or failed), as the server counts every request that finds its flag, whatever the answer.
 */
export function resolveFlag<T extends FlagValue>(
  snapshot: CompiledSnapshot | null,
  ctx: OfrepContext,
  flagKey: string,
  type: FlagValueType,
  defaultValue: T,
  context: EvaluationContext,
  nowMs: number,
  counts: UsageCounts | null = null,
): ResolutionDetails<T> {
  if (snapshot === null) {
    throw new ProviderNotReadyError('No snapshot yet: the server has not answered and no snapshot file was found (docs/provider.md).');
  }
  // As OFREP: a context that cannot be read fails before the flag is looked up.
  if (!ctx.fill(context)) {
    if (ctx.errorCode === 'INVALID_CONTEXT') throw new InvalidContextError(ctx.errorDetails);
    throw new GeneralError(ctx.errorDetails);
  }
  const flag = snapshot.byKey.get(flagKey);
  if (flag === undefined) throw new FlagNotFoundError(`No flag with id or name "${flagKey}" exists in project "${snapshot.projectId}".`);
  if (counts === null) return resolveFound(snapshot, flag, ctx, flagKey, type, defaultValue, nowMs);
  let variant = '';
  try {
    const details = resolveFound(snapshot, flag, ctx, flagKey, type, defaultValue, nowMs);
    variant = details.variant ?? '';
    return details;
  } finally {
    counts.count(flag.id, variant);
  }
}

/** resolveFlag's answer once its flag is found, `ctx` filled from the context. */
function resolveFound<T extends FlagValue>(
  snapshot: CompiledSnapshot,
  flag: ProviderFlag,
  ctx: OfrepContext,
  flagKey: string,
  type: FlagValueType,
  defaultValue: T,
  nowMs: number,
): ResolutionDetails<T> {
  // The snapshot is one environment's: a context naming another cannot be answered from it.
  if (snapshot.environment !== null && ctx.env !== null && ctx.env !== snapshot.environment) {
    throw new InvalidContextError(
      `This provider evaluates environment "${snapshot.environment}" of its project; the context names "${ctx.env}".`,
    );
  }
  // As EvalEngine.audiencesAllowed at `nowMs`: a trial that ended since the snapshot no longer allows them.
  const audiencesAllowed = snapshot.audiencesAllowed && nowMs < snapshot.audiencesUntil;
  const answer = ofrepAnswer(flag.state, ctx, audiencesAllowed, nowMs);
  if (typeof answer === 'number') {
    if (answer === kSlotAudiencePlan) throw new GeneralError(kAudiencePlanDetail);
    if (answer === kSlotKeyMissing) throw new TargetingKeyMissingError(kKeyMissingDetails);
    checkType(true, type, flagKey);
    let decided = flag.decided[answer];
    if (decided === undefined) {
      const value = (answer & 1) === 1;
      // With an experiment, the answer names it and whether it is an exposure (issue 58), as OFREP's does.
      const experiment = flag.state.experiment;
      const flagMetadata =
        experiment === null ? flag.metadata : { ...flag.metadata, ...experimentMetadata(experiment, decisionInExperiment(answer)) };
      decided = Object.freeze({ value, reason: kReasons[decidedBy(answer)], variant: value ? 'on' : 'off', flagMetadata });
      flag.decided[answer] = decided;
    }
    return decided as ResolutionDetails<T>;
  }
  if (answer.errorCode !== undefined) throw new GeneralError(answer.errorMessage ?? 'The targeting rule failed.');
  // flagd's flag metadata, then the flag's id and name (which win over metadata keys of those names), as OFREP's.
  const flagMetadata = { ...answer.flagMetadata, ...flag.metadata };
  // No value: the caller's own default applies (a disabled state, DEFAULT without a default variant).
  if (answer.value === undefined) return { value: defaultValue, reason: answer.reason, flagMetadata };
  return { value: checkType(answer.value, type, flagKey) as T, reason: answer.reason, variant: answer.variant, flagMetadata };
}

function checkType(value: unknown, type: FlagValueType, flagKey: string): unknown {
  const actual = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  if (actual === type) return value;
  throw new TypeMismatchError(`Flag "${flagKey}" has a ${actual} value; it was asked for a ${type}.`);
}
