// Web console sign-in as the store keeps it (keyedRecords: a user's password hash under their id in the
// credentials database; a session under the hash of its id in the sessions database, filed by its user),
// and every read and write of them. Secrets, a node's own: not relayed, and no write of them moves the
// revision (nothing derived from them is cached).
import type { Credential, Session } from '../sessions.js';
import type { StoreReader, StoreWriter } from '../../store/interfaces.js';
import { keyedRecords } from '../../store/record-kinds.js';

export const kCredentialRecords = keyedRecords<Credential>()({
  name: 'credential',
  database: 'credentials',
  relayed: false,
  key: (credential) => credential.userId,
});

export const kSessionRecords = keyedRecords<Session>()({
  name: 'session',
  database: 'sessions',
  relayed: false,
  key: (session) => session.idHash,
  deletedAs: 'sessionEnded',
  indexes: {
    /** A user's sessions, to end them all. */
    user: { keysOf: (session) => [session.userId] },
  },
});

/** The user's console password hash, if one was set. */
export function getCredential(r: Pick<StoreReader, 'getKeyed'>, userId: string): Credential | undefined {
  return r.getKeyed(kCredentialRecords, userId);
}

export function putCredential(w: Pick<StoreWriter, 'putKeyed'>, credential: Credential): void {
  w.putKeyed(kCredentialRecords, credential);
}

/** A console session by the hash of its id (expired ones included: the caller checks expiresAt). */
export function getSession(r: Pick<StoreReader, 'getKeyed'>, idHash: string): Session | undefined {
  return r.getKeyed(kSessionRecords, idHash);
}

/** Every stored session of the user, expired ones included. */
export function listUserSessions(r: Pick<StoreReader, 'listKeyedBy'>, userId: string): Session[] {
  return r.listKeyedBy(kSessionRecords, 'user', userId);
}

export function putSession(w: Pick<StoreWriter, 'putKeyed'>, session: Session): void {
  w.putKeyed(kSessionRecords, session);
}

export function deleteSession(w: Pick<StoreWriter, 'deleteKeyed'>, session: Session): void {
  w.deleteKeyed(kSessionRecords, session);
}
