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

export function newTokenSecret(): string {
  return `${kTokenPrefix}_${randomId(40)}`;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
