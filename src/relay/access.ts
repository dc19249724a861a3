// Whether a caller holds a live relay key: the `Authorization: Bearer fwr_...` of GET /v1/relay and of a
// Follow stream (docs/api.md: Relay service). Refusals are the Management API's 401s, in its words for a
// relay key; a missing, malformed or unknown key counts toward its address's failed-authentication
// lockout, as a token does (the node has one lockout, whatever takes a credential).
import { bearerSecret } from '../api/auth.js';
import type { AuthFailures } from '../api/auth-failures.js';
import { FlagwireError } from '../errors.js';
import { hashSecret } from '../model/ids.js';
import type { StoreReader } from '../store/interfaces.js';
import { kRelayKeyRecords, type RelayKey } from './records.js';
import { kRelayKeyPrefix } from './relay-key-commands.js';

const kKeyShape = new RegExp(`^${kRelayKeyPrefix}_[A-Za-z0-9]{16,128}$`);

export class RelayKeyAccess {
  constructor(
    private readonly store: StoreReader,
    private readonly authFailures: AuthFailures,
  ) {}

  /** The live key `authorization` names, from address `ip` at `now`; or the refusal (thrown). The caller renews the store's snapshot first. */
  grant(authorization: string, ip: string, now: number): RelayKey {
    this.authFailures.check(ip, now);
    let key: RelayKey | undefined;
    try {
      if (authorization === '')
        throw new FlagwireError('MISSING_TOKEN', `Send the relay key in the header "Authorization: Bearer ${kRelayKeyPrefix}_<secret>".`);
      const secret = bearerSecret(authorization);
      if (!kKeyShape.test(secret)) {
        throw new FlagwireError(
          'MALFORMED_TOKEN',
          `The Authorization header must be "Bearer ${kRelayKeyPrefix}_<secret>", a relay key (flagwire relay key create).`,
        );
      }
      key = this.store.getKeyed(kRelayKeyRecords, hashSecret(secret));
      if (key === undefined)
        throw new FlagwireError('UNKNOWN_TOKEN', 'This relay key does not exist on this node; make one with flagwire relay key create.');
    } catch (err) {
      this.authFailures.record(ip, now);
      throw err;
    }
    const refusal = this.recheck(key);
    if (refusal !== null) throw refusal;
    return key;
  }

  /** Whether `key` still holds (an open stream's, checked again): the refusal, or null. */
  recheck(key: RelayKey): FlagwireError | null {
    const now = this.store.getKeyed(kRelayKeyRecords, key.secretHash);
    if (now === undefined) return new FlagwireError('UNKNOWN_TOKEN', 'This relay key no longer exists on this node.');
    if (now.revokedAt !== null)
      return new FlagwireError('TOKEN_REVOKED', `Relay key ${now.id} was revoked; make a new one with flagwire relay key create.`);
    return null;
  }
}
