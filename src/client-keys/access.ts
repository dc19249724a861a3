// Whether a caller holds a live client key with a use (`Authorization: Bearer fwc_...`, or GO Feature
// Flag's `X-API-Key: fwc_...` on its collector route): the events routes' check (docs/events.md).
// Refusals are 401s in the spec's envelope for what is not a live client key (an API token included:
// it never goes in a browser or app, spec rule 9), and 403 for a key without the use. A missing,
// malformed or unknown key counts toward its address's failed-authentication lockout, as a token does.
import { FlagwireError } from '../errors.js';
import type { AuthFailures } from '../http/auth-failures.js';
import { hashSecret, kTokenPrefix } from '../model/ids.js';
import type { StoreReader } from '../store/interfaces.js';
import { bearerSecret } from '../tokens/auth.js';
import { kClientKeyPrefix } from './client-key-commands.js';
import { type ClientKey, type ClientKeyUse, getClientKeyByHash } from './records.js';

const kKeyShape = new RegExp(`^${kClientKeyPrefix}_[A-Za-z0-9]{16,128}$`);
const kApiTokenShape = new RegExp(`^${kTokenPrefix}_[A-Za-z0-9]+$`);

export class ClientKeyAccess {
  constructor(
    private readonly store: StoreReader,
    private readonly authFailures: AuthFailures,
  ) {}

  /**
   * The live key the request names with `use`, from address `ip` at `now`; or the refusal (thrown).
   * `authorization` is the Authorization header, `apiKey` an X-API-Key header where the route takes one
   * ('' when absent). The caller renews the store's snapshot first.
   */
  grant(authorization: string, apiKey: string, use: ClientKeyUse, ip: string, now: number): ClientKey {
    this.authFailures.check(ip, now);
    let key: ClientKey | undefined;
    try {
      const secret = authorization !== '' ? bearerSecret(authorization) : apiKey.trim();
      if (secret === '' && authorization !== '')
        throw new FlagwireError('MALFORMED_TOKEN', `The Authorization header must be "Bearer ${kClientKeyPrefix}_<secret>", a client key.`);
      if (secret === '')
        throw new FlagwireError('MISSING_TOKEN', `Send the client key in the header "Authorization: Bearer ${kClientKeyPrefix}_<secret>".`);
      if (kApiTokenShape.test(secret))
        throw new FlagwireError(
          'UNKNOWN_TOKEN',
          `This is an API token: API tokens never go in a browser or app (spec rule 9). Send a client key (${kClientKeyPrefix}_…) with the "${use}" use (POST /api/v1/client-keys).`,
        );
      if (!kKeyShape.test(secret))
        throw new FlagwireError(
          'MALFORMED_TOKEN',
          `The key must be "${kClientKeyPrefix}_<secret>", a client key (POST /api/v1/client-keys).`,
        );
      key = getClientKeyByHash(this.store, hashSecret(secret));
      if (key === undefined)
        throw new FlagwireError('UNKNOWN_TOKEN', 'This client key does not exist; make one with POST /api/v1/client-keys.');
    } catch (err) {
      this.authFailures.record(ip, now);
      throw err;
    }
    if (key.revokedAt !== null) throw new FlagwireError('TOKEN_REVOKED', `Client key ${key.id} was revoked; make a new one.`);
    if (!key.uses.includes(use))
      throw new FlagwireError(
        'INSUFFICIENT_PERMISSION',
        `Client key ${key.id} may not be used for ${use} (its uses: ${key.uses.join(', ') || 'none'}); make a key with the "${use}" use.`,
      );
    return key;
  }
}
