// flagd's `fractional` operator: a sticky, weighted split.
//
//   {"fractional": [bucketBy?, [variant, weight?], [variant, weight?], ...]}
//
// The arguments arrive evaluated. When the first one is a string it is the bucketing value; otherwise the
// value is flagKey + targetingKey (no separator) and every argument is a bucket. A bucket is
// [variant] (weight 1) or [variant, integer weight]; negative weights count as 0. The hash of the
// bucketing value picks a point in [0, total weight):
//
//   point = floor(murmur3_x86_32(utf8(bucketBy), seed 0) * totalWeight / 2^32)
//
// and the first bucket whose running sum of weights passes the point wins. Anything malformed, a missing
// or empty targetingKey, or a total weight of 0 or over 2^31 - 1, gives null (the flag's default).
//
// The hash is over the value's UTF-8 bytes, as flagd itself (Go) and its other in-process providers hash
// it, and as Flagwire's percentage bucketing does (src/evaluation/engine/murmur3.ts). flagd-core (JavaScript) hashes
// UTF-16 code units instead (imurmurhash), which gives the same answer for text below U+0080 only; see
// test/targeting/fractional.test.ts for a key where the two differ.
import { murmur3x86_32 } from '../bytes/murmur3.js';
import { maxUtf8Bytes, utf8Scratch, writeUtf8 } from '../bytes/utf8.js';
import { charge } from './work-budget.js';

const kMaxTotalWeight = 2147483647;
const kTwo16 = 65536;

// One scratch buffer per thread for the hashed bytes, grown when a value needs more.
let scratch = utf8Scratch(1024);

function hashUtf8(prefix: string, text: string): number {
  const worst = maxUtf8Bytes(prefix) + maxUtf8Bytes(text);
  if (worst > scratch.length) scratch = utf8Scratch(Math.max(worst, scratch.length * 2));
  const start = writeUtf8(scratch, prefix, 0);
  return murmur3x86_32(scratch, start + writeUtf8(scratch, text, start), 0);
}

/**
 * floor(hash * total / 2^32) without BigInt: the product can need 63 bits, so the hash is split into
 * 16-bit halves whose products (under 2^47) are exact in a double.
 */
export function bucketPoint(hash: number, totalWeight: number): number {
  const high = (hash >>> 16) * totalWeight;
  const low = (hash & 0xffff) * totalWeight;
  return Math.floor((high + Math.floor(low / kTwo16)) / kTwo16);
}

/** A bucket's variant as flagd-core takes it: a string, number or boolean; null for null or undefined. */
type BucketVariant = string | number | boolean | null;

const kInvalid = Symbol('invalid');

function bucketVariant(value: unknown): BucketVariant | typeof kInvalid {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  if (value === null || value === undefined) return null;
  return kInvalid;
}

/** A bucket's weight: 1 when absent, an integer clamped at 0, or invalid. */
function bucketWeight(entry: readonly unknown[]): number {
  if (entry.length < 2) return 1;
  const raw = entry[1];
  if (typeof raw !== 'number' || !Number.isInteger(raw)) return -1;
  return Math.max(0, raw);
}

/**
 * `fractional` on its evaluated arguments. `flagKey` and `targetingKey` are the evaluation's
 * ($flagd.flagKey and the context's targetingKey attribute, whatever its type).
 */
export function fractional(args: readonly unknown[], flagKey: string, targetingKey: unknown): BucketVariant {
  if (args.length < 1) return null;
  let first = 0;
  let prefix: string;
  let bucketBy: string;
  if (typeof args[0] === 'string') {
    prefix = '';
    bucketBy = args[0];
    first = 1;
  } else {
    if (!targetingKey) return null;
    prefix = flagKey;
    bucketBy = `${targetingKey}`;
  }
  // Validate every bucket and sum the weights before hashing, as flagd-core does.
  let total = 0;
  for (let i = first; i < args.length; i++) {
    const entry = args[i];
    if (!Array.isArray(entry) || entry.length === 0 || entry.length > 2) return null;
    if (bucketVariant(entry[0]) === kInvalid) return null;
    const weight = bucketWeight(entry);
    if (weight < 0) return null;
    total += weight;
  }
  if (total > kMaxTotalWeight) return null;
  // The key may be a long string of the context's: hashing it is charged to the evaluation's budget.
  charge(bucketBy.length);
  const point = bucketPoint(hashUtf8(prefix, bucketBy), total);
  let sum = 0;
  for (let i = first; i < args.length; i++) {
    const entry = args[i] as readonly unknown[];
    sum += bucketWeight(entry);
    if (sum > point) return bucketVariant(entry[0]) as BucketVariant;
  }
  return null;
}
