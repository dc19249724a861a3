// GO Feature Flag's data collector body (POST /v1/data/collector), which its stock OpenFeature
// providers send (cmd/relayproxy/model/collect_eval_data_request.go: `{meta, events}`), read as the same
// events as Flagwire's own (issue 58, item 2):
//
//   GO Feature Flag's event                                           Flagwire's
//   {kind: "feature", userKey, key, variation, creationDate (Unix s),  exposure {targetingKey: userKey, key, variant: variation,
//    default, metadata, ...}                                             timestamp: creationDate * 1000}
//   {kind: "tracking", userKey, key, creationDate,                     track {targetingKey: userKey, key, value: details.value
//    trackingEventDetails, evaluationContext}                            (a number; else 1), details, timestamp}
//
// A feature event with `default: true` is an evaluation that failed (the caller's default was served):
// never an exposure, so it is refused and named. So is an event of an evaluation without a targeting key,
// which GO Feature Flag's providers send under the user key "undefined-targetingKey": counted, every
// caller without a key would be one subject, its outcomes summed across them all. Each mapped event is
// then checked as one of ours.
import { FlagwireError } from '../errors.js';
import { compileValidator } from '../model/validation.js';
import { type Static, Type } from '../typebox.js';
import { readEach, readEvent } from './event-batch.js';
import { kMaxEventsPerBatch, type ReadBatch } from './schemas.js';

export const GoffCollectorBody = Type.Object(
  {
    meta: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { 'x-error': 'must be an object' })),
    events: Type.Array(Type.Unknown(), {
      minItems: 1,
      maxItems: kMaxEventsPerBatch,
      'x-error': `must be an array of 1 to ${kMaxEventsPerBatch} events`,
    }),
  },
  { description: "GO Feature Flag's data collector body: its providers' feature and tracking events" },
);
export type GoffCollectorBody = Static<typeof GoffCollectorBody>;

const kBodyValidator = compileValidator(GoffCollectorBody, { quoteKeys: false });
/** The user key GO Feature Flag's providers send for an evaluation without a targeting key. */
const kNoTargetingKey = 'undefined-targetingKey';

/** The events of a GO Feature Flag collector body (the JSON object readEventsBody read), at the server's time `now`. */
export function readGoffCollectorBatch(body: Readonly<Record<string, unknown>>, now: number): ReadBatch {
  if (!kBodyValidator.check(body)) throw new FlagwireError('INVALID_REQUEST', kBodyValidator.problems(body).join('; '));
  return {
    batchId: null,
    ...readEach(body.events, (raw) => {
      const mapped = goffEvent(raw);
      return typeof mapped === 'string' ? mapped : readEvent(mapped, now);
    }),
  };
}

/** One of GO Feature Flag's events as Flagwire's event body, or why it cannot be one. */
function goffEvent(raw: unknown): Record<string, unknown> | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'an event must be a JSON object';
  const event = raw as Record<string, unknown>;
  const timestamp = typeof event.creationDate === 'number' ? event.creationDate * 1000 : event.creationDate;
  if (event.userKey === kNoTargetingKey) {
    return `no targeting key (GO Feature Flag's "${kNoTargetingKey}"): an evaluation without one is no subject`;
  }
  if (event.kind === 'feature') {
    if (event.default === true) return 'the evaluation failed ("default": true): the caller\'s default was served, which is no exposure';
    return defined({
      kind: 'exposure',
      key: event.key,
      targetingKey: event.userKey,
      variant: event.variation,
      timestamp,
      details: primitives(event.metadata),
    });
  }
  if (event.kind === 'tracking') {
    const details = event.trackingEventDetails;
    const value = typeof details === 'object' && details !== null ? (details as Record<string, unknown>).value : undefined;
    return defined({ kind: 'track', key: event.key, targetingKey: event.userKey, timestamp, value, details });
  }
  return `kind must be "feature" or "tracking" (GO Feature Flag's), not ${JSON.stringify(event.kind)}`;
}

/** A feature event's metadata kept where it is flat (what `details` holds); anything else is left out, not refused. */
function primitives(metadata: unknown): Record<string, unknown> | undefined {
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return undefined;
  const kept = Object.entries(metadata).filter(([, v]) => v === null || ['string', 'number', 'boolean'].includes(typeof v));
  return kept.length === 0 ? undefined : Object.fromEntries(kept);
}

/** The fields that are there: one absent from GO Feature Flag's event is absent from ours, as JSON would have it. */
function defined(event: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(event).filter(([, value]) => value !== undefined));
}
