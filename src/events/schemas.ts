// The events a client sends (issue 58, item 2): exposures and outcomes, in batches, as TypeBox values
// (the single source of their types, their checks and the OpenAPI document's components), with the
// limits every field, every batch and every body is held to (docs/operations.md: Events).
import { type Static, Type } from '../typebox.js';

/** Events in one batch: a client batches at most 1,000 (or 10 s) before it sends. */
export const kMaxEventsPerBatch = 1000;
/**
 * A gzip body is inflated to at most this many bytes (and sent as at most 1 MiB, the body cap of every
 * route: src/http/body.ts). 1,000 events at their largest (every field and `details` full) are about
 * 3.3 MiB of JSON; 8 MiB leaves room for whitespace and GO Feature Flag's heavier shape, and bounds
 * what one request may make the node hold (the inflate stops there: src/events/body.ts).
 */
export const kMaxInflatedBytes = 8 * 1024 * 1024;
/** An event's `key` (a flag's key for an exposure, a metric's for a track) and `variant`. */
export const kMaxKeyLength = 200;
/** A subject's `targetingKey`, as long as a cohort value may be (src/model/schemas.ts kLimits.cohortLength). */
export const kMaxTargetingKeyLength = 256;
/** `details`: at most this many entries, each value at most kMaxDetailLength characters, and this many bytes as JSON. */
export const kMaxDetailEntries = 20;
export const kMaxDetailLength = 256;
export const kMaxDetailsBytes = 2048;
/** A track's `value`: a finite number of at most this magnitude, so sums of squares of a subject's totals stay exact enough to add. */
export const kMaxAbsValue = 1e9;
/** How far from the server's clock an event's `timestamp` may be: a week late (a client that was offline), 10 minutes early (clock skew). */
export const kMaxEventAgeMs = 7 * 24 * 3600 * 1000;
export const kMaxEventLeadMs = 10 * 60 * 1000;
/** A batch id: what a client retrying a batch whose answer it lost sends again (docs/api.md: Events). */
export const kMaxBatchIdLength = 64;

const Key = Type.String({
  minLength: 1,
  maxLength: kMaxKeyLength,
  'x-error': `must be a non-empty string of at most ${kMaxKeyLength} characters`,
});

/** One event, as POST /ofrep/v1/events takes it. */
export const EventIn = Type.Object(
  {
    kind: Type.Union([Type.Literal('exposure'), Type.Literal('track')], { 'x-error': 'must be "exposure" or "track"' }),
    key: Key,
    targetingKey: Type.String({
      minLength: 1,
      maxLength: kMaxTargetingKeyLength,
      description: 'The subject: the evaluation context targetingKey the answer was for',
      'x-error': `must be a non-empty string of at most ${kMaxTargetingKeyLength} characters`,
    }),
    variant: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: kMaxKeyLength,
        description: 'An exposure: the variant served (required)',
        'x-error': `must be a non-empty string of at most ${kMaxKeyLength} characters`,
      }),
    ),
    value: Type.Optional(
      Type.Number({
        minimum: -kMaxAbsValue,
        maximum: kMaxAbsValue,
        description: "A track: what the outcome adds to the subject's total for the metric `key` (default 1: a conversion)",
        'x-error': `must be a number between -${kMaxAbsValue} and ${kMaxAbsValue}`,
      }),
    ),
    details: Type.Optional(
      Type.Record(
        Type.String({ maxLength: 64 }),
        Type.Union([Type.String({ maxLength: kMaxDetailLength }), Type.Number(), Type.Boolean(), Type.Null()], {
          'x-error': `must be a string of at most ${kMaxDetailLength} characters, a number, a boolean or null`,
        }),
        {
          maxProperties: kMaxDetailEntries,
          description: `At most ${kMaxDetailEntries} entries of a string (at most ${kMaxDetailLength} characters), number, boolean or null; ${kMaxDetailsBytes} bytes as JSON`,
          'x-error': `must be an object of at most ${kMaxDetailEntries} entries, each a string of at most ${kMaxDetailLength} characters, a number, a boolean or null`,
        },
      ),
    ),
    timestamp: Type.Integer({
      minimum: 0,
      description: 'When it happened, Unix ms: at most a week before the server receives it, at most 10 minutes after',
      'x-error': 'must be a whole number of milliseconds since 1970 (Unix ms)',
    }),
  },
  { additionalProperties: false },
);
export type EventIn = Static<typeof EventIn>;

