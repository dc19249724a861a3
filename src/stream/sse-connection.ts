// One Server-Sent Events connection with a bounded buffer.
//
// uWS's res.write() always accepts the chunk, buffering what the socket cannot take now, and returns
// false when it had to ("backpressure"). From then on nothing more goes to uWS until onWritable says
// the socket drained; events meanwhile wait here, up to `maxQueuedBytes`. Past that, or when the reader
// has not drained for `maxStallMs`, the connection is closed: a slow reader is dropped (EventSource
// reconnects on its own, and should then refetch), never allowed to grow the server's memory.
//
//   memory per connection <= one chunk buffered in uWS + maxQueuedBytes here
import type { HttpResponse } from 'uWebSockets.js';

/** The part of uWS's HttpResponse a stream uses (tests pass a fake). */
export type SseResponse = Pick<HttpResponse, 'cork' | 'write' | 'onWritable' | 'close' | 'end'>;

export interface SseOptions {
  maxQueuedBytes: number;
  maxStallMs: number;
  /** Called once when the connection is dropped for being slow (not on a normal close). */
  onDrop(): void;
}

export class SseConnection {
  private queue: string[] = [];
  private queuedBytes = 0;
  /** performance.now() when uWS last refused to take more without buffering; 0 while flowing. */
  private stalledSince = 0;
  private closed = false;

  constructor(
    private readonly res: SseResponse,
    private readonly options: SseOptions,
  ) {}

  get isClosed(): boolean {
    return this.closed;
  }

  /** Sends one event (or comment); queues it while the reader is behind; drops a reader too far behind. */
  send(chunk: string): void {
    if (this.closed) return;
    if (this.stalledSince !== 0) {
      this.queuedBytes += Buffer.byteLength(chunk);
      if (this.queuedBytes > this.options.maxQueuedBytes) {
        this.drop();
        return;
      }
      this.queue.push(chunk);
      return;
    }
    this.write(chunk);
  }

  /** Heartbeat tick: a reader stalled for too long is dropped even if its queue is small. */
  checkStall(now: number): void {
    if (!this.closed && this.stalledSince !== 0 && now - this.stalledSince > this.options.maxStallMs) this.drop();
  }

  /** The client went away (onAborted): forget everything, write nothing more. */
  aborted(): void {
    this.closed = true;
    this.queue = [];
  }

  /** Ends the stream normally (server shutdown). */
  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.res.cork(() => this.res.end());
  }

  private write(chunk: string): void {
    let flowing = true;
    this.res.cork(() => {
      flowing = this.res.write(chunk);
    });
    if (!flowing) {
      this.stalledSince = performance.now();
      this.res.onWritable(() => this.drain());
    }
  }

  /** onWritable: uWS's buffer went out; send what waited, as one chunk. */
  private drain(): boolean {
    if (this.closed) return true;
    this.stalledSince = 0;
    if (this.queue.length > 0) {
      const chunk = this.queue.join('');
      this.queue = [];
      this.queuedBytes = 0;
      this.write(chunk);
    }
    return true;
  }

  private drop(): void {
    this.closed = true;
    this.queue = [];
    this.options.onDrop();
    // close() runs onAborted, which unsubscribes this connection.
    this.res.close();
  }
}
