// OFREP's answers as JSON text: the one home of their wording and key order, so that the eval workers'
// route set (evaluate.ts, which keeps each as bytes with its flag version) and the edge (src/edge, which
// answers from a snapshot with no Buffer) write the same bytes for the same answer.
import { decidedBy, decisionInExperiment } from '../evaluation/engine/evaluate.js';
import { experimentMetadata } from '../model/flags.js';
import type { OfrepErrorCode } from '../model/ofrep-schemas.js';
import type { Resolution } from '../targeting/compiled-flag.js';
import { kReasons } from './answer.js';

export const kProjectHeader = 'X-Flagwire-Project';

/** What an answer names of its flag. */
export interface NamedFlag {
  readonly id: string;
  readonly name: string;
}

/**
 * `{"errorCode", "errorDetails"}` (bulk) or with `key` first (single flag); a flag state's failure while it
 * runs an experiment adds `metadata` naming it, never an exposure (issue 58).
 */
export function ofrepFailureText(key: string | null, code: OfrepErrorCode, details: string, experiment: string | null = null): string {
  if (experiment !== null)
    return JSON.stringify({ key, errorCode: code, errorDetails: details, metadata: experimentMetadata(experiment, false) });
  return JSON.stringify(key === null ? { errorCode: code, errorDetails: details } : { key, errorCode: code, errorDetails: details });
}

/** A boolean state's success for decision `slot`, keyed by `key` (the flag's id or name). */
export function decisionText(flag: NamedFlag, key: string, slot: number, experiment: string | null): string {
  const value = (slot & 1) === 1;
  const metadata = {
    id: flag.id,
    name: flag.name,
    ...(experiment === null ? {} : experimentMetadata(experiment, decisionInExperiment(slot))),
  };
  return JSON.stringify({ key, value, reason: kReasons[decidedBy(slot)], variant: value ? 'on' : 'off', metadata });
}

/**
 * A variant state's success for `answer`: the variant and its value; where the caller's own default
 * applies (DISABLED, DEFAULT without a default variant) neither, as open-feature/protocol ADR-0006 says.
 */
export function variantText(flag: NamedFlag, key: string, answer: Resolution): string {
  // flagd's flag metadata, then the flag's id and name (which win over metadata keys of those names).
  const metadata = { ...answer.flagMetadata, id: flag.id, name: flag.name };
  return JSON.stringify(
    answer.value === undefined
      ? { key, reason: answer.reason, metadata }
      : { key, value: answer.value, reason: answer.reason, variant: answer.variant, metadata },
  );
}

/** A rule's error: GENERAL with flagd's message. */
export function ruleErrorText(key: string, answer: Resolution, experiment: string | null): string {
  return ofrepFailureText(key, 'GENERAL', answer.errorMessage ?? 'The targeting rule failed.', experiment);
}

/** FLAG_NOT_FOUND's details: the same text whether the key is unknown or names a flag of another project. */
export function notFoundDetails(key: string, project: string): string {
  if (project !== '') return `No flag with id or name "${key}" exists in project "${project}".`;
  return `No flag with id "${key}" exists. A flag name works as the key only with the ${kProjectHeader} header naming its project.`;
}

/**
 * The bulk route without X-Flagwire-Project: the most likely first mistake with the web provider, which
 * shows only "status: 400" and then FLAG_NOT_FOUND for every flag; this says what to change.
 */
export const kMissingProjectDetails =
  `The ${kProjectHeader} header is missing. The bulk route evaluates ` +
  `every flag of one project, named by that header: configure the OFREP provider with headers: [['${kProjectHeader}', '<project id>']] ` +
  '(docs/api.md: OpenFeature). Without it the provider gets no flags, and every flag reads FLAG_NOT_FOUND.';

/** The bulk route's 400 for an X-Flagwire-Project that names no project. */
export function unknownProjectDetails(project: string): string {
  return `No project with id "${project}" exists (from the ${kProjectHeader} header).`;
}

/** ADR-0008's default; Flagwire's heartbeat (15 s) keeps a stream alive far inside it. */
const kInactivityDelaySec = 120;

/** The OFREP change stream of a project (and environment): src/stream/change-feed.ts. */
export function ofrepStreamPath(projectId: string, env: string | null): string {
  const path = `/ofrep/v1/stream/project/${encodeURIComponent(projectId)}`;
  return env === null ? path : `${path}?env=${encodeURIComponent(env)}`;
}

/**
 * The bulk answer's end, `],"eventStreams":[…]}` (open-feature/protocol ADR-0008): where a provider hears of
 * changes instead of polling. An endpoint without origin: the provider resolves it against its own baseUrl,
 * so it works behind any proxy or host name the provider reached us by.
 */
export function bulkTailText(projectId: string, env: string | null): string {
  const streams = [{ type: 'sse', endpoint: { requestUri: ofrepStreamPath(projectId, env) }, inactivityDelaySec: kInactivityDelaySec }];
  return `],"eventStreams":${JSON.stringify(streams)}}`;
}

/**
 * The bulk answer's form, in the context ETag's hash: a release that changes what an unchanged
 * configuration answers an unchanged context bumps it, so that no client keeps an old answer on a 304.
 */
const kBulkTagForm = 1;

/**
 * What the bulk ETag hashes where the request alone decides the answer (evaluate.ts contextTag): the
 * form, whether the plan allows audiences now, the project and the body as sent.
 */
export function contextTagText(projectId: string, body: string, audiencesAllowed: boolean): string {
  return `${kBulkTagForm}${audiencesAllowed ? 'a' : '-'}${projectId}\n${body}`;
}
