// A console session's id, cookie and CSRF token: what every way of signing in (a password in the web
// console, single sign-on) hands the browser, and what the console checks on each request. Here, with
// the session records, so that sign-in routes of any capability share them without importing the console.
import { createHash, timingSafeEqual } from 'node:crypto';
import { hashSecret, randomId } from '../model/ids.js';
import type { Session } from '../model/sessions.js';

export const kSessionCookie = 'flagwire_session';
/** 43 base62 characters: 256 bits. */
export const kSessionIdLength = 43;
const kCsrfTokenLength = 32;

/**
 * A new session's id (only ever in its cookie) and what the store keeps of it: drawn fresh at every
 * sign-in (a password's, single sign-on's), so an id planted in the browser before sign-in is never the signed-in one.
 */
export function freshSession(now: number, sessionMs: number): { id: string; session: Pick<Session, 'idHash' | 'csrfToken' | 'expiresAt'> } {
  const id = randomId(kSessionIdLength);
  return { id, session: { idHash: hashSecret(id), csrfToken: randomId(kCsrfTokenLength), expiresAt: now + sessionMs } };
}

/** Whether `sent` is the session's CSRF token (compared in constant time). */
export function isCsrfToken(session: Session, sent: string): boolean {
  const a = createHash('sha256').update(sent).digest();
  const b = createHash('sha256').update(session.csrfToken).digest();
  return timingSafeEqual(a, b);
}

/** One cookie's value from a Cookie header, or null. */
export function cookieValue(header: string, name: string): string | null {
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** The Set-Cookie of a session: HttpOnly, SameSite=Strict, only under /console, Secure when served over HTTPS. */
export function sessionCookie(id: string, maxAgeMs: number, secure: boolean): string {
  return `${kSessionCookie}=${id}; Path=/console; Max-Age=${Math.max(0, Math.floor(maxAgeMs / 1000))}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}
