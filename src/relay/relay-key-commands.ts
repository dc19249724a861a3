// Relay keys as writer commands: create (the secret drawn here and returned once, only its hash kept)
// and revoke. The command line alone runs them: a relay key is the operator's credential, like the
// data dir it follows (docs/decisions.md: The relay's upstream).
import { FlagwireError } from '../errors.js';
import { hashSecret, newSecret, randomId } from '../model/ids.js';
import { requireName } from '../model/input-checks.js';
import type { StoreReader, StoreWriter } from '../store/interfaces.js';
import { kRelayKeyRecords, type RelayKey, type RelayKeyView } from './records.js';

export const kRelayKeyPrefix = 'fwr';

export function relayKeyView(key: RelayKey): RelayKeyView {
  const { secretHash: _hidden, ...view } = key;
  return view;
}

/** Every relay key, revoked ones included, oldest first. */
export function listRelayKeys(store: StoreReader): RelayKey[] {
  return store.listKeyed(kRelayKeyRecords).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
}

export function relayKeyCreate(w: StoreWriter, input: { name: string }, now: number): RelayKeyView & { secret: string } {
  const name = requireName('name', input.name);
  const secret = newSecret(kRelayKeyPrefix);
  const key: RelayKey = { id: `rk_${randomId(16)}`, name, secretHash: hashSecret(secret), createdAt: now, revokedAt: null };
  w.putKeyed(kRelayKeyRecords, key);
  return { ...relayKeyView(key), secret };
}

export function relayKeyRevoke(w: StoreWriter, input: { keyId: string }, now: number): { id: string; revokedAt: number } {
  const key = listRelayKeys(w).find((k) => k.id === input.keyId);
  if (key === undefined)
    throw new FlagwireError('NOT_FOUND', `Relay key ${input.keyId} does not exist (\`flagwire relay key list\` shows them).`);
  if (key.revokedAt !== null) return { id: key.id, revokedAt: key.revokedAt };
  w.putKeyed(kRelayKeyRecords, { ...key, revokedAt: now });
  return { id: key.id, revokedAt: now };
}
