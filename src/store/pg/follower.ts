// The follower: keeps a node's LMDB copy at PostgreSQL's latest revision. It LISTENs for each commit's
// NOTIFY (the usual path: a change is applied within milliseconds), and also reads the latest revision
// every half second (the heartbeat) and after each reconnect, so a notice lost with a connection delays
// nothing by more than that. Revisions are applied in order, many per LMDB transaction (replica.ts). It
// runs in the writer thread, beside the write path that applies its own commits to the same copy.
//
// The heartbeat is also how a node knows PostgreSQL answers: a read not answered within kAnswerMs
// reports it disconnected, whatever the read waits on (a hung server accepts connections and keeps
// them open, so nothing fails; only time tells). So /ready and flagwire_replica_connected say so
// within kHeartbeatMs + kAnswerMs of PostgreSQL not answering.
import type pg from 'pg';
import { Periodic } from '../../background/periodic.js';
import type { StoreCopy } from '../interfaces.js';
import { kChannel, parseNotice, type PgSystem } from './pg-system.js';
import { catchUp } from './replica.js';
import { kTestSwitches } from '../../test-switches.js';

/** What the follower reports to the main thread (readiness and metrics). */
export interface ReplicaStatus {
  /** The revision this node's copy is at. */
  revision: number;
  /** Whether the copy has caught up with PostgreSQL since the node started (/ready waits for it). */
  caughtUp: boolean;
  /** Whether the last attempt to read PostgreSQL succeeded. */
  connected: boolean;
  /** From a commit (PostgreSQL's clock) to its change applied here (this node's clock), of the last one followed; null before any. */
  lagMs: number | null;
}

const kHeartbeatMs = kTestSwitches.replicaHeartbeatMs ?? 500;
/** A heartbeat not answered within this is PostgreSQL not answering (an answer normally takes a millisecond). */
const kAnswerMs = 1000;
const kReconnectMs = 1000;

export class Follower {
  private status: ReplicaStatus;
  private running = false;
  private again = false;
  /** The highest revision a notice announced, with its commit time. */
  private notified: { revision: number; committedAt: number } | null = null;
  /** The heartbeat: one read at a time (a hung one is not joined by more). */
  private readonly heartbeats: Periodic;
  private listener: pg.Client | null = null;
  private stopped = false;

  constructor(
    private readonly copy: StoreCopy,
    private readonly pg: PgSystem,
    private readonly report: (status: ReplicaStatus) => void,
  ) {
    this.status = { revision: copy.replicaRevision(), caughtUp: false, connected: false, lagMs: null };
    // beat() reports every failure as disconnected; it never throws.
    this.heartbeats = new Periodic(() => this.beat(), { intervalMs: kHeartbeatMs, onError: () => undefined });
  }

  start(): void {
    this.heartbeats.start();
    void this.listen();
    this.poke();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    // Not awaited: a heartbeat's read ends within kAnswerMs, and a late answer only reports status.
    void this.heartbeats.stop();
    const listener = this.listener;
    this.listener = null;
    await listener?.end().catch(() => undefined);
  }

  /** Catch up now (or right after the catch-up running now). */
  poke(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.run().finally(() => (this.running = false));
  }

  private async run(): Promise<void> {
    do {
      this.again = false;
      try {
        const id = await this.pg.databaseId();
        const notified = this.notified;
        // A notice names its revision: no query for the latest is needed. The poll asks.
        const latest =
          notified !== null && notified.revision > this.copy.replicaRevision()
            ? notified.revision
            : (await this.pg.latestRevision()).revision;
        const revision = await catchUp(this.copy, this.pg, id, latest);
        const lagMs =
          notified !== null && revision >= notified.revision && notified.revision > this.status.revision
            ? Math.max(0, Date.now() - notified.committedAt)
            : this.status.lagMs;
        this.publish({ revision, caughtUp: true, connected: true, lagMs });
      } catch {
        // PostgreSQL unreachable (or the copy refused): evaluation goes on from the copy; the next
        // poll or notice tries again.
        this.publish({ ...this.status, revision: this.copy.replicaRevision(), connected: false });
      }
    } while (this.again && !this.stopped);
  }

  /** Reads the latest revision within kAnswerMs: catches up when behind, reports disconnected when unanswered. */
  private async beat(): Promise<void> {
    if (this.stopped) return;
    const unanswered = setTimeout(() => this.publish({ ...this.status, connected: false }), kAnswerMs);
    try {
      const { revision } = await this.pg.latestRevision(kAnswerMs);
      clearTimeout(unanswered);
      if (revision > this.copy.replicaRevision() || !this.status.caughtUp) this.poke();
      else this.publish({ ...this.status, connected: true });
    } catch {
      clearTimeout(unanswered);
      this.publish({ ...this.status, connected: false });
    }
  }

  private publish(status: ReplicaStatus): void {
    const s = this.status;
    this.status = status;
    if (s.revision !== status.revision || s.caughtUp !== status.caughtUp || s.connected !== status.connected || s.lagMs !== status.lagMs) {
      this.report(status);
    }
  }

  private async listen(): Promise<void> {
    if (this.stopped) return;
    const client = this.pg.listener();
    this.listener = client;
    let retried = false;
    const retry = () => {
      if (retried) return;
      retried = true;
      void client.end().catch(() => undefined);
      if (!this.stopped) setTimeout(() => void this.listen(), kReconnectMs);
    };
    client.on('error', retry);
    client.on('end', retry);
    client.on('notification', (msg) => {
      const notice = parseNotice(msg.payload);
      if (notice !== null && (this.notified === null || notice.revision > this.notified.revision)) this.notified = notice;
      this.poke();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${kChannel}`);
      this.poke();
    } catch {
      retry();
    }
  }
}
