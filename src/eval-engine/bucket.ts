// Sticky percentage bucketing (design §2): bucket(flagId, key) = murmur3_x86_32(utf8(flagId + ":" + key), 0) mod 100,
// or, for a flag made with `bucketing: "fractional"` (issue 44), flagd's fractional point over the same hash,
// floor(hash * 100 / 2^32), which a stock flagd provider computes for {"fractional": [{"cat": [id, ":", key]}, ...]}.
//
// The hot path hashes in two parts. `flagId + ":"` is the same on every request for a flag: its whole
// 4-byte blocks are mixed once, when the flag is compiled (a BucketPrefix, kept in its CompiledState);
// a request mixes only the prefix's last 0 to 3 bytes and the key. An OFREP bulk answer asks every flag
// of a project for one key: per flag, a 30-byte id is no longer written and mixed (keyHash was 12-15% of
// the eval worker's time for 350 flags).
import { murmur3Blocks, murmur3Continue } from '../bytes/murmur3.js';
import { bucketPoint } from '../targeting/fractional.js';
import { maxUtf8Bytes, writeUtf8 } from '../bytes/utf8.js';

/** `utf8(flagId + ":")` as bucketing hashes it: the murmur3 state after its whole blocks, and its last 0-3 bytes. */
export interface BucketPrefix {
  readonly state: number;
  /** Bytes mixed into `state` (a multiple of 4). */
  readonly hashed: number;
  /** The bytes after them, 0 to 3. */
  readonly rest: Uint8Array;
}

/**
 * `seed` is murmur3's: 0 for Flagwire's bucketing; Unleash's rollouts and variants hash
 * `groupId + ":" + value` the same way, with seed 0 and 86028157 (src/unleash/normalized.ts).
 */
export function bucketPrefix(flagId: string, seed = 0): BucketPrefix {
  const bytes = Buffer.from(`${flagId}:`, 'utf8');
  const hashed = bytes.length & ~3;
  return { state: murmur3Blocks(bytes, 0, hashed, seed), hashed, rest: Uint8Array.from(bytes.subarray(hashed)) };
}

/** The bucket of `key` under a compiled flag's bucketing: flagd's fractional point when `fractional`, else design §2's modulo. */
export function bucketAt(fractional: boolean, prefix: BucketPrefix, key: string): number {
  const hash = keyHash(prefix, key);
  return fractional ? bucketPoint(hash, 100) : hash % 100;
}

/** The bucket of `key` for `flagId`: an integer 0..99, the same in every environment, process and SDK. */
export function bucket(flagId: string, key: string): number {
  return bucketAt(false, bucketPrefix(flagId), key);
}

/** The bucket of `key` for a flag made with `bucketing: "fractional"`: an integer 0..99, as flagd's fractional. */
export function fractionalBucket(flagId: string, key: string): number {
  return bucketAt(true, bucketPrefix(flagId), key);
}

// One scratch buffer per thread: the key is written into it once per key (an OFREP bulk request asks
// every flag for one key), with room before it for a prefix's last bytes, so that nothing is allocated
// per evaluation:
//
//   0        kKeyAt - rest   kKeyAt          keyEnd
//   │ unused │ prefix's rest │ key           │
const kKeyAt = 3;
let scratch = Buffer.allocUnsafe(256);
let lastKey: string | null = null;
let keyEnd = kKeyAt;

/** murmur3_x86_32(utf8(flagId + ":" + key), seed), unsigned, from the flag's prefix (made with that seed). */
export function keyHash(prefix: BucketPrefix, key: string): number {
  if (key !== lastKey) {
    const worst = kKeyAt + maxUtf8Bytes(key);
    if (worst > scratch.length) scratch = Buffer.allocUnsafe(Math.max(worst, scratch.length * 2));
    keyEnd = kKeyAt + writeUtf8(scratch, key, kKeyAt);
    lastKey = key;
  }
  const rest = prefix.rest;
  const start = kKeyAt - rest.length;
  for (let i = 0; i < rest.length; i++) scratch[start + i] = rest[i]!;
  return murmur3Continue(prefix.state, prefix.hashed, scratch, start, keyEnd);
}
