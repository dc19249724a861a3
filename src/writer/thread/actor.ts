// The writer actor: one worker thread that applies every change of a running server, strictly one
// transaction at a time. Commands that arrive while a transaction runs are applied together in the
// next one (group commit: each in its own child transaction, one commit for all), and each caller is
// answered only after that commit is durable. The transaction runs on the store's write path
// (open-store.ts): the LMDB file, or PostgreSQL and then this node's copy, whose follower also runs
// in this thread.
//
// The transaction waits for the write lock (LMDB's, which a command-line command may hold for long; or
// PostgreSQL's revision lock, which other nodes take). Meanwhile each caller's deadline may pass
// (src/writer/client.ts): a command is applied only if this thread claims it once the lock is held,
// before its caller cancelled it (src/writer/protocol.ts, kPending).
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { Clock } from '../../clock.js';
import { postgresTimeoutError } from '../../errors.js';
import type { WritePath } from '../../store/interfaces.js';
import { kStoreLayout } from '../../capabilities.js';
import { openWritePath } from '../../store/open-store.js';
import { isCommandName, runOutcome, type CommandName } from './commands.js';
import {
  kClaimed,
  kPending,
  settleError,
  type WriterAttach,
  type WriterCommand,
  type WriterNotice,
  type WriterReply,
  type WriterRequest,
  type WriterStart,
} from '../protocol.js';

/** Where a request came from and its answer goes: the main thread, or a front-end thread's channel. */
type Origin = MessagePort | NonNullable<typeof parentPort>;

const kMaxBatch = 512;
const start = workerData as WriterStart;
// Declared before the write path opens, whose follower may report at once (notify).
/** WriterStart.commits. */
const commits = new Int32Array(start.commits);
/** The revision the follower's last notice named. */
let noticedRevision = -1;
const main = parentPort!;
/** Front-end threads' channels (attach): each also hears the replica notices. */
const channels: MessagePort[] = [];
/** The follower's last report (PostgreSQL or a relay's upstream): a channel attached later hears it at once. */
let lastNotice: WriterNotice | null = null;
// A relay's copy follows its upstream (src/relay); any other node's, PostgreSQL when it has one. The
// relay's path is imported only by a relay: what it asks its upstream with (node:http, node:https) is
// loaded only where it runs (issue 57, item 2).
const writes: WritePath =
  start.upstream !== null
    ? (await import('../../relay/relay-write-path.js')).openRelayWritePath(
        start.dataDir,
        kStoreLayout,
        start.upstream,
        (relay) => notify({ relay }),
        start.changeLog,
      )
    : openWritePath(start.dataDir, kStoreLayout, start.databaseUrl, (replica) => notify({ replica }), start.changeLog);
function notify(notice: WriterNotice): void {
  lastNotice = notice;
  main.postMessage(notice);
  for (const channel of channels) channel.postMessage(notice);
  // A notice whose revision moved reports revisions the follower applied: commits to the copy, as the
  // writer's own are. Others say only how it follows (connected, its lag).
  const revision = 'replica' in notice ? notice.replica.revision : notice.relay.revision;
  if (revision !== noticedRevision) counted();
  noticedRevision = revision;
}
/** A commit to the copy, visible to readers now: counted, and whoever waits on the count is woken. */
function counted(): void {
  Atomics.add(commits, 0, 1);
  Atomics.notify(commits, 0);
}
const clock = new Clock(start.clock);
const queue: WriterCommand[] = [];
/** The origin of each queued command (the same index in `queue`). */
const origins: Origin[] = [];
/** A drain is scheduled or running: commands that come now are applied by it. */
let draining = false;
/** Barriers (`idle` requests) that came while commands were queued: answered after those commit. */
let barriers: { id: number; from: Origin }[] = [];

main.on('message', (msg: WriterRequest | WriterAttach | 'close') => {
  if (msg === 'close') {
    void closing().then(() => process.exit(0));
    return;
  }
  if ('attach' in msg) {
    const channel = msg.attach;
    channels.push(channel);
    channel.on('message', (request: WriterRequest) => receive(request, channel));
    if (lastNotice !== null) channel.postMessage(lastNotice);
    return;
  }
  receive(msg, main);
});

