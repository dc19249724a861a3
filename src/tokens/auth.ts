// Bearer-token authentication of the Management API (spec: Authentication, Management API).
// Whether an identified token may act is the model's rule (src/model/records/token-access.ts), which the
// writer asks again as it applies a write.
import { FlagwireError } from '../errors.js';
import { hashSecret, kTokenPrefix } from '../model/ids.js';
import { unknownToken } from '../model/records/token-access.js';
import type { Token } from '../model/tokens.js';
import type { StoreReader } from '../store/interfaces.js';
import { getTokenByHash } from '../model/records/token-records.js';

// `<scheme> <token>`: the scheme is matched case-insensitively (RFC 9110 §11.1: `bearer` is `Bearer`),
// the token exactly, as its hash is looked up.
const kCredentials = /^(\S+)\s+(\S+)\s*$/;
const kTokenShape = new RegExp(`^${kTokenPrefix}_[A-Za-z0-9]{16,128}$`);
// Query parameters that would carry a secret in a URL: refused so the secret is never used from there.
const kUrlTokenParams = ['token', 'access_token', 'api_key', 'apikey', 'authorization'];

/**
 * The token an `Authorization` header names, or a 401 for a missing, malformed or unknown token:
 * the failures that count toward the per-IP lockout.
 */
export function identifyToken(store: StoreReader, header: string): Token {
  if (header === '') {
    throw new FlagwireError('MISSING_TOKEN', 'Send the API token in the header "Authorization: Bearer <token>".');
  }
  const secret = bearerSecret(header);
  if (!kTokenShape.test(secret)) {
    throw new FlagwireError('MALFORMED_TOKEN', `The Authorization header must be "Bearer ${kTokenPrefix}_<secret>".`);
  }
  const token = getTokenByHash(store, hashSecret(secret));
  if (!token) throw unknownToken();
  return token;
}

/** The secret of an `Authorization: Bearer <secret>` header; '' for any other header. */
export function bearerSecret(header: string): string {
  const match = kCredentials.exec(header);
  return match !== null && match[1]!.toLowerCase() === 'bearer' ? match[2]! : '';
}

/** The 400 for a token in the URL's query (spec: Authentication 9): for every route that takes a token. */
export function refuseUrlTokens(query: URLSearchParams): void {
  for (const name of kUrlTokenParams) {
    if (query.has(name)) {
      throw new FlagwireError(
        'INVALID_REQUEST',
        `Tokens are never accepted in the URL: remove "${name}" from the query and send "Authorization: Bearer <token>".`,
      );
    }
  }
}
