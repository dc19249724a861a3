// A relay's flag usage, sent upstream (docs/deployment.md: relays): what its eval workers counted, and
// Unleash SDKs reported to it, goes to its upstream's POST /v1/relay/usage with its relay key, in
// batches the upstream counts once each (src/usage-reports), each entry one flag's count in one
// environment and hour (its `env`, absent for a single flag): each flush's counts are one batch, sent
// again at the next flush until answered, so what a relay answers is counted once, upstream. A relay of
// a relay sends to the relay above, which forwards them in its own batches.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { UsageDestination } from '../evaluation/engine/usage.js';
import { UsageBatchSender } from '../provider/usage-batches.js';
import { kSingleState } from '../model/flags.js';

/** Flushes (a minute each) a relay keeps unanswered at most; past them the oldest is dropped and logged. */
const kMaxPendingBatches = 60;
const kSendTimeoutMs = 30_000;
/** How long the last flush may take at shutdown. */
const kCloseTimeoutMs = 5000;

export function forwardedUsage(upstream: NonNullable<Config['upstream']>, log: Pick<Logger, 'warn'>): UsageDestination {
  const sender = new UsageBatchSender({
    url: `${upstream.url.replace(/\/+$/, '')}/v1/relay/usage`,
    authorization: `Bearer ${upstream.token}`,
    maxPendingBatches: kMaxPendingBatches,
    timeoutMs: kSendTimeoutMs,
    onDropped: (evaluations, why) => log.warn({ evaluations }, `flag usage not sent upstream: ${why}`),
  });
  return {
    async take(counts) {
      const now = Date.now();
      sender.add(
        counts.map((count) => ({
          flag: count.flagId,
          ...(count.environment === kSingleState ? {} : { env: count.environment }),
          evaluations: count.evaluations,
          lastEvaluatedAt: count.lastEvaluatedAt,
        })),
        now,
      );
      await sender.flush(now);
      return [];
    },
    async close() {
      if (!(await sender.flush(Date.now(), AbortSignal.timeout(kCloseTimeoutMs))) && sender.pendingBatches > 0)
        log.warn({ batches: sender.pendingBatches }, 'flag usage not sent upstream: the upstream did not answer at shutdown');
    },
  };
}
