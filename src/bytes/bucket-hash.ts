// The hash bucketing takes, murmur3_x86_32(utf8(prefix + ":" + key), seed), in two parts: `prefix + ":"`
// is the same on every request for a flag (its id; for Unleash's model a group id), so its whole 4-byte
// blocks are mixed once, when the flag is compiled (a BucketPrefix), and a request mixes only the
// prefix's last 0 to 3 bytes and the key. An OFREP bulk answer asks every flag of a project for one key:
// per flag, a 30-byte id is no longer written and mixed (keyHash was a large share of the eval worker's time for
// a large project). Design §2's bucketing (src/evaluation/engine/bucket.ts) and Unleash's
// rollouts and variants (src/unleash/rules/feature.ts) both hash this way.
import { murmur3Blocks, murmur3Continue } from './murmur3.js';
import { maxUtf8Bytes, utf8Bytes, utf8Scratch, writeUtf8 } from './utf8.js';

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
 * `groupId + ":" + value` the same way, with seed 0 and 86028157 (src/unleash/rules/feature.ts).
 */
export function bucketPrefix(flagId: string, seed = 0): BucketPrefix {
  const bytes = utf8Bytes(`${flagId}:`);
  const hashed = bytes.length & ~3;
  return { state: murmur3Blocks(bytes, 0, hashed, seed), hashed, rest: Uint8Array.from(bytes.subarray(hashed)) };
}

// One scratch buffer per thread: the key is written into it once per key (an OFREP bulk request asks
// every flag for one key), with room before it for a prefix's last bytes, so that nothing is allocated
// per evaluation:
//
//   0        kKeyAt - rest   kKeyAt          keyEnd
//   │ unused │ prefix's rest │ key           │
const kKeyAt = 3;
let scratch = utf8Scratch(256);
let lastKey: string | null = null;
let keyEnd = kKeyAt;

/** murmur3_x86_32(utf8(flagId + ":" + key), seed), unsigned, from the flag's prefix (made with that seed). */
export function keyHash(prefix: BucketPrefix, key: string): number {
  if (key !== lastKey) {
    const worst = kKeyAt + maxUtf8Bytes(key);
    if (worst > scratch.length) scratch = utf8Scratch(Math.max(worst, scratch.length * 2));
    keyEnd = kKeyAt + writeUtf8(scratch, key, kKeyAt);
    lastKey = key;
  }
  const rest = prefix.rest;
  const start = kKeyAt - rest.length;
  for (let i = 0; i < rest.length; i++) scratch[start + i] = rest[i]!;
  return murmur3Continue(prefix.state, prefix.hashed, scratch, start, keyEnd);
}
