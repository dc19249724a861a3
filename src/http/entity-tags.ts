// Entity tags (RFC 9110 §8.8.3) of answers built from a content hash, and If-None-Match against them: the
// OFREP bulk answer (src/ofrep/evaluate.ts) and the native snapshot (src/snapshots/routes.ts). And the one
// reading of an If-Match list: a flag's edit (src/flags/flag-version.ts), SCIM's writes, an approval's.
import { murmur3x86_32 } from '../bytes/murmur3.js';

/** `"<config tag>-<64-bit hash of the body>"`: strong, since it names these exact bytes. */
export function etag(configTag: string, body: Uint8Array): Buffer {
  const a = murmur3x86_32(body, body.length, 0).toString(16).padStart(8, '0');
  const b = murmur3x86_32(body, body.length, 0x9747b28c).toString(16).padStart(8, '0');
  return Buffer.from(`"${configTag}-${a}${b}"`);
}

/** RFC 9110 If-None-Match: `*`, or a list of entity tags compared weakly (a `W/` prefix is ignored). */
export function matchesIfNoneMatch(header: string, tag: Uint8Array): boolean {
  if (header === '') return false;
  const wanted = Buffer.from(tag.buffer, tag.byteOffset, tag.byteLength).toString('latin1');
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
