// flagwire.relay.v1.RelayService/Follow (wire.ts; docs/api.md: Relay service), hosted on the sync
// service's gRPC server and port (src/capability/grpc-service.ts). A relay that opens it with a live
// relay key is sent, in order:
//   - first, a copy (every record of the relayed kinds) when it holds nothing, another source, or a
//     revision the change log no longer reaches; else the revisions after the one it holds (nothing
//     when it holds the newest: a heartbeat says so at once);
//   - then the revisions after what it was sent, each time the change poll sees a commit (the poll the
//     flagd streams share: src/stream/change-poller.ts);
//   - on every payload, when this node is itself a relay, the primary's reachability as it sees it
//     (wire.ts: primaryReportOf), so a relay below reports the primary, not only the relay above;
//   - a heartbeat every kHeartbeatMs while nothing else was sent; a revision that moved no configuration
//     (PostgreSQL's token activity, usage: the poll watches configSeq) goes then, before the heartbeat.
// Each revision carries only its relayed changes (src/store/store-layout.ts), so users, sessions, mail,
// webhooks and their secrets, audit and a node's own work never leave the node.
//
// Bounded: a stream holds one payload in HTTP/2's buffers at most (and every call on the port, with the
// bytes their readers have not taken, is bounded by the server: src/capability/grpc-server.ts). What a slow reader has not taken is
// read again from the change log when its write completes (up to kMaxRevisions revisions, about
// kMaxPayloadBytes, per payload), and one that has fallen past the log is sent a copy: nothing queues.
// Calls take slots of FLAGWIRE_SYNC_MAX_STREAMS with flagd's. The key is checked again at each commit
// and every kStreamRecheckMs: a revoked key's streams end UNAUTHENTICATED.
import { Periodic } from '../background/periodic.js';
import { frameMessage } from '../capability/grpc-frame.js';
import { type GrpcCall, type GrpcHandler, GrpcStatus, type GrpcStatusCode } from '../capability/grpc-server.js';
import { type GrpcHost, type HostedGrpcService, kGrpcStatusOf, kStreamRecheckMs } from '../capability/grpc-service.js';
import { answerableError } from '../errors.js';
import type { Revision } from '../store/changes.js';
import { RelayKeyAccess } from './access.js';
import type { RelayKey } from './records.js';
import { type PrimaryReport, primaryReportOf } from '../model/follow-state.js';
import { decodeFollowRequest, encodeFollowResponse, kFollowPath, type RelayPayload } from './wire.js';

const kHeartbeatMs = 5000;
/** How often the streams are looked at for a heartbeat due: a stream's falls within this of its 5 s. */
const kBeatCheckMs = 1000;
/** As the sync service's token recheck: well within the spec's revocation delay (about a minute). */
/** Revisions read from the log for one payload at most; the rest follow when it is written. */
const kMaxRevisions = 256;
/** A payload of revisions past this is split (a single revision is never split: it is one commit). */
const kMaxPayloadBytes = 4 * 1024 * 1024;

/** One open Follow stream. */
interface Follower {
  readonly call: GrpcCall;
  readonly key: RelayKey;
  readonly release: () => void;
  /** The source and revision the relay holds once what was handed to the call is applied. */
  source: string;
  revision: number;
  writing: boolean;
  /** performance.now() when the last payload was handed to the call. */
  sentAt: number;
  ended: boolean;
}

export class FollowService implements HostedGrpcService {
  readonly methods: Readonly<Record<string, GrpcHandler>> = { [kFollowPath]: (call) => this.follow(call) };
  private readonly followers = new Set<Follower>();
  private readonly access: RelayKeyAccess;
  private readonly heartbeats: Periodic;
  private readonly rechecks: Periodic;

  constructor(private readonly host: GrpcHost) {
    this.access = new RelayKeyAccess(host.store, host.authFailures);
    const onError = (what: string) => (err: unknown) => host.log.error({ err }, `relay service: ${what} failed`);
    this.heartbeats = new Periodic(() => this.beat(), { intervalMs: kBeatCheckMs, onError: onError('the heartbeat') });
    this.rechecks = new Periodic(
      () => {
        host.store.resetReadTxn();
        this.recheckKeys();
      },
      { intervalMs: kStreamRecheckMs, onError: onError("the streams' key check") },
    );
    // The poll renewed the store's snapshot before it called this.
    host.onCommit(() => {
      this.recheckKeys();
      for (const follower of this.followers) this.send(follower);
    });
    this.heartbeats.start();
    this.rechecks.start();
  }

  async close(): Promise<void> {
    await Promise.all([this.heartbeats.stop(), this.rechecks.stop()]);
    for (const follower of [...this.followers]) {
      this.end(follower, GrpcStatus.UNAVAILABLE, 'Flagwire is shutting down; reconnect to another node or retry.');
    }
  }

