// Failed web console sign-ins, counted per address and per account (the e-mail address given, known or
// not, so the answer is the same for both). This is per-process state: each server process (or front-end
// thread, when there are several) counts its own, as the Management API's failed-auth limit does.
import { AuthFailures } from '../../api/auth-failures.js';
import { FlagwireError } from '../../errors.js';

const kAccountWindowMs = 15 * 60_000;

export class SignInLimits {
  private readonly addresses: AuthFailures;
  private readonly accounts: AuthFailures;

  /** `limit`: failures allowed per address in a minute, and per account in 15 minutes. */
  constructor(limit: number) {
    this.addresses = new AuthFailures(limit);
    this.accounts = new AuthFailures(limit, 100_000, kAccountWindowMs);
  }

  /** Throws the 429 while the address or the account is locked out; checked before any password is hashed. */
  check(address: string, account: string, now: number): void {
    if (this.addresses.isLocked(address, now)) {
      throw new FlagwireError('TOO_MANY_AUTH_FAILURES', 'Too many failed sign-ins from this address; wait a minute before retrying.');
    }
    if (this.accounts.isLocked(accountKey(account), now)) {
      throw new FlagwireError('TOO_MANY_AUTH_FAILURES', 'Too many failed sign-ins for this account; wait 15 minutes before retrying.');
    }
  }

  failed(address: string, account: string, now: number): void {
    this.addresses.record(address, now);
    this.accounts.record(accountKey(account), now);
  }
}

/** E-mail addresses are compared without case (src/store: findUserByEmail). */
function accountKey(email: string): string {
  return email.trim().toLowerCase();
}
