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
import type { Change, Revision } from '../store/changes.js';

export const kRelayServiceName = 'flagwire.relay.v1.RelayService';
/** The Follow method's gRPC path. */
export const kFollowPath = `/${kRelayServiceName}/Follow`;

/**
 * The primary's reachability as a relay that follows another relay sees it: the node at the top of the
 * chain (its URL as the relay above knows it), whether the chain to it is followed now, when it last said
 * anything (Date.now() there), and why not. Sent on every payload by an upstream that is itself a relay;
 * absent from an upstream that is the primary.
 */
export interface PrimaryReport {
  url: string;
  connected: boolean;
  heardAt: number | null;
  problem: string | null;
}

/** What a relay knows of its own follow (src/store/relay/upstream-follower.ts's RelayStatus, in part). */
export interface FollowState {
  upstream: string;
  connected: boolean;
  heardAt: number | null;
  problem: { text: string } | null;
  primary: PrimaryReport | null;
}

/** The node changes are made on, for a relay: its upstream's primary, or its upstream when that is the primary. */
export function primaryUrlOf(state: Pick<FollowState, 'upstream' | 'primary'>): string {
  return state.primary?.url ?? state.upstream;
}

/**
 * What a relay tells the relays below it of the primary (absent when it is the primary itself): its own
 * upstream when that is the primary; else what that upstream reported, unless the relay cannot follow
 * its upstream now, which cuts the chain to the primary.
 */
export function primaryReportOf(state: FollowState | null): PrimaryReport | undefined {
  if (state === null) return undefined;
  const problem = state.problem?.text ?? null;
  if (state.primary === null) return { url: state.upstream, connected: state.connected, heardAt: state.heardAt, problem };
  if (state.connected) return state.primary;
  return {
    url: state.primary.url,
    connected: false,
    heardAt: state.primary.heardAt,
    problem: `the relay above cannot follow its upstream ${state.upstream}${problem === null ? '' : ` (${problem})`}`,
  };
}

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
