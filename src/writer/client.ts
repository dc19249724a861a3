// A thread's handle on the writer actor: `call` sends a command and resolves with its result once the
// change is committed to disk, or rejects with a FlagwireError. The main thread's client starts the
// actor (and restarts it if it dies); a front-end thread's client talks to the same actor over a
// channel the main thread's client made for it (connect(), src/server/frontend-threads.ts).
//
// Every command has a deadline (FLAGWIRE_WRITE_TIMEOUT_MS). The writer thread may be blocked for any
// time waiting for LMDB's write lock (a command-line command holding it, stopped or hung); a command still
// unclaimed at its deadline is cancelled and refused with 503 Storage busy, and the writer skips it
// when the lock comes free: a 503 means never applied. A command the writer claimed first (it holds the
// lock, only the commit remains) is waited for as usual. See kPending in protocol.ts.
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { ChangeLogBounds } from '../config.js';
import { fromErrorData, FlagwireError, postgresTimeoutError } from '../errors.js';
import type { WriterCommand } from './command.js';
import { ChangeRequested } from './change-requested.js';
import type { StoreRevision } from '../store/interfaces.js';
import type { RelayStatus } from '../model/follow-state.js';
import type { Follows, ReplicaStatus } from '../store/open-store.js';
import { movableBuffers, type ReceivedBody } from '../model/request-body.js';
import {
  kCancelled,
  kPending,
  type WriterAttach,
  type WriterNotice,
  type WriterReply,
  type WriterRequest,
  type WriterStart,
} from './protocol.js';

interface Pending {
  /** `storeRevision`: the store revision the change committed at (WriterReply). */
  resolve(value: unknown, storeRevision: StoreRevision): void;
  /** A refusal, or a change held as a change request (not applied either). */
  reject(err: FlagwireError | ChangeRequested): void;
  /** performance.now() when sent. */
  sentAt: number;
  /** A command's fate (protocol.ts); null for an idle barrier, which has no deadline and is not measured. */
  fate: Int32Array | null;
  timer: NodeJS.Timeout | null;
  /** Refused at its deadline already; kept until the writer skips it, so the writer still counts as busy. */
  refused: boolean;
  /** Called once the writer thread no longer holds the command's input (its reply came, or the thread ended). */
  dropped: (() => void) | null;
}

/** The writer is busy once a change has waited this long for it (a commit normally takes milliseconds). */
const kBusyAfterMs = 1000;
/**
 * While the writer is busy, a change beyond this many waiting is refused at once: each waiting change
 * holds its body in memory until the lock comes free, and would only be refused at its deadline.
 */
const kMaxWaitingWhileBusy = 1000;

/** The actor's thread (the main thread's client) or a channel to it (a front-end thread's). */
type Channel = Pick<Worker, 'postMessage'>;

export class WriterClient {
  /** Null while a front-end thread waits for a new channel (the actor was restarted). */
  private channel: Channel | null;
  /** The actor, when this client started it. */
  private readonly worker: { current: Worker } | null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closing = false;
  private threadFailed = false;
  /** Changes refused with Storage busy since the writer was last seen free (logged once per episode). */
  private refusedBusy = 0;
  /** Called with the milliseconds from sending a command to its reply (metrics); null when nobody measures. */
  onReply: ((ms: number) => void) | null = null;
  /** The main thread's client: called after the actor was restarted (front-end threads need new channels). */
  onRestart: (() => void) | null = null;
  /**
   * With PostgreSQL as the system of record: the state of this node's copy, as the writer thread's
   * follower last reported it (not caught up until its first report); null without PostgreSQL.
   */
  replica: ReplicaStatus | null = null;
  /** On a relay: the state of its copy of the upstream, as the writer thread's follower last reported it; null elsewhere. */
  relay: RelayStatus | null = null;
  /** Settles when the relay's follower has first reported (at once elsewhere): start.ts listens after it. */
  readonly relayKnown: Promise<void>;
  private onRelayKnown: (() => void) | null = null;
  /** The writer thread's count of commits (WriterStart.commits): on the client that started it, null on a channel's. */
  private readonly commits: Int32Array | null;

