// Data aggregated in memory and written through the writer at an interval (token activity,
// src/api/activity.ts; flag usage, src/eval/usage.ts): one flush runs at a time, so a flush waiting for
// the write lock is not joined by another each interval, and a flush asked for meanwhile (a test hook,
// shutdown) runs after the one in flight.
export class PeriodicFlush {
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly send: () => Promise<void>,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.flushing === null) void this.flush();
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Runs `send`, after the flush in flight (if any) ends. */
  flush(): Promise<void> {
    const run: Promise<void> = (this.flushing ?? Promise.resolve())
      .then(() => this.send())
      .finally(() => {
        if (this.flushing === run) this.flushing = null;
      });
    this.flushing = run;
    return run;
  }

  /** Stops the interval and runs the last flush. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }
}
