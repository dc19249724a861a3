// Sticky percentage bucketing (design §2): bucket(flagId, key) = murmur3_x86_32(utf8(flagId + ":" + key), 0) mod 100,
// or, for a flag made with `bucketing: "fractional"` (issue 44), flagd's fractional point over the same hash,
// floor(hash * 100 / 2^32), which a stock flagd provider computes for {"fractional": [{"cat": [id, ":", key]}, ...]}.
import { murmur3Range, murmur3String } from '../bytes/murmur3.js';
import { bucketPoint } from '../targeting/fractional.js';
import { maxUtf8Bytes, writeUtf8 } from '../bytes/utf8.js';

const kColon = 0x3a;
// One scratch buffer per thread: the hashed bytes are written into it instead of building the string
// `flagId + ":" + key` and a Buffer for it on every request (two allocations avoided per evaluation).
// The key sits at a fixed place, the flag id and the colon right before it:
//
//   0                 idStart          kKeyAt          keyEnd
//   │  (unused)       │ flagId      :  │ key           │
//
// so each part is written only when it changes: an OFREP bulk request asks every flag of a project for
// one key (the key written once, each id once), a run of requests for one flag writes only the keys.
// An ASCII id (ids are) is written by a JS loop, cheaper than a native write for a few dozen bytes: two
// native writes per flag were 14% of the eval worker's time for a 350-flag OFREP bulk answer.
const kKeyAt = 1024;
let scratch = Buffer.allocUnsafe(2 * kKeyAt);
let lastFlagId: string | null = null;
let idStart = 0;
let lastKey: string | null = null;
let keyEnd = 0;

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
  if (key !== lastKey) {
    const worst = kKeyAt + maxUtf8Bytes(key);
    if (worst > scratch.length) {
      // A new buffer: the id before the key is written again too.
      scratch = Buffer.allocUnsafe(Math.max(worst, scratch.length * 2));
      lastFlagId = null;
    }
    keyEnd = kKeyAt + writeUtf8(scratch, key, kKeyAt);
    lastKey = key;
  }
  if (flagId !== lastFlagId) {
    idStart = writeIdBeforeKey(flagId);
    if (idStart < 0) {
      // An id of more than kKeyAt bytes: hashed from its own bytes (never an id Flagwire makes).
      lastFlagId = null;
      return murmur3String(`${flagId}:${key}`);
    }
    lastFlagId = flagId;
  }
  return murmur3Range(scratch, idStart, keyEnd, 0);
}

/** Writes `flagId:` to end at kKeyAt; returns where it starts (-1: it does not fit). */
function writeIdBeforeKey(flagId: string): number {
  const bytes = scratch;
  const length = flagId.length;
  let at = kKeyAt - 1 - length;
  if (at >= 0) {
    let i = 0;
    for (; i < length; i++) {
      const code = flagId.charCodeAt(i);
      if (code >= 0x80) break;
      bytes[at + i] = code;
    }
    if (i === length) {
      bytes[kKeyAt - 1] = kColon;
      return at;
    }
  }
  // Not ASCII: its UTF-8 length first, then one native write.
  at = kKeyAt - 1 - Buffer.byteLength(flagId);
  if (at < 0) return -1;
  writeUtf8(bytes, flagId, at);
  bytes[kKeyAt - 1] = kColon;
  return at;
}
