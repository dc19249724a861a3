// A batch of events read from its JSON (issue 58, item 2): the batch's own shape is checked first (a
// batch that is not one is a 400, and nothing of it is kept); then each event on its own, so that a bad
// event is named by its index and reason and the good ones of the same batch are kept. Pure: the
// route reads the body (src/events/body.ts) and the store keeps what this returns.
import { FlagwireError } from '../errors.js';
import { compileValidator } from '../model/validation.js';
import {
  type ClientEvent,
  EventBatch,
  EventIn,
  type EventRejection,
  kMaxDetailsBytes,
  kMaxEventAgeMs,
  kMaxEventLeadMs,
  type ReadBatch,
} from './schemas.js';

const kBatchValidator = compileValidator(EventBatch, { quoteKeys: false });
const kEventValidator = compileValidator(EventIn, { quoteKeys: false });

/** The events of a POST /ofrep/v1/events body (the JSON object readEventsBody read), at the server's time `now`. */
export function readEventBatch(body: Readonly<Record<string, unknown>>, now: number): ReadBatch {
  if (!kBatchValidator.check(body)) throw new FlagwireError('INVALID_REQUEST', kBatchValidator.problems(body).join('; '));
  return { batchId: body.batchId ?? null, ...readEach(body.events, (raw) => readEvent(raw, now)) };
}

/** Each of a batch's events read by `read` (an event, or why it is refused), the refused ones named by index. */
export function readEach(
  raws: readonly unknown[],
  read: (raw: unknown) => ClientEvent | string,
): Pick<ReadBatch, 'events' | 'indexes' | 'rejected'> {
  const events: ClientEvent[] = [];
  const indexes: number[] = [];
  const rejected: EventRejection[] = [];
  for (const [index, raw] of raws.entries()) {
    const event = read(raw);
    if (typeof event === 'string') rejected.push({ index, reason: event });
    else {
      events.push(event);
      indexes.push(index);
    }
  }
  return { events, indexes, rejected };
}

/** One event checked against its schema and the rules a schema cannot say, or why it is refused. */
export function readEvent(raw: unknown, now: number): ClientEvent | string {
  if (!kEventValidator.check(raw)) {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'an event must be a JSON object';
    return kEventValidator.problems(raw).join('; ');
  }
  return checkedEvent(
    {
      kind: raw.kind,
      key: raw.key,
      targetingKey: raw.targetingKey,
      variant: raw.variant ?? null,
      value: raw.kind === 'track' ? (raw.value ?? 1) : 0,
      details: raw.details ?? null,
      timestamp: raw.timestamp,
    },
    raw.value !== undefined,
    now,
  );
}

/**
 * The rules every event meets whichever body it came in (ours, GO Feature Flag's): an exposure names its
 * variant and carries no value; `details` fits its bytes; the time is within the window around `now`.
 */
export function checkedEvent(event: ClientEvent, valueSent: boolean, now: number): ClientEvent | string {
  if (event.kind === 'exposure') {
    if (event.variant === null) return 'an exposure must name the variant served ("variant")';
    if (valueSent) return 'an exposure carries no "value" (a track does)';
  } else if (event.variant !== null) return 'a track carries no "variant": the subject\'s exposure fixed it';
  if (event.details !== null && Buffer.byteLength(JSON.stringify(event.details)) > kMaxDetailsBytes)
    return `details must be at most ${kMaxDetailsBytes} bytes as JSON`;
  if (event.timestamp < now - kMaxEventAgeMs) return 'timestamp is more than 7 days before the server received it';
  if (event.timestamp > now + kMaxEventLeadMs) return 'timestamp is more than 10 minutes after the server received it';
  return event;
}
