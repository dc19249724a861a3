// A usage report: the evaluations one sender counted since its last, as one batch under an id it sends
// again until it is answered (docs/api.md: Usage reports). Flagwire's provider counts per flag and
// variant, in the environment its ?env= names; a relay per flag, environment and hour. The variant counts are read and summed per flag, not kept.
import { kMaxBatchEntries } from '../provider/usage-batches.js';
import { type Static, Type } from '../typebox.js';

/** Flags (or flag and variant pairs) one report names at most: what a sender puts in one batch. */
export const kMaxReportEntries = kMaxBatchEntries;
/**
 * Evaluations one entry counts at most: what one sender can evaluate of one flag in a report's interval
 * (a minute by default) with room to spare, as an Unleash SDK's report is bounded (src/unleash/client-reports.ts).
 */
export const kMaxEntryEvaluations = 1_000_000_000;

const UsageEntry = Type.Object(
  {
    flag: Type.String({ minLength: 1, maxLength: 200, description: "The flag's id" }),
    variant: Type.Optional(Type.String({ maxLength: 200, description: 'The variant answered (read, not kept)' })),
    env: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          "The environment evaluated: a relay's report names it per entry (absent: a single flag's one state); refused on POST /v1/usage, where ?env= names it",
      }),
    ),
    evaluations: Type.Integer({ minimum: 1, maximum: kMaxEntryEvaluations }),
    lastEvaluatedAt: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: "The latest evaluation counted, Unix ms (a relay's; a provider's count is timed at its arrival)",
      }),
    ),
  },
  { additionalProperties: false },
);

export const UsageReport = Type.Object(
  {
    batchId: Type.String({
      minLength: 8,
      maxLength: 64,
      pattern: '^[A-Za-z0-9_-]+$',
      description: 'Unique per batch: a batch sent again under its id is counted once',
    }),
    counts: Type.Array(UsageEntry, { maxItems: kMaxReportEntries }),
  },
  { additionalProperties: false, description: 'Evaluations counted outside the server since the last report, one batch' },
);
export type UsageReport = Static<typeof UsageReport>;

export const UsageReportAnswer = Type.Object(
  {
    batchId: Type.String(),
    counted: Type.Boolean({ description: 'false: this batch id was counted before (a batch sent again), and nothing was added' }),
  },
  { additionalProperties: false },
);
export type UsageReportAnswer = Static<typeof UsageReportAnswer>;
