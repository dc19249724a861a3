// A sign-in under way, carried by the browser that started it instead of stored (issue 96 item 6): its
// state's hash, nonce, PKCE verifier and expiry, sealed with AES-256-GCM into the binding cookie. A start
// that never comes back from the identity provider then costs the server nothing, and no number of
// starts, from anyone, can use up what an organisation's members need to sign in.
//
// The key is derived (HKDF-SHA256) from the organisation's client secret, which every node holds in its
// copy of the settings, so any node opens a cookie another sealed, and a rotated secret ends the sign-ins
// started under the old one. The organisation id rides in clear beside the sealed part, to find the key,
// and is the cipher's additional data: a cookie moved to another organisation does not open. Only the
// browser that started a sign-in holds its cookie, so a state carried elsewhere finds none.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { SsoSettings } from './records.js';

/** What the cookie carries of a sign-in under way. */
export interface SealedFlow {
  orgId: string;
  /** Hex SHA-256 of the `state` sent to the identity provider. */
  stateHash: string;
  nonce: string;
  /** PKCE's code_verifier (RFC 7636): its S256 challenge went to the identity provider. */
  codeVerifier: string;
  expiresAt: number;
}

const kIvBytes = 12;
const kTagBytes = 16;
const kInfo = 'flagwire sso flow v1';

function keyOf(settings: Pick<SsoSettings, 'orgId' | 'clientSecret'>): Buffer {
  return Buffer.from(hkdfSync('sha256', settings.clientSecret, settings.orgId, kInfo, 32));
}

/** The cookie's value: `<orgId, base64url>.<iv | ciphertext | tag, base64url>`. */
export function sealFlow(settings: Pick<SsoSettings, 'orgId' | 'clientSecret'>, flow: Omit<SealedFlow, 'orgId'>): string {
  const iv = randomBytes(kIvBytes);
  const cipher = createCipheriv('aes-256-gcm', keyOf(settings), iv);
  cipher.setAAD(Buffer.from(settings.orgId));
  const plain = JSON.stringify([flow.stateHash, flow.nonce, flow.codeVerifier, flow.expiresAt]);
  const sealed = Buffer.concat([iv, cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${Buffer.from(settings.orgId).toString('base64url')}.${sealed.toString('base64url')}`;
}

/** The organisation a cookie names (unverified: only to find its settings), or null for a value of no such shape. */
export function flowOrgId(cookie: string): string | null {
  const dot = cookie.indexOf('.');
  if (dot <= 0) return null;
  return Buffer.from(cookie.slice(0, dot), 'base64url').toString();
}

/** The flow a cookie seals under `settings`, or null where it was not sealed so (forged, altered, another secret's). */
export function openFlow(settings: Pick<SsoSettings, 'orgId' | 'clientSecret'>, cookie: string): SealedFlow | null {
  const sealed = Buffer.from(cookie.slice(cookie.indexOf('.') + 1), 'base64url');
  if (sealed.length <= kIvBytes + kTagBytes) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(settings), sealed.subarray(0, kIvBytes));
    decipher.setAAD(Buffer.from(settings.orgId));
    decipher.setAuthTag(sealed.subarray(sealed.length - kTagBytes));
    const plain = Buffer.concat([decipher.update(sealed.subarray(kIvBytes, sealed.length - kTagBytes)), decipher.final()]);
    const [stateHash, nonce, codeVerifier, expiresAt] = JSON.parse(plain.toString('utf8')) as [string, string, string, number];
    return { orgId: settings.orgId, stateHash, nonce, codeVerifier, expiresAt };
  } catch {
    // The tag did not verify: not a cookie this organisation's secret sealed.
    return null;
  }
}
