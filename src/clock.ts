// Wall-clock time for every rule that depends on it (expiry, trials, limit windows), with a shared
// offset in seconds that all threads read, so tests can move time forward without sleeping.
export class Clock {
  private readonly offset: Int32Array;

  /** A clock with no offset, in new shared memory. */
  static create(): Clock {
    return new Clock(new SharedArrayBuffer(4));
  }

  /** One more handle on a clock's shared offset (one Int32). */
  constructor(readonly state: SharedArrayBuffer) {
    this.offset = new Int32Array(state);
  }

  now(): number {
    return Date.now() + Atomics.load(this.offset, 0) * 1000;
  }

  advance(seconds: number): void {
    Atomics.add(this.offset, 0, seconds);
  }
}
