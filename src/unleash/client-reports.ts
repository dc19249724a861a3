// What Unleash's server SDKs report (POST /api/client/register and /api/client/metrics), as TypeBox
// values, and their counts as Flagwire's flag usage. The shapes are Unleash's client specification's, as
// unleash-client-node sends them and Unleash Edge reads them: fields Flagwire does not read are allowed
// and not kept (an SDK's newer fields must not make it warn).
import { type Flag, kSingleState, type UsageCount } from '../model/flags.js';
import { type Static, Type } from '../typebox.js';

/** What one report may say per flag and answer: a count in 31 bits, as the SDKs keep it. */
const kMaxCount = 2 ** 31 - 1;
/**
 * What one report counts of one flag at most (issue 96, item 7; docs/operations.md: Flag usage): what one
 * SDK instance can have evaluated of it in an interval (unleash-client's default is a minute: 10 million is
 * about 170,000 a second), where 2^31 per report let a read token add 4.1e13 in 20 s. Clamped, not
 * refused: unleash-client keeps a refused report's counts and sends them again, summed with the next
 * interval's, so an SDK that was cut off for a while would be refused for good.
 */
export const kMaxReportCount = 10_000_000;
const kCount = Type.Integer({ minimum: 0, maximum: kMaxCount });
const kTime = Type.Union([Type.String(), Type.Number()], { description: 'An ISO 8601 time (the SDKs send one) or Unix ms' });

export const UnleashClientRegistration = Type.Object(
  {
    appName: Type.String({ minLength: 1, description: "The SDK's appName" }),
    instanceId: Type.Optional(Type.String()),
    connectionId: Type.Optional(Type.String()),
    sdkVersion: Type.Optional(Type.String()),
    strategies: Type.Optional(Type.Array(Type.String(), { description: 'The strategies the SDK implements' })),
    started: Type.Optional(kTime),
    interval: Type.Optional(Type.Number({ description: "The SDK's metrics interval, ms" })),
  },
  { additionalProperties: true, description: "An SDK's registration, as Unleash's client specification says it (read, not kept)" },
);

const UnleashToggleCounts = Type.Object(
  {
    yes: kCount,
    no: kCount,
    variants: Type.Optional(Type.Record(Type.String(), kCount, { description: 'Counts by variant name (read, not kept)' })),
  },
  { additionalProperties: true },
);

export const UnleashClientMetrics = Type.Object(
  {
    appName: Type.String({ minLength: 1, description: "The SDK's appName" }),
    instanceId: Type.Optional(Type.String()),
    environment: Type.Optional(Type.String({ description: "Ignored: the token's environment is the one counted" })),
    bucket: Type.Optional(
      Type.Object(
        {
          start: Type.Optional(kTime),
          stop: Type.Optional(kTime),
          toggles: Type.Record(Type.String(), UnleashToggleCounts, {
            description: 'By flag name: how often the SDK answered it on (yes) and off (no)',
          }),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: true, description: "An SDK's counts since its last report, as Unleash's client specification says them" },
);
export type UnleashClientMetrics = Static<typeof UnleashClientMetrics>;

/**
 * The report's counts as flag usage, `at` the time they are received, in `environment` (the token's; null:
 * a single-environment project): each named flag of the project's `flags` counted yes + no times (its
 * evaluations by the SDK), at most kMaxReportCount; a name that is not one of them, or a flag counted
 * zero times, counts nothing.
 */
export function usageOfReport(report: UnleashClientMetrics, flags: readonly Flag[], environment: string | null, at: number): UsageCount[] {
  const toggles = report.bucket?.toggles ?? {};
  const counts: UsageCount[] = [];
  for (const flag of flags) {
    // Own properties only: a flag named "constructor" is not counted from Object.prototype.
    const counted = Object.hasOwn(toggles, flag.name) ? toggles[flag.name]! : undefined;
    const evaluations = counted === undefined ? 0 : Math.min(counted.yes + counted.no, kMaxReportCount);
    if (evaluations > 0) counts.push({ flagId: flag.id, environment: environment ?? kSingleState, evaluations, lastEvaluatedAt: at });
  }
  return counts;
}
