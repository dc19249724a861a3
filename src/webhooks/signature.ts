// Standard Webhooks' signing scheme (standardwebhooks.com): the secret is `whsec_` and the base64 of the
// key's bytes; each attempt is signed with HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<body>`,
// sent as `webhook-signature: v1,<base64>`. Receivers verify with any Standard Webhooks library.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const kPrefix = 'whsec_';

/** A new secret: 32 random bytes. */
export function newWebhookSecret(): string {
  return `${kPrefix}${randomBytes(32).toString('base64')}`;
}

/**
 * The three headers of one attempt of message `id` with `body` (its text, or the UTF-8 bytes sent),
 * signed at `timestampS` (Unix seconds).
 */
export function signedHeaders(secret: string, id: string, timestampS: number, body: string | Buffer): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': `v1,${signature(secret, id, timestampS, body)}`,
  };
}

function signature(secret: string, id: string, timestampS: number, body: string | Buffer): string {
  const key = Buffer.from(secret.startsWith(kPrefix) ? secret.slice(kPrefix.length) : secret, 'base64');
  // The body apart from what heads it: a body of a flag's size is not copied into a string of its own.
  return createHmac('sha256', key).update(`${id}.${timestampS}.`).update(body).digest('base64');
}

/** Whether `header` (space-separated `v1,<sig>` entries) holds the signature of this message: what a receiver checks. */
export function verifySignature(secret: string, id: string, timestampS: number, body: string, header: string): boolean {
  const expected = Buffer.from(signature(secret, id, timestampS, body));
  return header.split(' ').some((entry) => {
    const [version, sig] = entry.split(',');
    if (version !== 'v1' || sig === undefined) return false;
    const given = Buffer.from(sig);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
