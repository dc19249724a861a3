// Reads a request body with a byte cap: chunks are copied (uWS neuters them after the callback),
// counted, and reading stops at the limit so an oversized body is never buffered whole.
import type { PendingResponse } from './http.js';

export const kMaxBodyBytes = 1024 * 1024;

export type BodyResult = { ok: true; body: Buffer } | { ok: false; tooLarge: true };

export function readBody(res: PendingResponse, maxBytes: number, done: (result: BodyResult) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  res.onData((chunk, isLast) => {
    if (finished) return;
    size += chunk.byteLength;
    if (size > maxBytes) {
      finished = true;
      done({ ok: false, tooLarge: true });
      return;
    }
    if (isLast) {
      finished = true;
      // One chunk (the usual case): copy once, no concatenation.
      const last = Buffer.from(new Uint8Array(chunk));
      done({ ok: true, body: chunks.length === 0 ? last : Buffer.concat([...chunks, last], size) });
      return;
    }
    chunks.push(Buffer.from(new Uint8Array(chunk)));
  });
}