  private constructor(
    start: WriterStart | MessagePort,
    follows: Follows,
    private readonly writeTimeoutMs: number,
    private readonly log: Logger,
  ) {
    if (follows.databaseUrl !== null) this.replica = { revision: 0, caughtUp: false, connected: false, lagMs: null };
    if (follows.upstream !== null) {
      this.relay = {
        upstream: follows.upstream.url,
        holdsCopy: false,
        connected: false,
        revision: 0,
        heardAt: null,
        problem: null,
        primary: null,
      };
    }
    // The follower reports what the relay's copy holds as the writer thread opens it: a relay restarted
    // while its upstream is down is ready, from what it holds, as soon as it listens.
    this.relayKnown = follows.upstream === null ? Promise.resolve() : new Promise((resolve) => (this.onRelayKnown = resolve));
    if ('dataDir' in start) {
      this.commits = new Int32Array(start.commits);
      this.worker = { current: this.spawn(start) };
      this.channel = this.worker.current;
    } else {
      this.commits = null;
      this.worker = null;
      this.channel = null;
      this.useChannel(start);
    }
  }

  /**
   * Starts the writer actor for `dataDir`; `follows`: PostgreSQL as the system of record (src/store/pg/),
   * or the upstream a relay follows (src/relay/relay-write-path.ts); neither: the data dir's LMDB. `changeLog`:
   * what the store's change log keeps.
   */
  static create(
    dataDir: string,
    clock: Clock,
    writeTimeoutMs: number,
    log: Logger,
    follows: Follows = { databaseUrl: null, upstream: null },
    changeLog?: ChangeLogBounds,
  ): WriterClient {
    const start: WriterStart = {
      dataDir,
      databaseUrl: follows.databaseUrl,
      upstream: follows.upstream,
      clock: clock.state,
      commits: new SharedArrayBuffer(4),
      writeTimeoutMs,
      changeLog,
    };
    return new WriterClient(start, follows, writeTimeoutMs, log);
  }

  /** A client in a front-end thread, over a channel from the main thread's connect(). */
  static over(channel: MessagePort, follows: Follows, writeTimeoutMs: number, log: Logger): WriterClient {
    return new WriterClient(channel, follows, writeTimeoutMs, log);
  }

  /** The main thread's client: a new channel to the actor, for a front-end thread's client (`over`). */
  connect(): MessagePort {
    if (this.worker === null) throw new Error('only the client that started the writer makes channels to it');
    const { port1, port2 } = new MessageChannel();
    const attach: WriterAttach = { attach: port1 };
    this.worker.current.postMessage(attach, [port1]);
    return port2;
  }

  /** How many commits the node's copy has taken since the writer started (what `commitAfter` is given). */
  commitCount(): number {
    if (this.commits === null) throw new Error('only the client that started the writer counts its commits');
    return Atomics.load(this.commits, 0);
  }

  /**
   * Settles once the node's copy has taken a commit past the count `seen` (at once if it has), or after
   * `timeoutMs`, whichever comes first. A pending wait does not keep the process alive.
   */
  commitAfter(seen: number, timeoutMs: number): Promise<void> {
    if (this.commits === null) throw new Error('only the client that started the writer counts its commits');
    const waited = Atomics.waitAsync(this.commits, 0, seen, timeoutMs);
    return waited.async ? waited.value.then(() => undefined) : Promise.resolve();
  }

  /** A front-end thread's client: the channel to the restarted actor. */
  reconnect(channel: MessagePort): void {
    this.useChannel(channel);
  }

  /** Commands and barriers sent to the writer thread and not yet answered by it (refused ones included until it skips them). */
  get queueDepth(): number {
    return this.pending.size;
  }

  /**
   * Whether something has waited over a second for the writer thread: another process holds the write
   * lock (or a huge transaction runs). Writes may then be refused with Storage busy; reads and
   * evaluation are unaffected. Readiness and the metrics report it.
   */
  get busy(): boolean {
    const oldest = this.pending.values().next();
    return oldest.done !== true && performance.now() - oldest.value.sentAt > kBusyAfterMs;
  }

  /**
   * `dropped` runs once the writer thread holds the input no more: when its reply comes, which for a
   * command refused at its deadline is when the writer skips it, possibly long after the 503. A caller
   * that accounts for the input's memory (a request body) releases it then, not at the answer.
   */
  call<I, O>(command: WriterCommand<I, O>, input: I, dropped: (() => void) | null = null): Promise<O> {
    return this.send(command.name, input, dropped).then(({ value }) => value as O);
  }

  /**
   * As call, with the store revision the change committed at (for a command that changed nothing, the
   * one it read): this node's copy has it once the promise resolves. The Management API answers with it
   * (Flagwire-Revision, src/http/revisions.ts).
   */
  callAt<I, O>(
    command: WriterCommand<I, O>,
    input: I,
    dropped: (() => void) | null = null,
  ): Promise<{ value: O; storeRevision: StoreRevision }> {
    return this.send(command.name, input, dropped) as Promise<{ value: O; storeRevision: StoreRevision }>;
  }

