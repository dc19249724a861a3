// MurmurHash3, x86 32-bit variant (Austin Appleby's reference `MurmurHash3_x86_32`), over bytes.
//
// This is part of Flagwire's public contract: percentage bucketing is
// `murmur3_x86_32(utf8(flagId + ":" + key), seed 0) mod 100`, and SDKs in other languages reproduce it
// bit for bit (test/fixtures/bucket-vectors.json holds the vectors). All arithmetic is on uint32:
// `Math.imul` is the 32-bit multiply, `>>> 0` turns the final int32 into an unsigned number.

import { utf8Bytes } from './utf8.js';

const kC1 = 0xcc9e2d51;
const kC2 = 0x1b873593;

/** Hash of `bytes[0..length)`; an unsigned 32-bit integer. */
export function murmur3x86_32(bytes: Uint8Array, length: number = bytes.length, seed = 0): number {
  return murmur3Range(bytes, 0, length, seed);
}

/** Hash of `bytes[start..end)`: the same as murmur3x86_32 of those bytes alone, with no view made of them. */
export function murmur3Range(bytes: Uint8Array, start: number, end: number, seed = 0): number {
  return murmur3Continue(seed | 0, 0, bytes, start, end);
}

/**
 * The state after mixing the whole 4-byte blocks of `bytes[start..end)` into state `h` (a seed, or what an
 * earlier call returned); `end - start` is a multiple of 4. With murmur3Continue, a hash of bytes that
 * share a prefix mixes the prefix's blocks once (src/evaluation/engine/bucket.ts: a flag id's).
 */
export function murmur3Blocks(bytes: Uint8Array, start: number, end: number, h: number): number {
  for (let i = start; i < end; i += 4) h = mixBlock(h, bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24));
  return h;
}

/**
 * Hash of what state `h` has mixed (`hashedLength` bytes, whole blocks: murmur3Blocks) followed by
 * `bytes[start..end)`: the same as murmur3x86_32 of all of them at once.
 */
export function murmur3Continue(h: number, hashedLength: number, bytes: Uint8Array, start: number, end: number): number {
  const length = end - start;
  const blocks = start + (length & ~3);
  let i = start;
  for (; i < blocks; i += 4) h = mixBlock(h, bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24));
  const tail = length & 3;
  if (tail !== 0) h ^= scramble(tailWord(bytes, i, tail));
  return finalMix(h ^ (hashedLength + length));
}

/**
 * Both hashes of `bytes` under two seeds, in one pass: `into[0]` is murmur3x86_32(bytes, length, seedA),
 * `into[1]` the same with seedB. An answer's entity tag is two hashes of its bytes (src/http/entity-tags.ts),
 * and the Unleash front-end API's answers are tens of KB: a block's own mixing does not depend on the seed,
 * so it is done once for both, and each block is read as one little-endian word through a DataView instead
 * of four byte loads: cheaper than two passes, most of all on long inputs (bench/RESULTS.md, Costs
 * behind the code's choices).
 */
export function murmur3x86_32Pair(bytes: Uint8Array, seedA: number, seedB: number, into: Uint32Array): void {
  const length = bytes.length;
  const words = new DataView(bytes.buffer, bytes.byteOffset, length);
  const blocks = length & ~3;
  let a = seedA | 0;
  let b = seedB | 0;
  let i = 0;
  // mixBlock's arithmetic written out, the scrambled block shared: calls to helpers took measurably longer.
  for (; i < blocks; i += 4) {
    let k = Math.imul(words.getInt32(i, true), kC1);
    k = Math.imul((k << 15) | (k >>> 17), kC2);
    a ^= k;
    a = (Math.imul((a << 13) | (a >>> 19), 5) + 0xe6546b64) | 0;
    b ^= k;
    b = (Math.imul((b << 13) | (b >>> 19), 5) + 0xe6546b64) | 0;
  }
  const tail = length & 3;
  if (tail !== 0) {
    const k = scramble(tailWord(bytes, i, tail));
    a ^= k;
    b ^= k;
  }
  into[0] = finalMix(a ^ length);
  into[1] = finalMix(b ^ length);
}

/** The reference's fmix32: the last avalanche, as an unsigned 32-bit integer. */
function finalMix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * A block mixed into state `h`, written out: percentage bucketing runs it for every evaluation, and as
 * calls to scramble and a mixing helper a hash of a flag id and key took longer (bench/RESULTS.md,
 * Costs behind the code's choices).
 */
function mixBlock(h: number, block: number): number {
  let k = Math.imul(block, kC1);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, kC2);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/** A tail's own mixing, as a block's (mixBlock's first three lines): multiplied, rotated, multiplied. */
function scramble(block: number): number {
  const k = Math.imul(block, kC1);
  return Math.imul((k << 15) | (k >>> 17), kC2);
}

/** The 1 to 3 bytes after the last whole block at `i`, little-endian, as in the reference. */
function tailWord(bytes: Uint8Array, i: number, tail: number): number {
  let k = bytes[i]!;
  if (tail > 1) k |= bytes[i + 1]! << 8;
  if (tail > 2) k |= bytes[i + 2]! << 16;
  return k;
}

/** Hash of a string's UTF-8 bytes (convenience for tests and tools; the hot path uses `bucket`). */
export function murmur3String(text: string, seed = 0): number {
  const bytes = utf8Bytes(text);
  return murmur3x86_32(bytes, bytes.length, seed);
}
