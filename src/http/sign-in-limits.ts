// The web console's sign-in limits: failed sign-ins counted per address and per account (the e-mail
// address given, known or not, so the answer is the same for both), single sign-on starts per address,
// and the password checks running at once. Per process, like the Management API's failed-auth limit: everything is in shared memory, made
// once by the main thread and attached to by every front-end thread (`state`), so several threads do
// not multiply a limit.
import { AuthFailures, type AuthFailuresState } from './auth-failures.js';
import { FlagwireError } from '../errors.js';

const kAccountWindowMs = 15 * 60_000;
/**
 * Password checks running at once in the process (each scrypt's memory and time on libuv's pool); more are
 * refused with 503, so a burst of sign-ins from many addresses cannot take the server's memory.
 */
const kMaxVerifying = 8;
/**
 * Single sign-on starts per address in a minute. A start stores nothing (its state travels in the
 * browser's sealed cookie), so this bounds only the work an address can ask for: a person starting
 * again and again, or a few people behind one address, stay far below it.
 */
export const kSsoStartsPerMinute = 60;

/** Both tables' shared memory: cloned to every front-end thread. */
export interface SignInLimitsState {
  readonly addresses: AuthFailuresState;
  readonly accounts: AuthFailuresState;
  readonly starts: AuthFailuresState;
  /** One Int32: password checks running now. */
  readonly verifying: SharedArrayBuffer;
}

/** An attempt reserve() counted: where, and in which windows, to give it back. */
export interface SignInAttempt {
  readonly address: string;
  readonly account: string;
  readonly addressWindow: number;
  readonly accountWindow: number;
}

export class SignInLimits {
  private readonly addresses: AuthFailures;
  private readonly accounts: AuthFailures;
  private readonly starts: AuthFailures;
  private readonly running: Int32Array;

  /** New limits allowing `limit` failures per address in a minute and per account in 15 minutes, in new shared memory. */
  static create(limit: number): SignInLimits {
    return new SignInLimits({
      addresses: AuthFailures.create(limit).state,
      accounts: AuthFailures.create(limit, 100_000, kAccountWindowMs).state,
      starts: AuthFailures.create(kSsoStartsPerMinute).state,
      verifying: new SharedArrayBuffer(4),
    });
  }

  /** One more handle on the limits' shared `state`. */
  constructor(readonly state: SignInLimitsState) {
    this.addresses = new AuthFailures(state.addresses);
    this.accounts = new AuthFailures(state.accounts);
    this.starts = new AuthFailures(state.starts);
    this.running = new Int32Array(state.verifying);
  }

  /**
   * Counts one attempt for the address and for the account before its password is checked, or throws the
   * 429 when either has reached the limit: so however many sign-ins arrive at once, on whatever thread,
   * at most the limit's worth are checked per window. The attempt stays counted as a failure unless it is
   * given back (giveBack).
   */
  reserve(address: string, account: string, now: number): SignInAttempt {
    const addressWindow = this.addresses.reserve(address, now);
    if (addressWindow === null) throw tooMany('from this address; wait a minute');
    const key = accountKey(account);
    const accountWindow = this.accounts.reserve(key, now);
    if (accountWindow === null) {
      this.addresses.giveBack(address, addressWindow);
      throw tooMany('for this account; wait 15 minutes');
    }
    return { address, account: key, addressWindow, accountWindow };
  }

  /** Counts one single sign-on start from `address`, or throws the 429 once it made kSsoStartsPerMinute in a minute. */
  reserveStart(address: string, now: number): void {
    if (this.starts.reserve(address, now) === null)
      throw new FlagwireError(
        'TOO_MANY_AUTH_FAILURES',
        `More than ${kSsoStartsPerMinute} single sign-on starts came from this address in a minute; wait a minute before retrying.`,
      );
  }

  /** Uncounts an attempt that was not a failure: the right password, or one never checked. */
  giveBack(attempt: SignInAttempt): void {
    this.addresses.giveBack(attempt.address, attempt.addressWindow);
    this.accounts.giveBack(attempt.account, attempt.accountWindow);
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
