// A small Prometheus text-format (0.0.4) writer: counters, gauges read at scrape time, and histograms
// with fixed buckets. Counting is a number increment into a preallocated Float64Array slot: no label
// lookups, no objects, no Map per observation (prom-client resolves label values to a series on each
// inc(); what counting costs a request: bench/metrics.bench.ts). Rendering happens only on a scrape.

/** A histogram with fixed upper bounds (le); `+Inf` is implicit. */
/** A histogram's numbers, as a front-end thread sends them for the process's sum (src/server/frontend-threads.ts). */
export interface HistogramSnapshot {
  counts: Float64Array;
  sum: number;
  count: number;
}

export class Histogram {
  /** Observations per bucket, not cumulative (bucket i: bounds[i-1] < v <= bounds[i]; the last is +Inf). */
  private readonly counts: Float64Array;
  private sum = 0;
  private count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  /** Records `value` `times` times (a batch of `times` requests that all took `value`). */
  observe(value: number, times = 1): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]! += times;
    this.sum += value * times;
    this.count += times;
  }

  snapshot(): HistogramSnapshot {
    return { counts: this.counts.slice(), sum: this.sum, count: this.count };
  }

  /** A histogram holding the sum of `snapshots` (of histograms with these bounds). */
  static sum(bounds: readonly number[], snapshots: readonly HistogramSnapshot[]): Histogram {
    const total = new Histogram(bounds);
    for (const s of snapshots) {
      for (let i = 0; i < total.counts.length; i++) total.counts[i]! += s.counts[i]!;
      total.sum += s.sum;
      total.count += s.count;
    }
    return total;
  }

  render(out: string[], name: string, labels = ''): void {
    let cumulative = 0;
    const sep = labels === '' ? '' : `${labels},`;
    for (let i = 0; i < this.bounds.length; i++) {
      cumulative += this.counts[i]!;
      out.push(`${name}_bucket{${sep}le="${this.bounds[i]}"} ${cumulative}`);
    }
    cumulative += this.counts[this.bounds.length]!;
    out.push(`${name}_bucket{${sep}le="+Inf"} ${cumulative}`);
    const braces = labels === '' ? '' : `{${labels}}`;
    out.push(`${name}_sum${braces} ${this.sum}`);
    out.push(`${name}_count${braces} ${this.count}`);
  }
}

/** `# HELP` and `# TYPE` lines of one metric family. */
export function header(out: string[], name: string, type: 'counter' | 'gauge' | 'histogram', help: string): void {
  out.push(`# HELP ${name} ${help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`);
  out.push(`# TYPE ${name} ${type}`);
}

/** A label value escaped for the text format. */
export function labelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

/** Seconds buckets for request latencies, 50 µs .. 5 s. */
export const kLatencyBuckets = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** Seconds buckets for writer commits (a flush to disk each), 0.5 ms .. 10 s. */
export const kCommitBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Requests per evaluation batch (the batcher's maximum is 1,024). */
export const kBatchSizeBuckets = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