  private follow(call: GrpcCall): void {
    const { store, clock } = this.host;
    let release: (() => void) | null = null;
    try {
      let request: { source: string; revision: number };
      try {
        request = decodeFollowRequest(call.request);
      } catch {
        call.end(GrpcStatus.INVALID_ARGUMENT, 'The request is not a flagwire.relay.v1.FollowRequest message.');
        return;
      }
      store.resetReadTxn();
      const key = this.access.grant(call.metadata('authorization'), call.peer, clock.now());
      const unwatch = this.host.watchChanges();
      // A relay serves every flag set to flagd clients this node never hears of (docs/decisions.md: flag set reads).
      const unfollow = this.host.relayFollows();
      release = () => {
        unwatch();
        unfollow();
      };
      const follower: Follower = { call, key, release, ...request, writing: false, sentAt: 0, ended: false };
      this.followers.add(follower);
      call.onEnd(() => this.forget(follower));
      // Up to date already: a heartbeat says so at once, rather than silence until the first change.
      if (!this.send(follower)) this.write(follower, { t: 'heartbeat', revision: follower.revision });
    } catch (err) {
      release?.();
      this.refuse(call, err);
    }
  }

  /**
   * Hands the follower what it lacks, read in the caller's snapshot of the store (renewed by the
   * poll, the open, the tick, the write's completion): a copy, or the next revisions.
   * Returns whether anything was handed (false: it has all there is, or its write is still in progress,
   * after which this runs again).
   */
  private send(follower: Follower): boolean {
    if (follower.ended || follower.writing) return false;
    const { store } = this.host;
    const revisions = follower.source === store.source() ? store.revisionsAfter(follower.revision, kMaxRevisions) : null;
    if (revisions === null) {
      const copy = store.relayedCopy();
      follower.source = copy.source;
      follower.revision = copy.revision;
      this.write(follower, { t: 'copy', ...copy });
      return true;
    }
    if (revisions.length === 0) return false;
    const batch = fitted(revisions, primaryReportOf(this.host.relay()));
    follower.revision = batch.last;
    this.writeBytes(follower, batch.message);
    return true;
  }

  private write(follower: Follower, payload: RelayPayload): void {
    const primary = primaryReportOf(this.host.relay());
    this.writeBytes(follower, encodeFollowResponse(primary === undefined ? payload : { ...payload, primary }));
  }

  private writeBytes(follower: Follower, message: Buffer): void {
    follower.writing = true;
    follower.sentAt = performance.now();
    // Framed here, a copy per payload: each follower's payload is its own.
    follower.call.write(frameMessage(message), () => {
      follower.writing = false;
      // What came meanwhile, or what did not fit: read from the log now, never queued.
      this.host.store.resetReadTxn();
      this.send(follower);
    });
  }

  /** A follower sent nothing for kHeartbeatMs gets what it lacks (a revision that moved no configuration), or a heartbeat. */
  private beat(): void {
    const now = performance.now();
    this.host.store.resetReadTxn();
    for (const follower of this.followers) {
      if (follower.writing || now - follower.sentAt < kHeartbeatMs) continue;
      if (!this.send(follower)) this.write(follower, { t: 'heartbeat', revision: follower.revision });
    }
  }

  private recheckKeys(): void {
    if (this.followers.size === 0) return;
    for (const follower of [...this.followers]) {
      const refusal = this.access.recheck(follower.key);
      if (refusal !== null) this.end(follower, GrpcStatus.UNAUTHENTICATED, refusal.message);
    }
  }

  private forget(follower: Follower): void {
    if (follower.ended) return;
    follower.ended = true;
    this.followers.delete(follower);
    follower.release();
  }

  private end(follower: Follower, code: GrpcStatusCode, details: string): void {
    this.forget(follower);
    follower.call.end(code, details);
  }

  /** Ends the call with a refusal's gRPC status (the sync service's table: a key's refusals are UNAUTHENTICATED), its message the Management API's. */
  private refuse(call: GrpcCall, err: unknown): void {
    const error = answerableError(err, (e) => this.host.log.error({ err: e }, 'unexpected error in the relay service'));
    call.end(kGrpcStatusOf[error.code] ?? GrpcStatus.INTERNAL, error.message);
  }
}

/** The longest prefix of `revisions` that packs within kMaxPayloadBytes (one revision at least), packed. */
function fitted(revisions: readonly Revision[], primary: PrimaryReport | undefined): { message: Buffer; last: number } {
  let count = revisions.length;
  for (;;) {
    const batch = revisions.slice(0, count);
    const message = encodeFollowResponse(
      primary === undefined ? { t: 'revisions', revisions: batch } : { t: 'revisions', revisions: batch, primary },
    );
    if (message.length <= kMaxPayloadBytes || count === 1) return { message, last: batch[batch.length - 1]!.revision };
    count = Math.ceil(count / 2);
  }
}
