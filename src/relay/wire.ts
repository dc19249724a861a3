// The relay's wire (issue 45; docs/api.md: Relay service), imported by both sides: the upstream's Follow
// service (follow-service.ts) and the relay that follows it.
//
//   package flagwire.relay.v1;
//   service RelayService { rpc Follow(FollowRequest) returns (stream FollowResponse); }
//   message FollowRequest  { string source = 1; uint64 revision = 2; }   what the relay holds ("" and 0: nothing)
//   message FollowResponse { bytes payload = 1; }                         metadata: authorization: Bearer <relay key>
//
// `payload` is msgpack (msgpackr with useRecords off, as PostgreSQL's change sets are packed:
// src/store/pg/pg-system.ts) of exactly one RelayPayload. The protobuf messages are encoded by hand
// (src/bytes/protobuf.ts), so the service's serializers pass bytes on: a payload is packed once.
import { Packr } from 'msgpackr';
import { kWireBytes, kWireVarint, lengthDelimited, ProtoReader, varint } from '../bytes/protobuf.js';
import type { PrimaryReport } from '../model/follow-state.js';
import type { Change, Revision } from '../store/changes.js';

export const kRelayServiceName = 'flagwire.relay.v1.RelayService';
/** The Follow method's gRPC path. */
export const kFollowPath = `/${kRelayServiceName}/Follow`;

/** Every record of the relayed kinds at `revision` of `source`: what a relay replaces everything it holds with. */
export interface CopyPayload {
  t: 'copy';
  source: string;
  revision: number;
  records: Change[];
}

/** Consecutive revisions after what the relay holds, each with only its relayed changes (an empty one too). */
export interface RevisionsPayload {
  t: 'revisions';
  revisions: Revision[];
}

/** Sent every 5 s while nothing else is: the upstream is there, and the relay is at `revision`. */
export interface HeartbeatPayload {
  t: 'heartbeat';
  revision: number;
}

/** A payload as sent: what the upstream says of the primary rides on every one (absent: the upstream is the primary). */
export type RelayPayload = (CopyPayload | RevisionsPayload | HeartbeatPayload) & { primary?: PrimaryReport };

/** What a relay asks to follow from: the source and revision it holds ("" and 0 when nothing). */
export interface FollowRequest {
  source: string;
  revision: number;
}

const packr = new Packr({ useRecords: false });
const kUtf8 = new TextDecoder('utf-8', { fatal: true });

/** A FollowResponse carrying `payload`, packed. */
export function encodeFollowResponse(payload: RelayPayload): Buffer {
  return lengthDelimited(1, packr.pack(payload));
}

/** The payload of a FollowResponse; throws on bytes that are not one (a relay treats that as a broken stream). */
export function decodeFollowResponse(bytes: Buffer): RelayPayload {
  let packed: Buffer | null = null;
  const reader = new ProtoReader(bytes);
  while (!reader.done()) {
    const tag = reader.varint();
    if (tag === ((1 << 3) | kWireBytes)) packed = reader.bytes();
    else reader.skip(tag % 8);
  }
  if (packed === null) throw new Error('a FollowResponse without a payload');
  const payload = packr.unpack(packed) as RelayPayload;
  if (!isPayload(payload)) throw new Error('a FollowResponse whose payload is not a copy, revisions or a heartbeat');
  return payload;
}

export function encodeFollowRequest(request: FollowRequest): Buffer {
  const parts: Buffer[] = [];
  if (request.source !== '') parts.push(lengthDelimited(1, Buffer.from(request.source, 'utf8')));
  if (request.revision !== 0) parts.push(varint((2 << 3) | kWireVarint), varint(request.revision));
  return Buffer.concat(parts);
}

/** A FollowRequest; unknown fields are skipped; throws on bytes that are not one. */
export function decodeFollowRequest(bytes: Buffer): FollowRequest {
  let source = '';
  let revision = 0;
  const reader = new ProtoReader(bytes);
  while (!reader.done()) {
    const tag = reader.varint();
    if (tag === ((1 << 3) | kWireBytes)) source = kUtf8.decode(reader.bytes());
    else if (tag === ((2 << 3) | kWireVarint)) revision = reader.varint();
    else reader.skip(tag % 8);
  }
  return { source, revision };
}

function isPayload(value: unknown): value is RelayPayload {
  if (typeof value !== 'object' || value === null) return false;
  const payload = value as Partial<Record<string, unknown>>;
  if (payload.primary !== undefined && !isPrimary(payload.primary)) return false;
  switch (payload.t) {
    case 'copy':
      return typeof payload.source === 'string' && typeof payload.revision === 'number' && Array.isArray(payload.records);
    case 'revisions':
      return Array.isArray(payload.revisions);
    case 'heartbeat':
      return typeof payload.revision === 'number';
    default:
      return false;
  }
}

function isPrimary(value: unknown): value is PrimaryReport {
  if (typeof value !== 'object' || value === null) return false;
  const primary = value as Partial<Record<string, unknown>>;
  return (
    typeof primary.url === 'string' &&
    typeof primary.connected === 'boolean' &&
    (primary.heardAt === null || typeof primary.heardAt === 'number') &&
    (primary.problem === null || typeof primary.problem === 'string')
  );
}
