// Counts requests answered after their handler returned, so shutdown can wait for them.
export class InFlight {
  private count = 0;
  private idle: (() => void)[] = [];

  /** Call when a request goes async; call the returned function once it is answered. */
  start(): () => void {
    this.count++;
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

  /** Resolves when nothing is in flight, or after `timeoutMs`. */
  drained(timeoutMs: number): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
