// The release plans' background work: the scheduler (scheduler.ts), with the guard reader it asks
// before a rollout's step (guard-reader.ts).
import type { NodeServices, RunningWork } from '../capability/background-work.js';
import { kReleasePlanCommands } from './command-table.js';
import { GuardReader } from './guard-reader.js';
import type { RawReading } from './guards.js';
import { MetricAllowList } from './promql-metrics.js';
import { Scheduler } from './scheduler.js';

/** The scheduler, started: the changes and rollout steps that fell due while the node was down have run. */
export async function startScheduler({ config, store, writer, clock, log, ownMetricsUrl }: NodeServices): Promise<RunningWork> {
  const work = {
    runSchedule: (scheduleId: string) => writer.call(kReleasePlanCommands.scheduleRun, { scheduleId }),
    advanceRollout: (rolloutId: string) => writer.call(kReleasePlanCommands.rolloutAdvance, { rolloutId }),
    recordGuardReading: (rolloutId: string, dueAt: number, reading: RawReading) =>
      writer.call(kReleasePlanCommands.rolloutGuardRecord, { rolloutId, dueAt, reading }),
  };
  const guards = new GuardReader({
    prometheusUrl: config.prometheusUrl,
    prometheusMetrics: new MetricAllowList(config.prometheusMetrics),
    timeoutMs: config.guardTimeoutMs,
    metrics: config.metrics,
    ownMetricsUrl,
  });
  const scheduler = new Scheduler(store, work, clock, log, guards);
  // A start that fails is stopped too: the guard readings it began then record nothing.
  await scheduler.start().catch(async (err: unknown) => {
    await scheduler.stop();
    throw err;
  });
  return { stop: () => scheduler.stop() };
}
