// PROVISIONAL: the relay contract's Follow messages as the relay reads them, until src/relay/wire.ts
// (the one codec both sides import) is merged; then this file goes.
import { Packr } from 'msgpackr';
import type { Change, Revision } from '../changes.js';

export const kFollowPath = '/flagwire.relay.v1.RelayService/Follow';

export interface FollowRequest {
  source: string;
  revision: number;
}

export type FollowMessage =
  | { t: 'copy'; source: string; revision: number; records: Change[] }
  | { t: 'revisions'; revisions: Revision[] }
  | { t: 'heartbeat'; revision: number };

const packr = new Packr({ useRecords: false });

function varint(n: number, out: number[]): void {
  let v = BigInt(n);
  while (v >= 0x80n) {
    out.push(Number((v & 0x7fn) | 0x80n));
    v >>= 7n;
  }
  out.push(Number(v));
}

/** message FollowRequest { string source = 1; uint64 revision = 2; } */
export function encodeFollowRequest(request: FollowRequest): Buffer {
  const source = Buffer.from(request.source, 'utf8');
  const head: number[] = [];
  if (source.length > 0) {
    head.push(0x0a);
    varint(source.length, head);
  }
  const tail: number[] = [];
  if (request.revision > 0) {
    tail.push(0x10);
    varint(request.revision, tail);
  }
  return Buffer.concat([Buffer.from(head), source, Buffer.from(tail)]);
}

/** message FollowResponse { bytes payload = 1; }, its payload unpacked. */
export function decodeFollowResponse(bytes: Buffer): FollowMessage {
  let at = 0;
  let payload: Buffer | null = null;
  while (at < bytes.length) {
    const tag = bytes[at++]!;
    let len = 0;
    let shift = 0;
    for (;;) {
      const b = bytes[at++]!;
      len += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if (b < 0x80) break;
    }
    if (tag === 0x0a) payload = bytes.subarray(at, at + len);
    at += len;
  }
  if (payload === null) throw new Error('a FollowResponse without its payload');
  return packr.unpack(payload) as FollowMessage;
}
