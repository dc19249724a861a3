// Streams every audit entry to one sink (sink.ts), in sequence-number order, beside the request path on
// the node's main thread: it reads what the writer committed from the store, so the writer never waits
// for it, and a sink that hangs or fails holds only its own stream. Its memory is one batch: the backlog
// of a slow or absent receiver stays in the store and is read from there when the sink takes more.
//
// The position it reads from runs ahead of the cursor (cursor.ts), which moves only to what the sink
// accepted for good; after a failure, a sink's lost connection or a restart it reads again from the cursor.
import type { Logger } from 'pino';
import type { AuditEntry } from '../model/audit.js';
import { backoffMs } from '../outbox/outbox.js';
import type { SnapshotReader } from '../store/interfaces.js';
import type { WriterClient } from '../writer/client.js';
import type { Cursor } from './cursor.js';
import { type StreamRecord, streamRecord } from './record.js';
import type { AuditSink } from './sink.js';
import { getProject } from '../model/records/project-records.js';

/** Entries read and handed to the sink at once. */
const kBatch = 500;
const kRetry = { firstDelayMs: 1000, maxDelayMs: 30_000, jitter: true };

export interface StreamOptions {
  /** With nothing to send: how long it waits for a commit before it reads anyway (a command-line command's commits are not counted). */
  idleMs: number;
  /** How long after its last send, with nothing more to send, it has the sink confirm what it sent. */
  settleMs: number;
}

const kDefaults: StreamOptions = { idleMs: 1000, settleMs: 1000 };

/** The commits this node's copy takes (src/writer/client.ts), its own and, on PostgreSQL, other nodes' it applied. */
export type Commits = Pick<WriterClient, 'commitCount' | 'commitAfter'>;

export class AuditStream {
  private readonly options: StreamOptions;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private stopped = false;
  /** The sink accepted every entry up to here for good (the cursor's file says the same). */
  private cursor = 0;

  constructor(
    private readonly store: SnapshotReader,
    private readonly commits: Commits,
    private readonly sink: AuditSink,
    private readonly saved: Cursor,
    private readonly log: Logger,
    options: Partial<StreamOptions> = {},
  ) {
    this.options = { ...kDefaults, ...options };
  }

  /** Opens the sink and streams from its cursor on. */
  async start(): Promise<void> {
    this.cursor = await this.sink.open(await this.saved.read(), () => this.wake?.());
    this.loop = this.run();
  }

  /**
   * Stops reading; the send in progress and the sink's confirming of what it sent share `waitMs`, then the
   * sink closes. One budget, so the stop fits the node's shutdown deadline (src/server/start.ts).
   */
  async stop(waitMs: number): Promise<void> {
    const until = performance.now() + waitMs;
    this.stopped = true;
    this.wake?.();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.loop, new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
    const accepted = await this.sink.close(Math.max(0, until - performance.now()));
    await this.loop;
    await this.accept(accepted);
  }

  private async run(): Promise<void> {
    let position = this.cursor;
    let failures = 0;
    let lastSend = 0;
    while (!this.stopped) {
      const seen = this.commits.commitCount();
      let full = false;
      try {
        if (this.sink.lost()) position = this.cursor;
        this.store.resetReadTxn();
        const entries = this.store.listAuditAfter(position, kBatch);
        if (entries.length > 0) {
          await this.accept(await this.sink.send(this.records(entries)));
          position = entries.at(-1)!.seq;
          lastSend = Date.now();
          full = entries.length === kBatch;
        } else if (position > this.cursor && Date.now() - lastSend >= this.options.settleMs) {
          await this.accept(await this.sink.settle());
        }
        failures = 0;
      } catch (err) {
        if (this.stopped) return;
        failures += 1;
        position = this.cursor;
        const retryMs = backoffMs(kRetry, failures);
        this.log.warn({ err, sink: this.sink.name, retryMs }, 'audit stream: the sink failed; what it had not accepted is sent again');
        await this.pause(new Promise((resolve) => setTimeout(resolve, retryMs).unref()));
        continue;
      }
      if (!full && !this.stopped) await this.pause(this.commits.commitAfter(seen, this.options.idleMs));
    }
  }

  /** Waits for `until`, or for stop or nudge. */
  private async pause(until: Promise<unknown>): Promise<void> {
    await new Promise<void>((resolve) => {
      this.wake = resolve;
      void until.then(() => resolve());
    });
    this.wake = null;
  }

  private async accept(seq: number | null): Promise<void> {
    if (seq === null || seq <= this.cursor) return;
    await this.saved.write(seq);
    this.cursor = seq;
  }

  /** The entries as sent, read in the snapshot that listed them. */
  private records(entries: readonly AuditEntry[]): StreamRecord[] {
    const source = this.store.source();
    const revision = this.store.revision();
    const orgs = new Map<string, string | null>();
    return entries.map((entry) => {
      let orgId = orgs.get(entry.projectId);
      if (orgId === undefined) {
        orgId = getProject(this.store, entry.projectId)?.orgId ?? null;
        orgs.set(entry.projectId, orgId);
      }
      return streamRecord(entry, source, revision, orgId);
    });
  }
}
