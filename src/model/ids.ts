// Opaque random ids and token secrets, drawn from the CSPRNG.
import { createHash, randomBytes } from 'node:crypto';

const kAlphabet = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** `length` base62 characters; rejection sampling keeps every character equally likely. */
export function randomId(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += kAlphabet[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Token ids are 20 characters (spec: Token description). */
export const kTokenIdLength = 20;
export const kTokenPrefix = 'fw';

/**
 * A new secret: its prefix says what it is (`fw` an API token, `fwr` a relay key, `fwc` a client key), so
 * one is never taken for another, and 40 base62 characters (about 238 bits) follow it.
 */
export function newSecret(prefix: string): string {
  return `${prefix}_${randomId(40)}`;
}

export function newTokenSecret(): string {
  return newSecret(kTokenPrefix);
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
