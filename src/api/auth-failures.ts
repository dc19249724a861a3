// Failed-authentication lockout (spec: Limits): per IP, a fixed 60 s window from the first failure;
// past `limit` failures every request from that IP is refused until the window ends, valid token or
// not. Only requests with no token, a malformed token or an unknown token count.
import { FlagwireError } from '../errors.js';

interface Failures {
  start: number;
  count: number;
}

const kWindowMs = 60_000;

export class AuthFailures {
  private readonly byIp = new Map<string, Failures>();
  private lastSweep = 0;

  constructor(private readonly limit: number, private readonly maxEntries = 100_000) {}

  get size(): number {
    return this.byIp.size;
  }

  /** Throws the 429 while `ip` is locked out. */
  check(ip: string, now: number): void {
    const f = this.byIp.get(ip);
    if (f !== undefined && now - f.start < kWindowMs && f.count >= this.limit) {
      throw new FlagwireError('TOO_MANY_AUTH_FAILURES', 'Too many failed authentication attempts from this address; wait a minute before retrying.');
    }
  }

  record(ip: string, now: number): void {
    if (now - this.lastSweep >= kWindowMs) this.sweep(now);
    const f = this.byIp.get(ip);
    if (f === undefined || now - f.start >= kWindowMs) {
      if (f === undefined && this.byIp.size >= this.maxEntries) this.byIp.delete(this.byIp.keys().next().value!);
      this.byIp.set(ip, { start: now, count: 1 });
    } else {
      f.count++;
    }
  }

  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [ip, f] of this.byIp) if (now - f.start >= kWindowMs) this.byIp.delete(ip);
  }
}

/** The 401s that count toward the lockout; revoked and expired tokens are real tokens refused, and do not. */
export function countsAsFailedAuth(err: unknown): boolean {
  return err instanceof FlagwireError
    && (err.code === 'MISSING_TOKEN' || err.code === 'MALFORMED_TOKEN' || err.code === 'UNKNOWN_TOKEN');
}
