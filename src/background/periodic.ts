// Work a node does every so often beside the request path (the mailer's poll, the scheduler's, the flag
// file's check, the change streams' poll, PostgreSQL's heartbeat, the token activity and flag usage
// flushes): one loop, written once. The webhook deliverer waits on the node's commits instead when its
// outbox holds nothing (src/webhooks/deliverer.ts).
//
// - One pass at a time: a tick that finds a pass still running (a write waiting for the lock, a slow
//   SMTP server) is skipped, not queued, so a long pass costs one late pass, not a pile of them.
// - A pass asked for now (runNow: a test hook, a last flush at shutdown) runs after the one in flight.
// - A pass that throws is handed to onError and the loop goes on: the next tick tries again.
// - stop() ends the ticks and waits for the pass in progress; a caller that must not wait that long
//   (the mailer's hung send) races it against its own deadline.
// The timer is unref'd: a loop never keeps a process alive on its own.

export interface PeriodicOptions {
  intervalMs: number;
  /** A tick's pass failed: log it (the loop goes on). */
  onError(err: unknown): void;
}

export class Periodic {
  private timer: NodeJS.Timeout | null = null;
  private pass: Promise<void> | null = null;

  constructor(
    private readonly work: () => void | Promise<void>,
    private readonly options: PeriodicOptions,
  ) {}

  /** Ticks every intervalMs from now on (once: a second start changes nothing). */
  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => {
      if (this.pass === null) this.runNow().catch((err: unknown) => this.options.onError(err));
    }, this.options.intervalMs);
    this.timer.unref();
  }

  /** Runs a pass after the one in flight (if any) ends; rejects with its error. */
  runNow(): Promise<void> {
    const previous = this.pass ?? Promise.resolve();
    const run: Promise<void> = previous
      .catch(() => undefined)
      .then(() => this.work())
      .finally(() => {
        if (this.pass === run) this.pass = null;
      });
    this.pass = run;
    return run;
  }

  /** Ends the ticks; resolves once the pass in progress (if any) has ended, however it ended. */
  stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    return (this.pass ?? Promise.resolve()).catch(() => undefined);
  }
}