  private send(name: string, input: unknown, dropped: (() => void) | null): Promise<{ value: unknown; storeRevision: StoreRevision }> {
    if (this.closing) {
      dropped?.();
      return Promise.reject(new FlagwireError('STORE_UNAVAILABLE', 'The server is shutting down; retry shortly.'));
    }
    const channel = this.channel;
    if (channel === null) {
      dropped?.();
      return Promise.reject(new FlagwireError('STORE_UNAVAILABLE', 'The writer is restarting; nothing was changed. Retry shortly.'));
    }
    if (this.pending.size >= kMaxWaitingWhileBusy && this.busy) {
      dropped?.();
      return Promise.reject(this.refuse(false));
    }
    const id = this.nextId++;
    const fate = new Int32Array(new SharedArrayBuffer(4));
    return new Promise<{ value: unknown; storeRevision: StoreRevision }>((resolve, reject) => {
      const timer = setTimeout(() => this.expire(id), this.writeTimeoutMs);
      this.pending.set(id, {
        resolve: (value, storeRevision) => resolve({ value, storeRevision }),
        reject,
        sentAt: performance.now(),
        fate,
        timer,
        refused: false,
        dropped,
      });
      const request: WriterRequest = { id, name, input, fate, deadline: Date.now() + this.writeTimeoutMs };
      // A request body in the input is moved, not copied: the request hands it over whole (ReceivedBody).
      channel.postMessage(request, movableBuffers((input as { received?: ReceivedBody }).received));
    });
  }

  /**
   * Resolves once every command sent before this call is committed (or refused and skipped): a barrier
   * through the actor's queue, with no transaction of its own. Used by the test hook /__test/writer-idle.
   */
  idle(): Promise<void> {
    const channel = this.channel;
    if (this.closing || channel === null) return Promise.resolve();
    const id = this.nextId++;
    return new Promise<void>((resolve) => {
      this.pending.set(id, {
        resolve: () => resolve(),
        reject: () => resolve(),
        sentAt: performance.now(),
        fate: null,
        timer: null,
        refused: false,
        dropped: null,
      });
      const request: WriterRequest = { id, idle: true };
      channel.postMessage(request);
    });
  }

  /**
   * The actor's thread ended otherwise than by close (and was restarted), or its close failed: then the
   * server's stop does not vouch for the data file (src/store/intact-mark.ts).
   */
  get failed(): boolean {
    return this.threadFailed;
  }

  /**
   * The main thread's client: waits for every command sent so far to be answered, then stops the actor
   * (after the front-end threads' clients were closed). A front-end thread's: closes its channel.
   */
  async close(): Promise<void> {
    this.closing = true;
    if (this.worker === null) {
      (this.channel as MessagePort | null)?.close();
      return;
    }
    const worker = this.worker.current;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('close');
    await exited;
  }

  /** A command's deadline: cancelled and refused unless the writer has claimed it (then only its commit remains). */
  private expire(id: number): void {
    const entry = this.pending.get(id);
    if (entry === undefined || entry.fate === null) return;
    entry.timer = null;
    if (Atomics.compareExchange(entry.fate, 0, kPending, kCancelled) !== kPending) return;
    entry.refused = true;
    entry.reject(this.refuse(true));
  }

  /**
   * `waited`: refused at its deadline; otherwise at once, because too many changes already wait. With
   * PostgreSQL the writer waits on it (not answering, or another node's write holding its revision
   * lock), never on the data file's lock, and the refusal says so.
   */
  private refuse(waited: boolean): FlagwireError {
    const postgres = this.replica !== null;
    if (this.refusedBusy++ === 0) {
      this.log.warn(
        { writeTimeoutMs: this.writeTimeoutMs },
        postgres
          ? 'writes refused with 503 Storage unavailable: PostgreSQL does not answer the writer in time'
          : "writes refused with 503 Storage busy: the writer waits for the data file's write lock (held by another process, such as a console command?)",
      );
    }
    if (postgres) {
      return waited
        ? postgresTimeoutError(this.writeTimeoutMs)
        : new FlagwireError(
            'STORE_UNAVAILABLE',
            `${kMaxWaitingWhileBusy} changes already wait for PostgreSQL, the system of record, to answer; nothing was changed, and the change will not be applied later. Retry shortly.`,
          );
    }
    const why = waited
      ? `The change could not be committed within ${this.writeTimeoutMs} ms: another process holds the data file's write lock.`
      : `${kMaxWaitingWhileBusy} changes already wait for the data file's write lock, which another process holds.`;
    return new FlagwireError('STORE_BUSY', `${why} Nothing was changed, and it will not be applied later; retry.`);
  }

