// Wall-clock time for every rule that depends on it (expiry, trials, limit windows), with a shared
// offset in seconds that all threads read, so tests can move time forward without sleeping.
export class Clock {
  readonly buffer: SharedArrayBuffer;
  private readonly offset: Int32Array;

  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(4)) {
    this.buffer = buffer;
    this.offset = new Int32Array(buffer);
  }

  now(): number {
    return Date.now() + Atomics.load(this.offset, 0) * 1000;
  }

  advance(seconds: number): void {
    Atomics.add(this.offset, 0, seconds);
  }
}
