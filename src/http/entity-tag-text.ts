// The entity tags of entity-tags.ts as strings, with nothing of Node's: for the edge (src/edge), which
// tags its OFREP answers as the server does. entity-tags.ts writes the same tag into a Buffer on the
// server's hot path, and reads If-None-Match with the rule below.
import { murmur3x86_32Pair } from '../bytes/murmur3.js';

/** The second hash's seed; the first is 0. */
export const kEtagSeedB = 0x9747b28c;
const kHashes = new Uint32Array(2);

/** `"<config tag>-<64-bit hash of the body>"` (entity-tags.ts etag), for `body`'s bytes. */
export function etagText(configTag: string, body: Uint8Array): string {
  murmur3x86_32Pair(body, 0, kEtagSeedB, kHashes);
  return `"${configTag}-${hex8(kHashes[0]!)}${hex8(kHashes[1]!)}"`;
}

function hex8(value: number): string {
  return value.toString(16).padStart(8, '0');
}

/** RFC 9110 If-None-Match: `*`, or a list of entity tags compared weakly (a `W/` prefix is ignored). */
export function ifNoneMatchNames(header: string, wanted: string): boolean {
  if (header === '') return false;
  // What a client that holds this answer sends: just its tag, one comparison.
  if (header === wanted) return true;
  for (const part of header.split(',')) {
    let candidate = part.trim();
    if (candidate === '*') return true;
    if (candidate.startsWith('W/')) candidate = candidate.slice(2);
    if (candidate === wanted) return true;
  }
  return false;
}
