// Counts requests answered after their handler returned, so shutdown can wait for them.
export class InFlight {
  private count = 0;
  private idle: (() => void)[] = [];
  /** performance.now() of the last start(). */
  private lastStart = -Infinity;

  /** Call when a request goes async; call the returned function once it is answered. */
  start(): () => void {
    this.count++;
    this.lastStart = performance.now();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (--this.count === 0) for (const resolve of this.idle.splice(0)) resolve();
    };
  }

  get size(): number {
    return this.count;
  }

  /**
   * Resolves once nothing is in flight and no request has started for `quietMs`, or after `timeoutMs`.
   * The quiet time is for shutdown: the listener is closed, but a connection accepted just before may
   * not have sent its request yet, and that request is served too, not refused.
   */
  async drained(timeoutMs: number, quietMs = 0): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const left = deadline - performance.now();
      if (left <= 0) return;
      if (this.count > 0) {
        await this.settled(left);
        continue;
      }
      const quietFor = performance.now() - this.lastStart;
      if (quietFor >= quietMs) return;
      await new Promise((resolve) => setTimeout(resolve, Math.min(quietMs - quietFor, left)));
    }
  }

  /** Resolves when nothing is in flight, or after `timeoutMs`. */
  private settled(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
