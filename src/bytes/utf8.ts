// UTF-8 reads and writes of a Buffer on the hot path, and the byte arrays they write into. The evaluation
// rules (bucketing, fractional) reach Buffer only through here, so the edge's bundle replaces this module
// with the Web's TextEncoder and TextDecoder (src/edge/utf8-web.ts, scripts/pack-edge.mjs): the same bytes.
//
// Buffer#utf8Write and Buffer#utf8Slice are the native functions behind Buffer#write and
// Buffer#toString, without their argument juggling (encoding lookup, overloads): up to twice as fast for
// the short strings handled per request (ids, query strings, bucketing keys). They are long-standing
// Node API surface (msgpackr relies on them too), just not in the type definitions. Writers guarantee
// room for the worst case (3 bytes per UTF-16 code unit), so a write never truncates.
interface NativeUtf8 {
  utf8Write(text: string, offset: number): number;
  utf8Slice(start: number, end: number): string;
}

/** Writes `text` at `offset`; returns the number of bytes written. */
export function writeUtf8(bytes: Uint8Array, text: string, offset: number): number {
  return (bytes as unknown as NativeUtf8).utf8Write(text, offset);
}

/** `text` as UTF-8 bytes. */
export function utf8Bytes(text: string): Uint8Array {
  return Buffer.from(text, 'utf8');
}

/** `size` bytes for writeUtf8 to write into; what they hold before is unspecified. */
export function utf8Scratch(size: number): Uint8Array {
  return Buffer.allocUnsafe(size);
}

/** Worst-case UTF-8 size of `text`: 3 bytes per UTF-16 code unit (a surrogate pair is 4 for 2). */
export function maxUtf8Bytes(text: string): number {
  return text.length * 3;
}

/** The UTF-8 text of `bytes[start..end)` (invalid sequences become U+FFFD, as in Buffer#toString). */
export function readUtf8(bytes: Uint8Array, start: number, end: number): string {
  return (bytes as unknown as NativeUtf8).utf8Slice(start, end);
}
