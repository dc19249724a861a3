// MCP session ids (spec: Streamable HTTP, Session Management) that carry their own proof: the node keeps
// no table of sessions, so a session opened on one front-end thread is valid on every other (a client's
// next connection may land on any of them) and no number of clients makes the node hold more. An id is
// its issue time, a random part and an HMAC over those and the id of the token that opened it, keyed
// with the node's session key (made at start, shared by its front-end threads): only this node issues
// one, and only that token may use it. Nothing server-side records a session's last use or its end, so a
// session expires on age (FLAGWIRE_MCP_SESSION_SECONDS after it was opened) and DELETE cannot end one.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const kVersion = 'v1';

export class McpSessionIds {
  constructor(
    private readonly key: Uint8Array,
    private readonly maxAgeMs: number,
  ) {}

  /** A new session's id for `tokenId`, issued at `now`. */
  issue(tokenId: string, now: number): string {
    const issued = now.toString(36);
    const nonce = randomBytes(16).toString('base64url');
    return `${kVersion}.${issued}.${nonce}.${this.mac(tokenId, issued, nonce).toString('base64url')}`;
  }

  /** Whether `id` is one this node issued to `tokenId` and, at `now`, younger than the sessions' age. */
  valid(id: string, tokenId: string, now: number): boolean {
    const parts = id.split('.');
    if (parts.length !== 4 || parts[0] !== kVersion) return false;
    const [, issued, nonce, mac] = parts as [string, string, string, string];
    const given = Buffer.from(mac, 'base64url');
    const expected = this.mac(tokenId, issued, nonce);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
    const at = Number.parseInt(issued, 36);
    return now - at <= this.maxAgeMs && at <= now + this.maxAgeMs;
  }

  private mac(tokenId: string, issued: string, nonce: string): Buffer {
    return createHmac('sha256', this.key).update(`${kVersion}\n${tokenId}\n${issued}\n${nonce}`).digest();
  }
}
