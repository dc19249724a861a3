// The statistics of events recomputed from scratch, for tests to compare the tally with
// (src/events/tally.ts): each subject's totals replayed in stored order, then summed; and the same as
// the statistics route answers them.
import { type CountedEvent, emptySums } from '../../src/events/tally.js';
import { type ExperimentStatistics, statisticsView } from '../../src/events/statistics.js';
import type { MetricSums } from '../../src/events/tally/tally-file.js';

interface Totals {
  preEvents: number;
  pre: bigint;
  postEvents: number;
  post: bigint;
}

/** The sums recomputed from scratch: each subject's totals replayed in stored order, then summed. */
export function recompute(events: readonly CountedEvent[]) {
  const exposures = new Map<string, { variant: string; at: number }>();
  const running = new Map<string, { events: number; total: bigint }>();
  const inExperiment = new Map<string, Totals>();
  for (const e of events) {
    if (e.kind === 'exposure') {
      const id = `${e.subject}\n${e.experiment}`;
      if (exposures.has(id)) continue;
      exposures.set(id, { variant: e.variant, at: e.at });
      for (const [key, total] of running) {
        const [subject, metric] = key.split('\n');
        if (subject === e.subject)
          inExperiment.set(`${id}\n${metric}`, { preEvents: total.events, pre: total.total, postEvents: 0, post: 0n });
      }
      continue;
    }
    const key = `${e.subject}\n${e.metric}`;
    const total = running.get(key) ?? { events: 0, total: 0n };
    running.set(key, { events: total.events + 1, total: total.total + e.value });
    for (const [id, exposure] of exposures) {
      if (!id.startsWith(`${e.subject}\n`)) continue;
      const rowKey = `${id}\n${e.metric}`;
      const row = inExperiment.get(rowKey) ?? { preEvents: 0, pre: 0n, postEvents: 0, post: 0n };
      if (e.at >= exposure.at) inExperiment.set(rowKey, { ...row, postEvents: row.postEvents + 1, post: row.post + e.value });
      else inExperiment.set(rowKey, { ...row, preEvents: row.preEvents + 1, pre: row.pre + e.value });
    }
  }
  const arms = new Map<string, number>();
  for (const [id, { variant }] of exposures) {
    const experiment = id.split('\n')[1]!;
    arms.set(`${experiment}\n${variant}`, (arms.get(`${experiment}\n${variant}`) ?? 0) + 1);
  }
  const sums = new Map<string, MetricSums>();
  for (const [rowKey, row] of inExperiment) {
    const [subject, experiment, metric] = rowKey.split('\n');
    const { variant } = exposures.get(`${subject}\n${experiment}`)!;
    const key = `${experiment}\n${variant}\n${metric}`;
    const s = sums.get(key) ?? emptySums();
    s.events += row.postEvents;
    s.subjects += row.postEvents > 0 ? 1 : 0;
    s.sum += row.post;
    s.sumOfSquares += row.post * row.post;
    s.covariateEvents += row.preEvents;
    s.covariateSubjects += row.preEvents > 0 ? 1 : 0;
    s.covariateSum += row.pre;
    s.covariateSumOfSquares += row.pre * row.pre;
    s.sumOfProducts += row.pre * row.post;
    sums.set(key, s);
  }
  return { arms, sums };
}

/**
 * `experiment`'s statistics as the statistics route answers them, recomputed from `events` in stored
 * order: variants and metrics in name order (names of ASCII, whose order is the stored bytes').
 */
export function recomputedStatistics(
  experiment: string,
  environment: string | null,
  events: readonly CountedEvent[],
): ExperimentStatistics {
  const { arms, sums } = recompute(events);
  const byName = <V>(entries: [string[], V][]) => entries.sort(([a], [b]) => (a.join('\n') < b.join('\n') ? -1 : 1));
  const ownArms = byName([...arms].map(([key, subjects]): [string[], number] => [key.split('\n'), subjects])).filter(
    ([[e]]) => e === experiment,
  );
  const ownSums = byName([...sums].map(([key, s]): [string[], MetricSums] => [key.split('\n'), s])).filter(([[e]]) => e === experiment);
  return statisticsView(experiment, environment, {
    arms: ownArms.map(([[, variant], subjects]) => ({ variant: variant!, subjects })),
    sums: ownSums.map(([[, variant, metric], s]) => ({ variant: variant!, metric: metric!, sums: s })),
  });
}
