// API tokens and their recorded activity as the store keeps them (keyedRecords: a token under its id in
// the tokens database, filed by its project and by its secret's hash; its activity under the token's id),
// and every read and write of them. Tokens are relayed (a relay checks them; their secrets are kept only
// as hashes), and every write of one moves the store's revision; their activity is a node's own.
import { byCreation } from '../by-creation.js';
import type { Token, TokenActivity } from '../tokens.js';
import type { StoreReader, StoreWriter } from '../../store/interfaces.js';
import { keyedRecords } from '../../store/record-kinds.js';

export const kTokenRecords = keyedRecords<Token>()({
  name: 'token',
  database: 'tokens',
  relayed: true,
  key: (token) => token.id,
  indexes: {
    /** A project's tokens. */
    project: { keysOf: (token) => [token.projectId] },
    /** A token by its secret's hash: every request's check. A token's hash never changes (rotation makes a new token). */
    hash: { keysOf: (token) => [token.secretHash] },
  },
});

/** A token's recorded activity (its recent requests and denials). */
export const kActivityRecords = keyedRecords<TokenActivity>()({
  name: 'activity',
  database: 'activity',
  relayed: false,
  key: (a) => a.tokenId,
});

export function getToken(r: Pick<StoreReader, 'getKeyed'>, id: string): Token | undefined {
  return r.getKeyed(kTokenRecords, id);
}

/**
 * The token whose secret hashes to `secretHash` (revoked and expired ones included: the caller checks).
 * Its entry, then its record: the two reads the Management API's memo keeps (memo-reader.ts), as every
 * request asks them again.
 */
export function getTokenByHash(r: Pick<StoreReader, 'lookupEntries' | 'getKeyed'>, secretHash: string): Token | undefined {
  const [entry] = r.lookupEntries(kTokenRecords, 'hash', secretHash, { limit: 1 });
  return entry === undefined ? undefined : r.getKeyed(kTokenRecords, entry.key);
}

/** The project's tokens, oldest first. */
export function listTokens(r: Pick<StoreReader, 'listKeyedBy'>, projectId: string): Token[] {
  return r.listKeyedBy(kTokenRecords, 'project', projectId).sort(byCreation);
}

export function putToken(w: Pick<StoreWriter, 'putKeyed'>, token: Token): void {
  w.putKeyed(kTokenRecords, token);
}

export function getActivity(r: Pick<StoreReader, 'getKeyed'>, tokenId: string): TokenActivity | undefined {
  return r.getKeyed(kActivityRecords, tokenId);
}

export function putActivity(w: Pick<StoreWriter, 'putKeyed'>, activity: TokenActivity): void {
  w.putKeyed(kActivityRecords, activity);
}
