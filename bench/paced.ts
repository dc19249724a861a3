// An open-model load: requests offered at a fixed rate, evenly spaced, whatever the server does, with
// latency measured from when each request was due (so a stall counts for every request it delayed:
// no coordinated omission). autocannon's `overallRate` cannot do this: each connection sends its
// quota for the second back to back at the start of the second, so all connections burst together
// and the latencies are those of a queue filled at once.
//
// Each connection sends every `connections / rate` seconds, the connections staggered over one
// interval. A request due while the connection still waits for the previous answer is sent as soon as
// that answer is in (HTTP/1.1 without pipelining), and its latency still counts from when it was due.
import net from 'node:net';
import type { LoadResult } from './load.js';

export interface PacedSpec {
  /** Origin, e.g. http://127.0.0.1:8080. */
  url: string;
  connections: number;
  /** Requests per second over all connections. */
  rate: number;
  durationSec: number;
  /** The path of connection i's k-th request. */
  path(connection: number, k: number): string;
}

const kHeaderEnd = Buffer.from('\r\n\r\n');

class PacedConnection {
  private readonly socket: net.Socket;
  private buffered: Buffer = Buffer.alloc(0);
  /** When each request still to be answered was due (ms, performance.now()). */
  private readonly due: number[] = [];
  private inFlight = false;
  private k = 0;

  constructor(
    private readonly index: number,
    private readonly spec: PacedSpec,
    private readonly host: string,
    port: number,
    private readonly record: (latencyMs: number, status: number) => void,
    private readonly onError: () => void,
  ) {
    this.socket = net.connect(port, host);
    this.socket.setNoDelay(true);
    this.socket.on('data', (chunk: Buffer) => this.read(chunk));
    this.socket.on('error', () => this.onError());
  }

  /** A request is due now. */
  tick(now: number): void {
    this.due.push(now);
    if (!this.inFlight) this.send();
  }

  close(): void {
    this.socket.destroy();
  }

  private send(): void {
    this.inFlight = true;
    this.socket.write(`GET ${this.spec.path(this.index, this.k++)} HTTP/1.1\r\nHost: ${this.host}\r\n\r\n`);
  }

  private read(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    for (;;) {
      const end = this.buffered.indexOf(kHeaderEnd);
      if (end < 0) return;
      const head = this.buffered.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      const total = end + kHeaderEnd.length + length;
      if (this.buffered.length < total) return;
      this.buffered = this.buffered.subarray(total);
      this.record(performance.now() - this.due.shift()!, Number(head.slice(9, 12)));
      this.inFlight = false;
      if (this.due.length > 0) this.send();
    }
  }
}

export async function runPaced(spec: PacedSpec): Promise<LoadResult> {
  const { hostname, port } = new URL(spec.url);
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let errors = 0;
  let non2xx = 0;
  const connections = Array.from(
    { length: spec.connections },
    (_, i) =>
      new PacedConnection(
        i,
        spec,
        hostname,
        Number(port),
        (ms, status) => {
          latencies.push(ms);
          statusCodes[status] = (statusCodes[status] ?? 0) + 1;
          if (status < 200 || status > 299) non2xx++;
        },
        () => errors++,
      ),
  );
  await new Promise((resolve) => setTimeout(resolve, 100));

  const intervalMs = (1000 * spec.connections) / spec.rate;
  const start = performance.now();
  const end = start + spec.durationSec * 1000;
  // One timer walks the schedule: every connection's next due time, in order.
  const next = connections.map((_, i) => start + (i * intervalMs) / spec.connections);
  let offered = 0;
  await new Promise<void>((resolve) => {
    const step = () => {
      const now = performance.now();
      let soonest = Number.POSITIVE_INFINITY;
      for (let i = 0; i < connections.length; i++) {
        while (next[i]! <= now && next[i]! < end) {
          connections[i]!.tick(next[i]!);
          offered++;
          next[i]! += intervalMs;
        }
        if (next[i]! < end) soonest = Math.min(soonest, next[i]!);
      }
      if (soonest === Number.POSITIVE_INFINITY) resolve();
      else setTimeout(step, Math.max(0, soonest - performance.now()));
    };
    step();
  });
  // Answers still on their way count; give them a moment, then what never came is an error.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  errors += Math.max(0, offered - latencies.length);
  for (const c of connections) c.close();

  latencies.sort((a, b) => a - b);
  const at = (p: number) =>
    latencies.length === 0 ? Number.NaN : latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)]!;
  return {
    connections: spec.connections,
    durationSec: spec.durationSec,
    requests: latencies.length,
    rps: latencies.length / spec.durationSec,
    p50Ms: at(50),
    p99Ms: at(99),
    maxMs: latencies.at(-1) ?? Number.NaN,
    errors,
    timeouts: 0,
    non2xx,
    mismatches: 0,
    statusCodes,
  };
}
