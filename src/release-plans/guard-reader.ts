// Takes a guard's readings for the scheduler: asks the Prometheus server (its instant-query API,
// GET /api/v1/query), reads this node's own GET /metrics, or reads an experiment's statistics from the
// store, and returns the numbers or why there are none. It judges nothing (guards.ts and
// experiment-guards.ts do, in the writer's transaction) and never throws.
import { performance } from 'node:perf_hooks';
import { type ExperimentStatistics, statisticsView } from '../events/statistics.js';
import type { ExperimentTally, TallyScope } from '../events/tally/tally-file.js';
import type { RolloutPlan } from './rollouts.js';
import { kMaxGuardIntervalMs, type SampledReading } from './guards.js';
import { parseSelector, selectSamples } from './metric-selector.js';
import type { MetricAllowList } from './promql-metrics.js';

/** Answers larger than this are refused, and read no further: a guard's expression is meant to give a few numbers. */
export const kMaxAnswerBytes = 4 * 1024 * 1024;

export interface GuardSources {
  /** The Prometheus server's base URL (FLAGWIRE_PROMETHEUS_URL); null: none set. */
  prometheusUrl: string | null;
  /** The metrics a PromQL guard may read (FLAGWIRE_PROMETHEUS_METRICS): checked again at every reading. */
  prometheusMetrics: MetricAllowList;
  /** How long one reading may take (FLAGWIRE_GUARD_TIMEOUT_MS). */
  timeoutMs: number;
  /** False with FLAGWIRE_METRICS=off: this node keeps no metrics to read. */
  metrics: boolean;
  /** This node's own GET /metrics URL; null until it listens. */
  ownMetricsUrl(): string | null;
  /**
   * An experiment's arms and sums of `metrics` as stored (the tally file, or PostgreSQL's), read now, off
   * the thread that asks: what its results are computed from.
   */
  experiment(scope: TallyScope, key: string, metrics: readonly string[]): Promise<ExperimentTally>;
}

/** What a reading brought back: numbers or why there are none (guards.ts), or an experiment's statistics as stored. */
export type RawReading = SampledReading | { statistics: ExperimentStatistics };

export class GuardReader {
  /**
   * A counter's previous reading per rollout: its rate is the change since then. Only this node's. One
   * older than twice its guard's interval (the rollout was paused, or other nodes took the readings) is
   * no baseline, and is dropped: the map holds only the rollouts this node reads now.
   */
  private readonly previous = new Map<string, { sum: number; at: number }>();

  constructor(private readonly sources: GuardSources) {}

  async read(plan: Pick<RolloutPlan, 'id' | 'projectId' | 'env' | 'guard'>): Promise<RawReading> {
    const guard = plan.guard!;
    try {
      // An experiment's statistics are read from the store, as its results route reads them, never over
      // HTTP; of the guard's metric alone (none for the sample ratio): the reading the writer judges
      // stays a few rows, however many metrics the experiment counts.
      if (guard.experiment !== undefined) {
        const scope = { projectId: plan.projectId, environment: plan.env ?? '' };
        const tally = await this.sources.experiment(scope, guard.experiment, guard.metric === undefined ? [] : [guard.metric]);
        return { statistics: statisticsView(guard.experiment, plan.env, tally) };
      }
      return guard.prometheus !== undefined
        ? await this.prometheus(guard.prometheus)
        : await this.own(plan.id, guard.flagwire!, guard.intervalMs);
    } catch (err) {
      const why =
        err instanceof Error && err.name === 'TimeoutError'
          ? `no answer in ${this.sources.timeoutMs} ms`
          : String((err as Error).message ?? err);
      return { error: `${sourceName(guard)} could not be read: ${why}`, invalid: false };
    }
  }

  private async prometheus(expression: string): Promise<RawReading> {
    const base = this.sources.prometheusUrl;
    if (base === null) return { error: 'this server has no Prometheus server to ask (set FLAGWIRE_PROMETHEUS_URL)', invalid: false };
    // Checked at every reading, not only when the guard was made: the operator may narrow the list since.
    const refused = this.sources.prometheusMetrics.problem(expression);
    if (refused !== null) return { error: refused, invalid: true };
    const url = `${base}/api/v1/query?query=${encodeURIComponent(expression)}`;
    const response = await fetch(url, { signal: AbortSignal.timeout(this.sources.timeoutMs) });
    const text = await readAtMost(response, kMaxAnswerBytes);
    if (text === null) return { error: `Prometheus answered more than ${kMaxAnswerBytes} bytes`, invalid: true };
    const answer = parseAnswer(text);
    if (answer === null) return { error: `Prometheus answered ${response.status} without its JSON`, invalid: false };
    if (answer.status !== 'success') {
      // Prometheus answers 400 (bad_data) or 422 (execution) for an expression it will never accept.
      const invalid = response.status === 400 || response.status === 422;
      return { error: `Prometheus refused the expression: ${answer.error ?? response.status}`, invalid };
    }
    return vectorValues(answer.data);
  }

