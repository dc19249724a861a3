// Sticky percentage bucketing (design §2): bucket(flagId, key) = murmur3_x86_32(utf8(flagId + ":" + key), 0) mod 100,
// or, for a flag made with `bucketing: "fractional"` (issue 44), flagd's fractional point over the same hash,
// floor(hash * 100 / 2^32), which a stock flagd provider computes for {"fractional": [{"cat": [id, ":", key]}, ...]}.
//
// The hash is taken from the flag's prefix, mixed once when the flag is compiled (a BucketPrefix, kept in
// its CompiledState: src/bytes/bucket-hash.ts).
import { bucketPoint } from '../../targeting/fractional.js';
import { type BucketPrefix, bucketPrefix, keyHash } from '../../bytes/bucket-hash.js';

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