function receive(msg: WriterRequest, from: Origin): void {
  if ('idle' in msg) {
    // With nothing queued and no drain under way, every earlier command is committed already.
    if (!draining) from.postMessage([{ id: msg.id, ok: true, value: true } satisfies WriterReply]);
    else barriers.push({ id: msg.id, from });
    return;
  }
  queue.push(msg);
  origins.push(from);
  if (!draining) {
    draining = true;
    setImmediate(() => void drain());
  }
}

/** Applies what is queued, then closes the write path. */
async function closing(): Promise<void> {
  while (draining) await new Promise((resolve) => setImmediate(resolve));
  await writes.close();
}

async function drain(): Promise<void> {
  while (queue.length > 0) {
    const batch = queue.length > kMaxBatch ? queue.splice(0, kMaxBatch) : queue.splice(0);
    const from = origins.length > kMaxBatch ? origins.splice(0, kMaxBatch) : origins.splice(0);
    let claimed: WriterCommand[] = [];
    let replies: WriterReply[];
    // Its callers wait for what is claimed: the transaction is cut off at the first one's deadline if
    // it has not committed by then (a PostgreSQL that stopped answering mid-transaction).
    const cutOff = new AbortController();
    let deadline: NodeJS.Timeout | null = null;
    try {
      const results = await writes.commit(() => {
        // The write lock is held from here: only the commit remains for what is claimed now. A command
        // whose caller gave up while this thread waited for the lock is skipped; its caller has its 503.
        claimed = batch.filter((req) => Atomics.compareExchange(req.fate, 0, kPending, kClaimed) === kPending);
        // The commands' time is read now, not when the batch was taken: what depends on it (a token's
        // expiry, a trial's end) is judged when the change is applied, however long the lock took.
        const at = clock.now();
        if (claimed.length > 0) {
          const first = Math.min(...claimed.map((req) => req.deadline));
          deadline = setTimeout(() => cutOff.abort(postgresTimeoutError(start.writeTimeoutMs)), first - Date.now());
        }
        return claimed.map((req) => (w) => {
          if (!isCommandName(req.name)) throw new Error(`unknown writer command ${String(req.name)}`);
          return runOutcome(w, req.name as CommandName, req.input as never, at);
        });
      }, cutOff.signal);
      counted();
      // What the callers' answers name (Flagwire-Revision): the revision this commit left the copy at.
      const storeRevision = writes.revision();
      const settled = new Map(claimed.map((req, i) => [req, results[i]!]));
      replies = batch.map((req): WriterReply => {
        const r = settled.get(req);
        if (r === undefined)
          return { id: req.id, ok: false, error: { code: 'STORE_BUSY', detail: 'cancelled by its caller; not applied' } };
        if (!r.ok) return { id: req.id, ok: false, ...settleError(r.error) };
        // Held as a change request (committed as such): its caller is told the change was not applied.
        return r.value.applied
          ? { id: req.id, ok: true, value: r.value.value, storeRevision }
          : { id: req.id, ok: true, value: null, requested: r.value.request, edited: r.value.edited, storeRevision };
      });
    } catch (err) {
      // The commit itself failed (disk full, read-only filesystem, PostgreSQL unreachable): nothing of
      // the batch was written.
      replies = batch.map((req) => ({ id: req.id, ok: false, ...settleError(err, true) }));
    } finally {
      if (deadline !== null) clearTimeout(deadline);
    }
    answer(replies, from);
  }
  draining = false;
  if (barriers.length > 0) {
    answer(
      barriers.map(({ id }): WriterReply => ({ id, ok: true, value: true })),
      barriers.map((b) => b.from),
    );
    barriers = [];
  }
}

/** Sends each reply to its origin (`from[i]` for `replies[i]`), one message per origin. */
function answer(replies: WriterReply[], from: Origin[]): void {
  if (from.every((origin) => origin === from[0])) {
    from[0]!.postMessage(replies);
    return;
  }
  const byOrigin = new Map<Origin, WriterReply[]>();
  replies.forEach((reply, i) => {
    const list = byOrigin.get(from[i]!);
    if (list === undefined) byOrigin.set(from[i]!, [reply]);
    else list.push(reply);
  });
  for (const [origin, list] of byOrigin) origin.postMessage(list);
}
