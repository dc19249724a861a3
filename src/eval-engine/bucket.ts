// Sticky percentage bucketing (design §2): bucket(flagId, key) = murmur3_x86_32(utf8(flagId + ":" + key), 0) mod 100,
// or, for a flag made with `bucketing: "fractional"` (issue 44), flagd's fractional point over the same hash,
// floor(hash * 100 / 2^32), which a stock flagd provider computes for {"fractional": [{"cat": [id, ":", key]}, ...]}.
import { murmur3x86_32 } from '../bytes/murmur3.js';
import { bucketPoint } from '../targeting/fractional.js';
import { maxUtf8Bytes, writeUtf8 } from '../bytes/utf8.js';

const kColon = 0x3a;
// One scratch buffer per thread: the hashed bytes are written into it instead of building the string
// `flagId + ":" + key` and a Buffer for it on every request (two allocations avoided per evaluation).
let scratch = Buffer.allocUnsafe(4096);
// The scratch buffer keeps `lastFlagId + ":"` at its start: consecutive evaluations of one flag (the
// common case within a batch) write only the key.
let lastFlagId = '';
let keyStart = 0;

/** The bucket of `key` for `flagId`: an integer 0..99, the same in every environment, process and SDK. */
export function bucket(flagId: string, key: string): number {
  return keyHash(flagId, key) % 100;
}

/** The bucket of `key` for a flag made with `bucketing: "fractional"`: an integer 0..99, as flagd's fractional. */
export function fractionalBucket(flagId: string, key: string): number {
  return bucketPoint(keyHash(flagId, key), 100);
}

/** The bucket of `key` under a flag's bucketing: flagd's fractional point when `fractional`, else design §2's modulo. */
export function bucketOf(fractional: boolean, flagId: string, key: string): number {
  return fractional ? fractionalBucket(flagId, key) : bucket(flagId, key);
}

/** murmur3_x86_32(utf8(flagId + ":" + key), 0), unsigned. */
function keyHash(flagId: string, key: string): number {
  const worst = maxUtf8Bytes(flagId) + 1 + maxUtf8Bytes(key);
  if (worst > scratch.length) {
    scratch = Buffer.allocUnsafe(Math.max(worst, scratch.length * 2));
    lastFlagId = '';
  }
  if (flagId !== lastFlagId || lastFlagId === '') {
    keyStart = writeUtf8(scratch, flagId, 0);
    scratch[keyStart++] = kColon;
    lastFlagId = flagId;
  }
  const length = keyStart + writeUtf8(scratch, key, keyStart);
  return murmur3x86_32(scratch, length, 0);
}
