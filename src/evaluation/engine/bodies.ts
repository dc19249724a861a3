// Evaluation API bodies, as bytes ready to send: a flag's `{id, name, enabled}` (built once per flag
// version; with `variant` and `value` for a state with typed variants, once per answer) and the error
// bodies `{error, detail}` (errorBody of the shared error table; the fixed ones built once at load).
// Never built per request. The 200 shapes are in src/model/eval-shapes.ts.
import type { ErrorBody } from '../../error-schemas.js';
import { errorBody, FlagwireError, type ErrorCode } from '../../errors.js';
import { kInvalidMinRevisionDetail, kRevisionNotReachedDetail } from '../../http/revisions.js';
import type { EvalFlag } from '../../model/eval-shapes.js';
import type { Flag } from '../../model/flags.js';
import type { UnleashPayload } from '../../model/unleash-model.js';
import type { Resolution } from '../../targeting/compiled-flag.js';
import { kAudiencePlanDetail } from './evaluate.js';
import { inExperiment } from './variants.js';

/** `{id, name, enabled}` in that order: built once per flag version, never per request. */
export function evalFlagBody(flag: Flag, enabled: boolean): Buffer {
  const body: EvalFlag = { id: flag.id, name: flag.name, enabled };
  return Buffer.from(JSON.stringify(body));
}

/**
 * `{id, name, enabled, experimentKey, inExperiment}`: a boolean state's answer while it runs an
 * experiment (issue 58), built once per state and decision, never per request.
 */
export function evalExperimentBody(flag: { id: string; name: string }, experiment: string, enabled: boolean, exposed: boolean): Buffer {
  const body: EvalFlag = { id: flag.id, name: flag.name, enabled, experimentKey: experiment, inExperiment: exposed };
  return Buffer.from(JSON.stringify(body));
}

/**
 * `{id, name, enabled, variant, value}` for a state with typed variants or in Unleash's model. Where the
 * caller's own default applies (disabled, no default variant, a rule's error) `variant` and `value` are
 * left out, as OFREP leaves them out (open-feature/protocol ADR-0006). An Unleash variant's `payload`
 * follows as `unleashPayloadType` and `unleashPayload`, the keys OFREP's flag metadata gives it. With an
 * experiment, `experimentKey` and `inExperiment` follow (the answer's, fixed when the state was compiled:
 * src/evaluation/engine/variants.ts).
 */
export function evalVariantBody(
  flag: { id: string; name: string },
  enabled: boolean,
  answer: Resolution,
  experiment: string | null,
  payload: UnleashPayload | undefined,
): Buffer {
  const body: EvalFlag = { id: flag.id, name: flag.name, enabled };
  if (answer.value !== undefined) {
    body.variant = answer.variant;
    body.value = answer.value;
  }
  if (payload !== undefined) {
    body.unleashPayloadType = payload.type;
    body.unleashPayload = payload.value;
  }
  if (experiment !== null) {
    body.experimentKey = experiment;
    body.inExperiment = inExperiment(answer);
  }
  return Buffer.from(JSON.stringify(body));
}

export function evalErrorBody(code: ErrorCode, detail: string): Buffer {
  return Buffer.from(JSON.stringify(errorBody(new FlagwireError(code, detail))));
}

/** Decision (docs/decisions.md): a flag that applies an audience while its plan has no audiences fails closed. */
export const kAudiencePlanBody = evalErrorBody('FORBIDDEN', kAudiencePlanDetail);

/** spec: Evaluation API errors, 500. Also what every request of a batch gets when its worker dies. */
export const kInternalErrorBody = evalErrorBody(
  'INTERNAL',
  'An unexpected error occurred while evaluating; it has been logged. Retry, and report it if it persists.',
);

/**
 * The bounded evaluation queue is full, or the server is stopping. 503 with Retry-After (the spec's
 * error table does not cover overload; a 5xx that tells clients to retry is the honest answer).
 */
export const kOverloadedBody = unavailableBody('The evaluation queue is full or the server is stopping; retry after a second.');

/**
 * Why a request whose batch did not come back within the batcher's timeout is refused (503, Retry-After:
 * 1): the batch's other requests, another project's among them, are not at fault, so they are told to
 * retry, not that the server failed (batcher.ts). Every route set's detail says the same.
 */
export const kBatchTimedOutDetail =
  'The evaluation batch this request was answered in did not come back in time (a request evaluated with it ' +
  'was slow; the worker is being replaced). Retry after a second.';
export const kBatchTimedOutBody = unavailableBody(kBatchTimedOutDetail);

/** A 503 in the Evaluation API's envelope (the spec's error table does not cover overload, as above). */
function unavailableBody(detail: string): Buffer {
  return Buffer.from(JSON.stringify({ error: 'Service unavailable', detail } satisfies ErrorBody));
}

/** A 429 in the Evaluation API's envelope: the spec's error table has no 429 for evaluation, so no code of its own. */
export function tooManyRequestsBody(detail: string): Buffer {
  return Buffer.from(JSON.stringify({ error: 'Too many requests', detail } satisfies ErrorBody));
}

/** A Flagwire-Min-Revision that is not a revision (400; src/http/revisions.ts). */
export const kInvalidMinRevisionBody = evalErrorBody('INVALID_REQUEST', kInvalidMinRevisionDetail);

/** A Flagwire-Min-Revision this node's copy did not reach within the wait (503, Retry-After: 1). */
export const kRevisionNotReachedBody = evalErrorBody('REVISION_NOT_REACHED', kRevisionNotReachedDetail);
