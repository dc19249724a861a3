// Relay keys (docs/decisions.md: The relay's upstream): the operator's credential a relay follows this
// node with, made at the command line (cli.ts). Kept hashed, as API tokens are, under the hash: a relay's
// key is found in one read when it opens its stream, asks for discovery, and at each recheck. Relayed,
// so a relay checks the keys of the relays chained below it.
import { keyedRecords } from '../store/record-kinds.js';

export interface RelayKey {
  /** `rk_` and random characters: what `relay key list` shows and `relay key revoke` takes. */
  id: string;
  name: string;
  /** Hex SHA-256 of the secret (src/model/ids.ts hashSecret); the secret itself is never stored. */
  secretHash: string;
  createdAt: number;
  revokedAt: number | null;
}

/** What the command line shows of a key: never its hash. */
export type RelayKeyView = Omit<RelayKey, 'secretHash'>;

export const kRelayKeyRecords = keyedRecords<RelayKey>()({
  name: 'relayKey',
  database: 'relayKeys',
  relayed: true,
  key: (key) => key.secretHash,
});
