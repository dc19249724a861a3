// Web console sign-in: setting a user's password, and starting and ending sessions. The password is
// hashed by the caller (scrypt is slow and takes 32 MiB on purpose: never on the writer thread, which would hold
// every other change that long); the session id is drawn by the caller, which alone sees it, and
// arrives here hashed.
import { FlagwireError } from '../errors.js';
import { requireUser } from '../model/records/lookups.js';
import { isPasswordHash } from '../model/passwords.js';
import type { Session } from '../model/sessions.js';
import type { StoreWriter } from '../store/interfaces.js';
import { deleteSession, getSession, listUserSessions, putCredential, putSession } from '../model/records/session-records.js';

/** `user password`: stores the hash and ends every session of the user (a new password signs everyone out). */
export function userPassword(
  w: StoreWriter,
  input: { userId: string; passwordHash: string },
  now: number,
): { userId: string; updatedAt: number; sessionsEnded: number } {
  const user = requireUser(w, input.userId);
  if (typeof input.passwordHash !== 'string' || !isPasswordHash(input.passwordHash)) {
    throw new FlagwireError('INVALID_REQUEST', 'the password hash is not one Flagwire made');
  }
  putCredential(w, { userId: user.id, passwordHash: input.passwordHash, updatedAt: now });
  const sessions = listUserSessions(w, user.id);
  for (const session of sessions) deleteSession(w, session);
  return { userId: user.id, updatedAt: now, sessionsEnded: sessions.length };
}

/**
 * A user's live sessions at most (browsers, devices): a sign-in beyond it ends the oldest, so signing
 * in again and again (each a valid sign-in, which no failure limit counts) cannot grow the store.
 */
export const kMaxSessionsPerUser = 20;

export type SessionStartInput = Pick<Session, 'userId' | 'idHash' | 'csrfToken' | 'expiresAt' | 'orgId'>;

/** A sign-in: stores the new session and drops the user's expired ones, and the oldest past kMaxSessionsPerUser. */
export function sessionStart(w: StoreWriter, input: SessionStartInput, now: number): { expiresAt: number } {
  const user = requireUser(w, input.userId);
  if (!/^[0-9a-f]{64}$/.test(input.idHash) || input.expiresAt <= now) {
    throw new FlagwireError('INVALID_REQUEST', 'a session needs the SHA-256 of its id and an expiry in the future');
  }
  const live: Session[] = [];
  for (const old of listUserSessions(w, user.id)) {
    if (old.expiresAt <= now) deleteSession(w, old);
    else live.push(old);
  }
  live.sort((a, b) => a.createdAt - b.createdAt);
  for (const old of live.slice(0, Math.max(0, live.length - (kMaxSessionsPerUser - 1)))) deleteSession(w, old);
  const session: Session = {
    idHash: input.idHash,
    userId: user.id,
    csrfToken: input.csrfToken,
    createdAt: now,
    expiresAt: input.expiresAt,
  };
  if (input.orgId !== undefined) session.orgId = input.orgId;
  putSession(w, session);
  return { expiresAt: input.expiresAt };
}

/** Sign-out: the session is gone from the store, so its cookie is refused everywhere from now on. */
export function sessionEnd(w: StoreWriter, input: { idHash: string }): { ended: boolean } {
  const session = getSession(w, input.idHash);
  if (session !== undefined) deleteSession(w, session);
  return { ended: session !== undefined };
}
