// Entity tags (RFC 9110 §8.8.3) of answers built from a content hash, and If-None-Match against them: the
// OFREP bulk answer (src/ofrep/evaluate.ts) and the native snapshot (src/snapshots/routes.ts). And the one
// reading of an If-Match list: a flag's edit (src/flags/flag-version.ts), SCIM's writes, an approval's.
import { murmur3x86_32Pair } from '../bytes/murmur3.js';
import { ifNoneMatchNames, kEtagSeedB } from './entity-tag-text.js';

const kQuote = 0x22;
const kDash = 0x2d;
const kHexDigits = Buffer.from('0123456789abcdef', 'latin1');
const kNotAscii = /[\u0080-\uffff]/;
/** The two hashes of the body being tagged (etag): written, then read at once. */
const kHashes = new Uint32Array(2);

/**
 * `"<config tag>-<64-bit hash of the body>"`: strong, since it names these exact bytes. The hash
 * is two 32-bit MurmurHash3s (seeds 0 and 0x9747b28c), each as 8 lower-case hex digits.
 *
 * On the bulk answers' path (every OFREP bulk 200 and 304, every front-end answer): the tag is written
 * into one buffer, its digits from a table: formatting them as strings (toString(16), padStart, a template,
 * Buffer.from) cost more than the two hashes of a short context did (issue 57, item 3).
 */
export function etag(configTag: string, body: Uint8Array): Buffer {
  const ascii = !kNotAscii.test(configTag);
  const headLength = 1 + (ascii ? configTag.length : Buffer.byteLength(configTag));
  const tag = Buffer.allocUnsafe(headLength + 18);
  tag[0] = kQuote;
  // Every tag Flagwire makes is ASCII (hex digits, ids, a word): a byte a character, with no call out of JavaScript.
  if (ascii) for (let i = 0; i < configTag.length; i++) tag[i + 1] = configTag.charCodeAt(i);
  else tag.write(configTag, 1);
  tag[headLength] = kDash;
  murmur3x86_32Pair(body, 0, kEtagSeedB, kHashes);
  let at = hexDigits(tag, headLength + 1, kHashes[0]!);
  at = hexDigits(tag, at, kHashes[1]!);
  tag[at] = kQuote;
  return tag;
}

/** Writes `value` (an unsigned 32-bit integer) at `at` as 8 hex digits, most significant first; answers where they end. */
function hexDigits(into: Buffer, at: number, value: number): number {
  for (let shift = 28; shift >= 0; shift -= 4) into[at++] = kHexDigits[(value >>> shift) & 15]!;
  return at;
}

/** RFC 9110 If-None-Match: `*`, or a list of entity tags compared weakly (a `W/` prefix is ignored). */
export function matchesIfNoneMatch(header: string, tag: Uint8Array): boolean {
  if (header === '') return false;
  return ifNoneMatchNames(header, Buffer.from(tag.buffer, tag.byteOffset, tag.byteLength).toString('latin1'));
}

/** The entity tags of an If-Match or If-None-Match list as sent, each trimmed (`*` is one); none for ''. */
export function entityTagList(header: string): string[] {
  return header
    .split(',')
    .map((tag) => tag.trim())
    .filter((tag) => tag !== '');
}

/**
 * RFC 9110 §13.1.1 If-Match: `*`, or a list naming `tag` by strong comparison (a weak `W/` tag never
 * matches one). An absent header ('') is no precondition at all: the caller decides that before asking.
 */
export function matchesIfMatch(header: string, tag: string): boolean {
  return entityTagList(header).some((candidate) => candidate === '*' || candidate === tag);
}
