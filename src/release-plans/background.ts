// The release plans' background work: the scheduler (scheduler.ts), with the guard reader it asks
// before a rollout's step (guard-reader.ts) and the tally its experiment guards read.
import type { NodeServices, RunningWork } from '../capability/background-work.js';
import { FlagwireError } from '../errors.js';
import { EventCounter } from '../events/event-counter.js';
import { kReleasePlanCommands } from './command-table.js';
import { GuardReader } from './guard-reader.js';
import type { RawReading } from './guard-reader.js';
import { MetricAllowList } from './promql-metrics.js';
import { Scheduler } from './scheduler.js';

/**
 * Runs `write`; refused by the approvals gate, or by a write check (Capability.writeChecks: a change to
 * a running experiment's allocation, 400), runs it again telling it so (`{refused}`). The plan's
 * commands answer what they refuse themselves, so a refusal that reaches here is one of those.
 */
async function orRefused<T>(write: (refused: { refused?: string }) => Promise<T>): Promise<T> {
  try {
    return await write({});
  } catch (err) {
    if (!(err instanceof FlagwireError) || (err.code !== 'APPROVAL_REQUIRED' && err.code !== 'INVALID_REQUEST')) throw err;
    return write({ refused: `${err.title}: ${err.detail}` });
  }
}

/** The scheduler, started: the changes and rollout steps that fell due while the node was down have run. */
export async function startScheduler({ config, store, writer, clock, log, ownMetricsUrl }: NodeServices): Promise<RunningWork> {
  // A plan's change the approvals gate refuses (made before its environment was guarded, never approved:
  // docs/approvals.md), or a write check does (a running experiment's allocation), is sent again with
  // the refusal, which fails the change or pauses the rollout.
  const work = {
    runSchedule: (scheduleId: string) => orRefused((refused) => writer.call(kReleasePlanCommands.scheduleRun, { scheduleId, ...refused })),
    advanceRollout: (rolloutId: string) =>
      orRefused((refused) => writer.call(kReleasePlanCommands.rolloutAdvance, { rolloutId, ...refused })),
    recordGuardReading: (rolloutId: string, dueAt: number, reading: RawReading) =>
      orRefused((refused) => writer.call(kReleasePlanCommands.rolloutGuardRecord, { rolloutId, dueAt, reading, ...refused })),
  };
  // Experiments' statistics, for their guards: read on an events thread of the scheduler's own (the
  // front end's may be on another thread), started at the first such reading, so a reading never holds
  // this thread; lmdb shares one environment per file.
  const events = new EventCounter(config, log, clock);
  const guards = new GuardReader({
    prometheusUrl: config.prometheusUrl,
    prometheusMetrics: new MetricAllowList(config.prometheusMetrics),
    timeoutMs: config.guardTimeoutMs,
    metrics: config.metrics,
    ownMetricsUrl,
    experiment: (scope, key, metrics) => events.experiment(scope, key, metrics),
  });
  const scheduler = new Scheduler(store, work, clock, log, guards);
  const stop = async () => {
    await scheduler.stop();
    await events.close();
  };
  // A start that fails is stopped too: the guard readings it began then record nothing.
  await scheduler.start().catch(async (err: unknown) => {
    await stop();
    throw err;
  });
  return { stop };
}
