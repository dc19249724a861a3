// The protobuf messages of flagd.sync.v1 (flagd-schemas, protobuf/flagd/sync/v1/sync.proto) that
// Flagwire's sync server reads and writes, encoded by hand: a handful of string fields and one
// google.protobuf.Struct of scalars. Hand-written so that a flag set's answer is encoded once, into one
// Buffer, and that Buffer is what every stream of its selector is sent (the gRPC method's serializer is
// the identity); a generated codec would encode the message again for every stream.
//
//   SyncFlagsRequest, FetchAllFlagsRequest  { string provider_id = 1; string selector = 2; }
//   SyncFlagsResponse                       { string flag_configuration = 1; Struct sync_context = 2; }
//   FetchAllFlagsResponse                   { string flag_configuration = 1; }
//   GetMetadataRequest                      {}
//   GetMetadataResponse                     { Struct metadata = 2; }
//   Struct { map<string, Value> fields = 1; }   Value { string_value = 3; number_value = 2; bool_value = 4; }

import { kWire64, kWireBytes, kWireVarint, lengthDelimited, ProtoReader } from '../bytes/protobuf.js';

/** What a sync request carries; `problem` when its bytes are not a valid message (never thrown: grpc-js would answer INTERNAL). */
export interface SyncRequest {
  readonly providerId: string;
  readonly selector: string;
  readonly problem: string | null;
}

const kUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes a SyncFlagsRequest or FetchAllFlagsRequest (the same fields); unknown fields are skipped. */
export function decodeSyncRequest(bytes: Buffer): SyncRequest {
  let providerId = '';
  let selector = '';
  try {
    const reader = new ProtoReader(bytes);
    while (!reader.done()) {
      const tag = reader.varint();
      const field = Math.floor(tag / 8);
      const wire = tag % 8;
      if (wire === kWireBytes && (field === 1 || field === 2)) {
        const text = kUtf8.decode(reader.bytes());
        if (field === 1) providerId = text;
        else selector = text;
      } else reader.skip(wire);
    }
  } catch {
    return { providerId: '', selector: '', problem: 'The request is not a valid flagd.sync.v1 request message.' };
  }
  return { providerId, selector, problem: null };
}

/** A SyncFlagsResponse (or FetchAllFlagsResponse: the same first field) carrying the flag set's JSON. */
export function encodeFlagConfiguration(json: string): Buffer {
  return lengthDelimited(1, Buffer.from(json, 'utf8'));
}

/** A GetMetadataResponse whose metadata Struct holds `metadata`'s scalars. */
export function encodeMetadata(metadata: Readonly<Record<string, string | number | boolean>>): Buffer {
  const fields = Object.entries(metadata).map(([key, value]) =>
    lengthDelimited(1, Buffer.concat([lengthDelimited(1, Buffer.from(key)), lengthDelimited(2, encodeValue(value))])),
  );
  return lengthDelimited(2, Buffer.concat(fields));
}

function encodeValue(value: string | number | boolean): Buffer {
  if (typeof value === 'string') return lengthDelimited(3, Buffer.from(value));
  if (typeof value === 'boolean') return Buffer.from([(4 << 3) | kWireVarint, value ? 1 : 0]);
  const out = Buffer.alloc(9);
  out[0] = (2 << 3) | kWire64;
  out.writeDoubleLE(value, 1);
  return out;
}
