// Failed-authentication lockout (spec: Limits): per IP, a fixed 60 s window from the first failure;
// past `limit` failures every request from that IP is refused until the window ends, valid token or
// not. Only requests with no token, a malformed token or an unknown token count.
//
// Memory is bounded: at most `maxEntries` (100,000) addresses are tracked, about 60 bytes each with
// their table entry. The AddressTable keeps them in order of window start (an address that fails again
// after its window ended moves to the back), so ended windows are at the front and each recorded
// failure drops up to two of them there: O(1), no pause (a scan of the whole table once a minute
// stalled the event loop for up to 0.3 s at 100,000 entries). When the table is full, the address
// whose window started first is evicted, with its count and any lockout: freeing one lockout that way
// takes failures from 100,000 other addresses within a minute.
import { FlagwireError } from '../errors.js';
import { AddressTable, grownCopy } from '../http/address-table.js';

export class AuthFailures {
  private readonly table: AddressTable;
  private starts = new Float64Array(0);
  private counts = new Uint32Array(0);

  /** `windowMs`: the fixed window from the first failure (the spec's 60 s for the Management API). */
  constructor(private readonly limit: number, maxEntries = 100_000, private readonly windowMs = 60_000) {
    this.table = new AddressTable(maxEntries, (slots) => {
      this.starts = grownCopy(this.starts, slots);
      this.counts = grownCopy(this.counts, slots);
    });
  }

  get size(): number {
    return this.table.size;
  }

  get maxEntries(): number {
    return this.table.maxEntries;
  }

  /** Throws the 429 while `ip` is locked out. */
  check(ip: string, now: number): void {
    if (this.isLocked(ip, now)) {
      throw new FlagwireError('TOO_MANY_AUTH_FAILURES', 'Too many failed authentication attempts from this address; wait a minute before retrying.');
    }
  }

  /** Whether `key` (an address, or any other key: the web console counts accounts too) is locked out. */
  isLocked(key: string, now: number): boolean {
    const slot = this.table.slot(key);
    return slot !== undefined && now - this.starts[slot]! < this.windowMs && this.counts[slot]! >= this.limit;
  }

  record(ip: string, now: number): void {
    this.dropEnded(now);
    let slot = this.table.slot(ip);
    if (slot !== undefined && now - this.starts[slot]! < this.windowMs) {
      this.counts[slot]++;
      return;
    }
    if (slot === undefined) slot = this.table.add(ip);
    else this.table.touch(slot);
    this.starts[slot] = now;
    this.counts[slot] = 1;
  }

  /** Drops up to two addresses whose window has ended, oldest window first. */
  private dropEnded(now: number): void {
    for (let n = 0; n < 2; n++) {
      const slot = this.table.first();
      if (slot === -1 || now - this.starts[slot]! < this.windowMs) return;
      this.table.remove(slot);
    }
  }
}
