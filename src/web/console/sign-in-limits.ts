// The web console's sign-in limits: failed sign-ins counted per address and per account (the e-mail
// address given, known or not, so the answer is the same for both), and the password checks running at
// once. Per process, like the Management API's failed-auth limit: everything is in shared memory, made
// once by the main thread and attached to by every front-end thread (`state`), so several threads do
// not multiply a limit.
import { AuthFailures, type AuthFailuresState } from '../../api/auth-failures.js';
import { FlagwireError } from '../../errors.js';

const kAccountWindowMs = 15 * 60_000;
/**
 * Password checks running at once in the process (each 32 MiB and 0.1 s on libuv's pool); more are
 * refused with 503, so a burst of sign-ins from many addresses cannot take the server's memory.
 */
const kMaxVerifying = 8;

/** Both tables' shared memory: cloned to every front-end thread. */
export interface SignInLimitsState {
  readonly addresses: AuthFailuresState;
  readonly accounts: AuthFailuresState;
  /** One Int32: password checks running now. */
  readonly verifying: SharedArrayBuffer;
}

export class SignInLimits {
  readonly state: SignInLimitsState;
  private readonly addresses: AuthFailures;
  private readonly accounts: AuthFailures;
  private readonly running: Int32Array;

  /**
   * New limits allowing `limit` failures per address in a minute and per account in 15 minutes, or one
   * more handle on existing ones' shared `state`.
   */
  constructor(from: number | SignInLimitsState) {
    this.addresses = new AuthFailures(typeof from === 'number' ? from : from.addresses);
    this.accounts = new AuthFailures(typeof from === 'number' ? from : from.accounts, 100_000, kAccountWindowMs);
    this.running = new Int32Array(typeof from === 'number' ? new SharedArrayBuffer(4) : from.verifying);
    this.state = { addresses: this.addresses.state, accounts: this.accounts.state, verifying: this.running.buffer as SharedArrayBuffer };
  }

  /** Throws the 429 while the address or the account is locked out; checked before any password is hashed. */
  check(address: string, account: string, now: number): void {
    if (this.addresses.isLocked(address, now)) throw tooMany('from this address; wait a minute');
    if (this.accounts.isLocked(accountKey(account), now)) throw tooMany('for this account; wait 15 minutes');
  }

  /** Counts one failure for both; throws the 429 when another thread's failure reached the limit first. */
  failed(address: string, account: string, now: number): void {
    if (!this.addresses.tryRecord(address, now)) throw tooMany('from this address; wait a minute');
    if (!this.accounts.tryRecord(accountKey(account), now)) throw tooMany('for this account; wait 15 minutes');
  }

  /** Runs one password check, or throws the 503 while kMaxVerifying run already in the process. */
  async checking<T>(check: () => Promise<T>): Promise<T> {
    if (Atomics.add(this.running, 0, 1) >= kMaxVerifying) {
      Atomics.sub(this.running, 0, 1);
      throw new FlagwireError('SERVER_BUSY', 'Too many sign-ins are being checked at once; retry in a second.');
    }
    try {
      return await check();
    } finally {
      Atomics.sub(this.running, 0, 1);
    }
  }
}

function tooMany(which: string): FlagwireError {
  return new FlagwireError('TOO_MANY_AUTH_FAILURES', `Too many failed sign-ins ${which} before retrying.`);
}

/** E-mail addresses are compared without case (src/store: findUserByEmail). */
function accountKey(email: string): string {
  return email.trim().toLowerCase();
}
