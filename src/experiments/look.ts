// A look at an experiment's results, as the Management API and the web console take it: its statistics
// of the plan's metrics read through the events capability's service (on its events thread, from the
// tally, PostgreSQL's on a node that has it), analysed
// against its plan, and what the look keeps (the sample-ratio minimum, the day's interval point) written
// through the writer, on disk before the answer.
import type { EventCounter } from '../events/event-counter.js';
import { statisticsView } from '../events/statistics.js';
import type { StoreReader } from '../store/interfaces.js';
import type { WriterClient } from '../writer/client.js';
import { kExperimentCommands } from './command-table.js';
import { experimentNotFound } from './experiment-commands.js';
import { getExperiment } from './records.js';
import { experimentResultsView, hasTypedVariants, lookOf } from './results-view.js';
import type { ExperimentResultsBody } from './schemas.js';

export interface LookDeps {
  store: StoreReader;
  events: EventCounter;
  writer: WriterClient;
}

/** The results of experiment `key` in `env` of the project now, after keeping what the look keeps. */
export async function lookAtResults(
  deps: LookDeps,
  projectId: string,
  env: string | null,
  key: string,
  now: number,
): Promise<ExperimentResultsBody> {
  const experiment = getExperiment(deps.store, projectId, env, key);
  if (experiment === undefined) throw experimentNotFound(key);
  // The plan's metrics alone: what the results read stays as many rows as the plan has, whatever else is counted.
  const metrics = experiment.metrics.map((m) => m.metric);
  const counted = await deps.events.experiment({ projectId, environment: env ?? '' }, key, metrics);
  const view = experimentResultsView(experiment, statisticsView(key, env, counted), hasTypedVariants(deps.store, experiment));
  const look = lookOf(experiment, view, now);
  if (look !== null) await deps.writer.call(kExperimentCommands.experimentLook, look);
  return view;
}