  private noticeReplica(status: ReplicaStatus): void {
    const before = this.replica;
    this.replica = status;
    // Logged by the main thread's client only: every front-end thread hears the same notice.
    if (this.worker !== null && before?.connected !== status.connected) {
      if (status.connected) this.log.info({ revision: status.revision }, 'following PostgreSQL');
      else
        this.log.warn(
          { revision: status.revision },
          "PostgreSQL cannot be reached: evaluation goes on from this node's copy; writes are refused until it is back",
        );
    }
  }

  private noticeRelay(status: RelayStatus): void {
    const before = this.relay;
    this.relay = status;
    this.onRelayKnown?.();
    // Logged by the main thread's client only, once per change of state: never per request or per retry.
    if (this.worker === null) return;
    // Once per episode: a retry that fails again, for the same kind of reason, says nothing new.
    const problem = status.problem;
    const was = before?.problem ?? null;
    if (problem !== null && (was === null || was.refused !== problem.refused)) {
      if (problem.refused) this.log.error({ upstream: status.upstream, revision: status.revision }, problem.text);
      else
        this.log.warn(
          { upstream: status.upstream, revision: status.revision },
          `the upstream cannot be followed: ${problem.text}; evaluation goes on from this relay's copy, and it keeps trying`,
        );
    }
    if (status.connected && before?.connected !== true)
      this.log.info({ upstream: status.upstream, revision: status.revision }, 'following the upstream');
  }

  /** Replies to settle, or a notice of the copy's state. */
  private receive(message: WriterReply[] | WriterNotice): void {
    if (Array.isArray(message)) this.settle(message);
    else if ('replica' in message) this.noticeReplica(message.replica);
    else this.noticeRelay(message.relay);
  }

  private spawn(start: WriterStart): Worker {
    const worker = new Worker(new URL('./thread/actor.js', import.meta.url), { workerData: start });
    worker.on('message', (message: WriterReply[] | WriterNotice) => this.receive(message));
    worker.on('error', (err) => this.log.error({ err }, 'writer thread failed'));
    worker.on('exit', (code) => {
      if (!this.closing || code !== 0) this.threadFailed = true;
      this.failPending();
      if (!this.closing) {
        this.log.error({ code }, 'writer thread exited; restarting it');
        this.worker!.current = this.spawn(start);
        this.channel = this.worker!.current;
        this.onRestart?.();
      }
    });
    return worker;
  }

  private useChannel(channel: MessagePort): void {
    this.channel = channel;
    channel.on('message', (message: WriterReply[] | WriterNotice) => this.receive(message));
    // The actor's end closes when its thread ends: what was sent is unconfirmed. The main thread
    // restarts the actor and sends a new channel (reconnect).
    channel.once('close', () => {
      if (this.channel === channel) this.channel = null;
      this.failPending();
    });
  }

  private settle(replies: WriterReply[]): void {
    for (const reply of replies) {
      const pending = this.pending.get(reply.id);
      if (!pending) continue;
      this.pending.delete(reply.id);
      if (pending.timer !== null) clearTimeout(pending.timer);
      pending.dropped?.();
      // Refused at its deadline: the writer skipped it (that is this reply).
      if (pending.refused) continue;
      if (this.onReply !== null && pending.fate !== null) this.onReply(performance.now() - pending.sentAt);
      if (reply.ok && reply.requested !== undefined) {
        pending.reject(new ChangeRequested(reply.requested, reply.edited === true));
      } else if (reply.ok) {
        pending.resolve(reply.value, reply.storeRevision ?? 0);
      } else {
        if (reply.log) this.log.error({ err: reply.log, code: reply.error.code }, 'writer command failed');
        pending.reject(fromErrorData(reply.error));
      }
    }
    if (this.refusedBusy > 0 && !this.busy) {
      this.log.info({ refused: this.refusedBusy }, 'the writer is free again; writes are accepted');
      this.refusedBusy = 0;
    }
  }

  /** Commands in flight when the actor's thread died were not acknowledged: fail them, never leave them hanging. */
  private failPending(): void {
    for (const [id, pending] of this.pending) {
      this.pending.delete(id);
      if (pending.timer !== null) clearTimeout(pending.timer);
      pending.dropped?.();
      if (pending.refused) continue;
      pending.reject(
        new FlagwireError('STORE_UNAVAILABLE', 'The writer stopped before the change was confirmed; it may not have been applied. Retry.'),
      );
    }
  }
}
