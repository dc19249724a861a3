// Which client key a request names, and whether it may be used for what the request asks (docs/decisions.md:
// Client keys). Read where the answer is made (an eval worker, in its batch's snapshot), so a revoked key is
// refused from the first request after the revoke was acknowledged.
//
//   no Authorization header                        401 MISSING_TOKEN
//   an API token (fw_) or a relay key (fwr_)       403 FORBIDDEN: it reads rules, which a browser never holds
//   anything else but a client key's shape         401 MALFORMED_TOKEN
//   no such key                                    401 UNKNOWN_TOKEN
//   a revoked key                                  401 TOKEN_REVOKED
//   a key whose uses do not name the one asked     403 INSUFFICIENT_PERMISSION
//
// The key is the whole header (as Unleash's front-end SDKs send their clientKey) or `Bearer <key>`.
import { FlagwireError } from '../errors.js';
import { hashSecret, kTokenPrefix } from '../model/ids.js';
import type { StoreReader } from '../store/interfaces.js';
import { type ClientKey, type ClientKeyUse, getClientKeyByHash, kClientKeyPrefix } from './records.js';

const kKeyShape = new RegExp(`^${kClientKeyPrefix}_[A-Za-z0-9]{16,128}$`);
/** An API token's or a relay key's secret: the credentials that read rules. */
const kRuleReaderShape = new RegExp(`^${kTokenPrefix}r?_`);
const kBearer = /^bearer\s+/i;

/** The secret of an Authorization header: the header itself, or what follows `Bearer `. */
export function clientKeySecret(authorization: string): string {
  const header = authorization.trim();
  return kBearer.test(header) ? header.replace(kBearer, '') : header;
}

/** The key `authorization` names, allowed `use`; or the refusal (thrown) the table above says. */
export function identifyClientKey(store: Pick<StoreReader, 'getKeyed'>, authorization: string, use: ClientKeyUse): ClientKey {
  const secret = clientKeySecret(authorization);
  if (secret === '') {
    throw new FlagwireError(
      'MISSING_TOKEN',
      `Send a client key with the use "${use}" (${kClientKeyPrefix}_…) in the header "Authorization".`,
    );
  }
  if (kRuleReaderShape.test(secret)) {
    throw new FlagwireError(
      'FORBIDDEN',
      'This is an API token or a relay key: it reads rules, and never goes into a browser or an app. Send a client key ' +
        `(${kClientKeyPrefix}_…, made with POST /api/v1/client-keys or \`flagwire client-key create\`) with the use "${use}".`,
    );
  }
  if (!kKeyShape.test(secret)) {
    throw new FlagwireError('MALFORMED_TOKEN', `The Authorization header must be a client key, ${kClientKeyPrefix}_<secret>.`);
  }
  const key = getClientKeyByHash(store, hashSecret(secret));
  if (key === undefined) throw new FlagwireError('UNKNOWN_TOKEN', 'No such client key: check the key, or make one.');
  if (key.revokedAt !== null) throw new FlagwireError('TOKEN_REVOKED', `Client key ${key.id} was revoked.`);
  if (!key.uses.includes(use)) {
    throw new FlagwireError(
      'INSUFFICIENT_PERMISSION',
      `Client key ${key.id} may be used for ${key.uses.join(', ')}, not "${use}": make a key whose uses name it.`,
    );
  }
  return key;
}