/** The body of POST /ofrep/v1/events: each event is checked on its own, so a bad one is named and the rest kept. */
export const EventBatch = Type.Object(
  {
    batchId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: kMaxBatchIdLength,
        description: 'Names the batch: one sent again with the same id is counted once (a retry whose answer was lost)',
        'x-error': `must be a non-empty string of at most ${kMaxBatchIdLength} characters`,
      }),
    ),
    events: Type.Array(Type.Unknown(), {
      minItems: 1,
      maxItems: kMaxEventsPerBatch,
      'x-error': `must be an array of 1 to ${kMaxEventsPerBatch} events`,
    }),
  },
  { additionalProperties: false },
);
export type EventBatch = Static<typeof EventBatch>;

/** An event as it is counted (and, later, stored): every field present, `value` resolved. */
export interface ClientEvent {
  readonly kind: 'exposure' | 'track';
  readonly key: string;
  readonly targetingKey: string;
  /** An exposure's variant; null for a track. */
  readonly variant: string | null;
  /** A track's value (1 when not sent); 0 for an exposure. */
  readonly value: number;
  readonly details: Readonly<Record<string, string | number | boolean | null>> | null;
  readonly timestamp: number;
}

/** A bad event of a batch: its index and why; never stored. */
export const EventRejection = Type.Object({ index: Type.Integer({ minimum: 0 }), reason: Type.String() });
export type EventRejection = Static<typeof EventRejection>;

/** A batch read: its id (null: none sent), the good events, and the bad ones named. */
export interface ReadBatch {
  readonly batchId: string | null;
  readonly events: readonly ClientEvent[];
  /** Each good event's index in the body (what a rejection found later names it by). */
  readonly indexes: readonly number[];
  readonly rejected: readonly EventRejection[];
}

/** The body of a subject's erasure: its targeting key. */
export const SubjectErase = Type.Object(
  {
    targetingKey: Type.String({
      minLength: 1,
      maxLength: kMaxTargetingKeyLength,
      description: 'The subject to erase: the targeting key its events named',
      'x-error': `must be a non-empty string of at most ${kMaxTargetingKeyLength} characters`,
    }),
  },
  { additionalProperties: false },
);

/** The answer to an erasure: whether anything of the subject was kept. */
export const SubjectErased = Type.Object(
  {
    targetingKey: Type.String(),
    environment: Type.Union([Type.String(), Type.Null()]),
    erased: Type.Boolean({ description: 'false: nothing of this subject was kept in this environment' }),
  },
  { additionalProperties: false },
);

/** The answer to a batch: events kept (exposures already kept included), those exposures, and each event refused with why. */
export const EventsAccepted = Type.Object(
  {
    accepted: Type.Integer({
      minimum: 0,
      description: 'Events counted, or exposures already counted (a subject is counted once per experiment)',
    }),
    duplicates: Type.Integer({ minimum: 0, description: 'Exposures of a subject already exposed to the experiment: they change nothing' }),
    rejected: Type.Array(EventRejection, { description: 'The events refused, by their index in the batch, each with why; never stored' }),
    ingestedContentCount: Type.Optional(
      Type.Integer({ minimum: 0, description: "GO Feature Flag's collector: `accepted`, under its name" }),
    ),
  },
  { additionalProperties: false },
);

/** The most days a project may keep its raw events: a year and a month. */
export const kMaxRetentionDays = 400;

const RetentionDays = Type.Union([Type.Integer({ minimum: 1, maximum: kMaxRetentionDays }), Type.Null()], {
  description: 'Days each raw event is kept from when it was stored; null: raw events are not kept (the default)',
  'x-error': `must be a whole number of days from 1 to ${kMaxRetentionDays}, or null (keep none)`,
});

/** A project's events settings. */
export const EventSettings = Type.Object({ rawEventRetentionDays: RetentionDays }, { additionalProperties: false });
export type EventSettings = Static<typeof EventSettings>;

/** A change of a project's events settings: what it names changes, the rest stays. */
export const EventSettingsPatch = Type.Object({ rawEventRetentionDays: Type.Optional(RetentionDays) }, { additionalProperties: false });