  private async own(rolloutId: string, selectorText: string, intervalMs: number): Promise<RawReading> {
    const selector = parseSelector(selectorText);
    if (typeof selector === 'string') return { error: selector, invalid: true };
    if (!this.sources.metrics) return { error: 'this server keeps no metrics (FLAGWIRE_METRICS=off)', invalid: false };
    const url = this.sources.ownMetricsUrl();
    if (url === null) return { values: [], note: 'no data yet: the server is not listening' };
    const response = await fetch(url, { signal: AbortSignal.timeout(this.sources.timeoutMs) });
    if (response.status !== 200) return { error: `GET /metrics answered ${response.status}`, invalid: false };
    const found = selectSamples(await response.text(), selector);
    if (found.series === 0) return { values: [], note: `no data: this server has no series ${selectorText}` };
    if (!found.counter) return { values: [found.sum], note: null };
    const now = performance.now();
    const before = this.previous.get(rolloutId);
    for (const [id, baseline] of this.previous) if (now - baseline.at > 2 * kMaxGuardIntervalMs) this.previous.delete(id);
    this.previous.set(rolloutId, { sum: found.sum, at: now });
    if (before === undefined || now <= before.at || now - before.at > 2 * intervalMs)
      return { values: [], note: 'no data yet: a counter is read as its rate per second from its second reading' };
    // A counter that went down was reset (the node restarted its count): its whole value is the increase.
    const increase = found.sum >= before.sum ? found.sum - before.sum : found.sum;
    return { values: [increase / ((now - before.at) / 1000)], note: null };
  }
}

function sourceName(guard: NonNullable<RolloutPlan['guard']>): string {
  if (guard.experiment !== undefined) return `the statistics of experiment ${guard.experiment}`;
  return guard.prometheus !== undefined ? 'Prometheus' : "this server's metrics";
}

/**
 * The answer's text, or null once it passes `maxBytes`: the rest is never read (the connection is
 * dropped), so an answer of any size costs at most that much memory.
 */
async function readAtMost(response: Response, maxBytes: number): Promise<string | null> {
  const declared = Number(response.headers.get('content-length'));
  if (declared > maxBytes) {
    await response.body?.cancel();
    return null;
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total).toString('utf8');
}

interface PromAnswer {
  status: string;
  error?: string;
  data?: { resultType?: string; result?: unknown };
}

function parseAnswer(text: string): PromAnswer | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && typeof (value as PromAnswer).status === 'string' ? (value as PromAnswer) : null;
  } catch {
    return null;
  }
}

/**
 * A sample's value as Prometheus's JSON writes it: a string, `+Inf`, `-Inf` and `NaN` included (which
 * Number() would all read as NaN, and an infinite reading would pass for "no data").
 */
export function sampleValue(raw: unknown): number {
  if (raw === '+Inf' || raw === 'Inf') return Number.POSITIVE_INFINITY;
  if (raw === '-Inf') return Number.NEGATIVE_INFINITY;
  return typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : Number.NaN;
}

/** The numbers of an instant query's result: a scalar's value, or each sample's of a vector. */
function vectorValues(data: PromAnswer['data']): RawReading {
  const result = data?.result;
  if (data?.resultType === 'scalar' && Array.isArray(result)) return { values: [sampleValue(result[1])], note: null };
  if (data?.resultType === 'vector' && Array.isArray(result)) {
    const values = result.map((sample) => sampleValue((sample as { value?: unknown[] }).value?.[1]));
    return { values, note: values.length === 0 ? 'no data: the expression gave an empty result' : null };
  }
  return {
    error: `the expression gives a ${data?.resultType ?? 'result of no known type'}; a guard needs a number or an instant vector`,
    invalid: true,
  };
}
