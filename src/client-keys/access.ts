// Whether a caller holds a live client key with a use: one check for every route a client key opens. The
// events routes (main thread, src/events/service-routes.ts) ask ClientKeyAccess, which also counts failures
// toward the address's lockout, as a token's are; Unleash's front-end API (an eval worker,
// src/unleash/frontend-evaluator.ts) asks identifyClientKey in its batch's snapshot, where no lockout is
// kept (docs/decisions.md: Unleash's front-end API).
//
//   no key                                       401 MISSING_TOKEN
//   an API token (fw_) or a relay key (fwr_)     401 UNKNOWN_TOKEN: they never go in a browser or app (spec rule 9)
//   anything else but a client key's shape       401 MALFORMED_TOKEN
//   no such key                                  401 UNKNOWN_TOKEN
//   a revoked key                                401 TOKEN_REVOKED
//   a key whose uses do not name the one asked   403 INSUFFICIENT_PERMISSION
//
// The first four are what count toward the lockout; the last two name a real key.
import { FlagwireError } from '../errors.js';
import type { AuthFailures } from '../http/auth-failures.js';
import { hashSecret, kTokenPrefix } from '../model/ids.js';
import type { StoreReader } from '../store/interfaces.js';
import { bearerSecret } from '../tokens/auth.js';
import type { ClientKey, ClientKeyUse } from './client-key.js';
import { getClientKeyByHash, kClientKeyPrefix } from './records.js';

const kKeyShape = new RegExp(`^${kClientKeyPrefix}_[A-Za-z0-9]{16,128}$`);
/** An API token's or a relay key's secret: credentials that read rules. */
const kRuleReaderShape = new RegExp(`^${kTokenPrefix}r?_[A-Za-z0-9]+$`);
const kBearer = /^bearer\s+/i;

/** The key a client key's secret names (`secret` as sent, '' for none); or the refusal (thrown) that counts toward the lockout. */
function findClientKey(store: Pick<StoreReader, 'getKeyed'>, secret: string, use: ClientKeyUse): ClientKey {
  if (secret === '')
    throw new FlagwireError('MISSING_TOKEN', `Send the client key in the header "Authorization: Bearer ${kClientKeyPrefix}_<secret>".`);
  if (kRuleReaderShape.test(secret)) {
    const what = secret.startsWith(`${kTokenPrefix}r_`) ? 'a relay key: relay keys' : 'an API token: API tokens';
    throw new FlagwireError(
      'UNKNOWN_TOKEN',
      `This is ${what} never go in a browser or app (spec rule 9). Send a client key (${kClientKeyPrefix}_…) with the "${use}" use (POST /api/v1/client-keys).`,
    );
  }
  if (!kKeyShape.test(secret))
    throw new FlagwireError('MALFORMED_TOKEN', `The key must be "${kClientKeyPrefix}_<secret>", a client key (POST /api/v1/client-keys).`);
  const key = getClientKeyByHash(store, hashSecret(secret));
  if (key === undefined)
    throw new FlagwireError('UNKNOWN_TOKEN', 'This client key does not exist; make one with POST /api/v1/client-keys.');
  return key;
}

/** Refuses (throws) a revoked key, or one whose uses do not name `use`. */
function allowClientKey(key: ClientKey, use: ClientKeyUse): void {
  if (key.revokedAt !== null) throw new FlagwireError('TOKEN_REVOKED', `Client key ${key.id} was revoked; make a new one.`);
  if (!key.uses.includes(use))
    throw new FlagwireError(
      'INSUFFICIENT_PERMISSION',
      `Client key ${key.id} may not be used for ${use} (its uses: ${key.uses.join(', ') || 'none'}); make a key with the "${use}" use.`,
    );
}

/**
 * The live key an Authorization header names with `use`, or the refusal (thrown): the key is the whole
 * header (as Unleash's front-end SDKs send their clientKey) or follows `Bearer `.
 */
export function identifyClientKey(store: Pick<StoreReader, 'getKeyed'>, authorization: string, use: ClientKeyUse): ClientKey {
  const header = authorization.trim();
  const key = findClientKey(store, kBearer.test(header) ? header.replace(kBearer, '') : header, use);
  allowClientKey(key, use);
  return key;
}

/**
 * The secret a request sends as its client key: `Bearer <secret>` in `authorization`, else `apiKey` (an
 * X-API-Key header where the route takes one); '' for none. No check: grant() makes them.
 */
export function clientKeySecret(authorization: string, apiKey: string): string {
  return authorization !== '' ? bearerSecret(authorization) : apiKey.trim();
}

export class ClientKeyAccess {
  constructor(
    private readonly store: StoreReader,
    private readonly authFailures: AuthFailures,
  ) {}

  /**
   * The live key the request names with `use`, from address `ip` at `now`; or the refusal (thrown).
   * `authorization` is the Authorization header (`Bearer fwc_…`), `apiKey` an X-API-Key header where the
   * route takes one ('' when absent). The caller renews the store's snapshot first.
   */
  grant(authorization: string, apiKey: string, use: ClientKeyUse, ip: string, now: number): ClientKey {
    this.authFailures.check(ip, now);
    let key: ClientKey;
    try {
      const secret = clientKeySecret(authorization, apiKey);
      if (secret === '' && authorization !== '')
        throw new FlagwireError('MALFORMED_TOKEN', `The Authorization header must be "Bearer ${kClientKeyPrefix}_<secret>", a client key.`);
      key = findClientKey(this.store, secret, use);
    } catch (err) {
      this.authFailures.record(ip, now);
      throw err;
    }
    allowClientKey(key, use);
    return key;
  }
}
