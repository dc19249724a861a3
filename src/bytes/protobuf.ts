// Protocol buffers' wire format, the few pieces the gRPC services encode by hand (src/sync/codec.ts,
// src/relay/wire.ts): varints, length-delimited fields and a reader that skips what it does not know.
// By hand so that one message is encoded once and the same Buffer written to every stream.

export const kWireVarint = 0;
export const kWire64 = 1;
export const kWireBytes = 2;
const kWire32 = 5;

/** Field `field` of wire type 2 (string, bytes, message) holding `payload`. */
export function lengthDelimited(field: number, payload: Buffer): Buffer {
  return Buffer.concat([varint((field << 3) | kWireBytes), varint(payload.length), payload]);
}

/** A base-128 varint. */
export function varint(n: number): Buffer {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return Buffer.from(out);
}

/** Reads a message's fields in order: throws on truncated or malformed input. */
export class ProtoReader {
  private at = 0;
  constructor(private readonly buf: Buffer) {}

  done(): boolean {
    return this.at >= this.buf.length;
  }

  varint(): number {
    let value = 0;
    for (let shift = 0; shift < 64; shift += 7) {
      const byte = this.buf[this.at++];
      if (byte === undefined) throw new Error('truncated varint');
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
    throw new Error('varint too long');
  }

  bytes(): Buffer {
    const length = this.varint();
    if (this.at + length > this.buf.length) throw new Error('truncated field');
    const out = this.buf.subarray(this.at, this.at + length);
    this.at += length;
    return out;
  }

  skip(wire: number): void {
    if (wire === kWireVarint) this.varint();
    else if (wire === kWire64) this.advance(8);
    else if (wire === kWireBytes) this.bytes();
    else if (wire === kWire32) this.advance(4);
    else throw new Error(`wire type ${wire}`);
  }

  private advance(n: number): void {
    if (this.at + n > this.buf.length) throw new Error('truncated field');
    this.at += n;
  }
}
