// The part of autocannon 8's programmatic API the bench uses (@types/autocannon is not installed and
// not worth a dependency). See node_modules/autocannon/README.md "API" for the full contract.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      /** Mutates the request before it is built; a falsy return restarts the sequence. */
      setupRequest?: ((req: Request, context: Record<string, unknown>) => Request | null | undefined) | string;
      /** Called with each response (body as a string). */
      onResponse?: ((status: number, body: string, context: Record<string, unknown>, headers: Record<string, string>) => void) | string;
    }

    /** One connection. `setRequests` replaces its request sequence (built once, then replayed). */
    interface Client extends EventEmitter {
      setRequests(requests: Request[]): void;
    }

    interface Options {
      url: string;
      connections?: number;
      /** Seconds. */
      duration?: number;
      amount?: number;
      pipelining?: number;
      /** Seconds. */
      timeout?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      requests?: Request[];
      setupClient?: ((client: Client) => void) | string;
      overallRate?: number;
      connectionRate?: number;
      workers?: number;
      title?: string;
      excludeErrorStats?: boolean;
    }

    /** hdr-histogram-percentiles-obj shape (latency in whole milliseconds). */
    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      p50: number;
      p90: number;
      p97_5: number;
      p99: number;
    }

    interface Result {
      title?: string;
      latency: Histogram;
      requests: Histogram;
      throughput: Histogram;
      /** Seconds (rounded to 10 ms). */
      duration: number;
      start: Date;
      finish: Date;
      errors: number;
      timeouts: number;
      mismatches: number;
      non2xx: number;
      resets: number;
      statusCodeStats: Record<string, { count: number }>;
      '1xx': number;
      '2xx': number;
      '3xx': number;
      '4xx': number;
      '5xx': number;
    }

    interface Instance extends EventEmitter, PromiseLike<Result> {
      stop(): void;
      on(event: 'response', listener: (client: Client, statusCode: number, resBytes: number, responseTimeMs: number) => void): this;
      on(event: 'done', listener: (result: Result) => void): this;
      on(event: string, listener: (...args: unknown[]) => void): this;
    }
  }

  function autocannon(options: autocannon.Options, callback: (err: Error | null, result: autocannon.Result) => void): autocannon.Instance;
  function autocannon(options: autocannon.Options): autocannon.Instance;

  export default autocannon;
}
