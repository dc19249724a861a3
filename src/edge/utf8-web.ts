// src/bytes/utf8.ts for the edge bundle (scripts/pack-edge.mjs puts this module in its place): the same
// functions with the Web's TextEncoder and TextDecoder, as no edge runtime has Node's Buffer. Both
// encode a lone surrogate as U+FFFD's bytes and decode an invalid sequence to U+FFFD, as Buffer does.
const kEncoder = new TextEncoder();
const kDecoder = new TextDecoder();

/** Writes `text` at `offset`; returns the number of bytes written. */
export function writeUtf8(bytes: Uint8Array, text: string, offset: number): number {
  return kEncoder.encodeInto(text, bytes.subarray(offset)).written;
}

/** `text` as UTF-8 bytes. */
export function utf8Bytes(text: string): Uint8Array {
  return kEncoder.encode(text);
}

/** `size` bytes for writeUtf8 to write into. */
export function utf8Scratch(size: number): Uint8Array {
  return new Uint8Array(size);
}

/** Worst-case UTF-8 size of `text`: 3 bytes per UTF-16 code unit (a surrogate pair is 4 for 2). */
export function maxUtf8Bytes(text: string): number {
  return text.length * 3;
}

/** The UTF-8 text of `bytes[start..end)` (invalid sequences become U+FFFD). */
export function readUtf8(bytes: Uint8Array, start: number, end: number): string {
  return kDecoder.decode(bytes.subarray(start, end));
}
