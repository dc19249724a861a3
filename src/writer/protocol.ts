// Messages between the server's threads and the writer actor.
import type { MessagePort } from 'node:worker_threads';
import { FlagwireError, toErrorData, type ErrorData } from '../errors.js';
import { kCommitFailedDetail, type StoreRevision } from '../store/interfaces.js';
import type { ChangeLogBounds, Config } from '../config.js';
import type { HeldRequest } from './change-requested.js';
import type { RelayStatus } from '../model/follow-state.js';
import type { ReplicaStatus } from '../store/open-store.js';

export interface WriterStart {
  dataDir: string;
  /** PostgreSQL as the system of record (the writer also runs the follower), or null. */
  databaseUrl: string | null;
  /** The node a relay follows (the writer runs the relay's follower and refuses every command), or null. */
  upstream: Config['upstream'];
  /** SharedArrayBuffer of one Int32: seconds added to the clock (tests move time without sleeping). */
  clock: SharedArrayBuffer;
  /**
   * SharedArrayBuffer of one Int32: the commits the writer thread has made to the node's copy, its own
   * transactions and its follower's alike, each counted and notified (Atomics.notify) once visible to
   * readers. Background work that waits for a change sleeps on it instead of polling.
   */
  commits: SharedArrayBuffer;
  /** FLAGWIRE_WRITE_TIMEOUT_MS: named in the refusal of a transaction cut off at its deadline. */
  writeTimeoutMs: number;
  /** FLAGWIRE_CHANGE_LOG_REVISIONS and FLAGWIRE_CHANGE_LOG_BYTES: what the store's change log keeps; the settings' defaults when absent. */
  changeLog?: ChangeLogBounds;
}

/**
 * A command's fate, one Int32 on a SharedArrayBuffer shared by the caller and the writer thread. It
 * starts kPending; the writer moves it to kClaimed inside its transaction (the write lock held) before
 * it applies the command; the caller moves it to kCancelled when the command's deadline passes first.
 * Both use Atomics.compareExchange, so exactly one wins: a cancelled command is skipped by the writer
 * (answered 503 Storage busy, never applied later); a claimed one is committed and answered as usual.
 */
export const kPending = 0;
export const kClaimed = 1;
export const kCancelled = 2;

/** A command to apply. */
export interface WriterCommand {
  id: number;
  name: string;
  input: unknown;
  /** The command's fate: kPending, kClaimed or kCancelled. */
  fate: Int32Array;
  /**
   * When its caller's write timeout ends (Date.now() scale: every thread shares it). A claimed command
   * is past cancelling by its caller; the writer cuts its transaction off at this moment instead, when
   * the write path can (PostgreSQL, before COMMIT is sent), so a refusal still comes at the timeout.
   */
  deadline: number;
}

/**
 * A barrier: answered once every command sent before it is committed or skipped (at once when none is
 * queued), without a transaction of its own. Tests use it to know a refused request left nothing to commit.
 */
export interface WriterBarrier {
  id: number;
  idle: true;
}

export type WriterRequest = WriterCommand | WriterBarrier;

/**
 * From the main thread only: one more channel for commands, whose other end a front-end thread holds
 * (src/server/frontend-threads.ts). The actor answers every request on the channel it came from.
 */
export interface WriterAttach {
  attach: MessagePort;
}

/**
 * From the writer thread to every client (main thread and each channel), besides replies: the state of
 * this node's copy of PostgreSQL (pg/follower.ts), or of a relay's copy of its upstream (relay/upstream-follower.ts).
 */
export type WriterNotice = { replica: ReplicaStatus } | { relay: RelayStatus };

/**
 * A command's `storeRevision`: the store revision its commit answers at (WritePath.revision), which the
 * Management API names in the answer (src/http/revisions.ts). A barrier's reply has none.
 */
export type WriterReply =
  | {
      id: number;
      ok: true;
      value: unknown;
      storeRevision?: StoreRevision;
      /** The approvals gate held the change as this change request: committed, but not applied (src/approvals/gate.ts). */
      requested?: HeldRequest;
      /** Whether it edited its author's pending request rather than opening one. */
      edited?: boolean;
    }
  | { id: number; ok: false; error: ErrorData; log?: string };

/** The error half of a reply: a FlagwireError as data; anything else as 500 (or 503 for a failed commit) with its text to log. */
export function settleError(err: unknown, commitFailed = false): { error: ErrorData; log?: string } {
  if (err instanceof FlagwireError) {
    // A failed commit carries the filesystem's error as its cause: logged, not sent to the client.
    return err.cause === undefined ? { error: toErrorData(err) } : { error: toErrorData(err), log: describe(err.cause) };
  }
  if (commitFailed) return { error: { code: 'STORE_UNAVAILABLE', detail: kCommitFailedDetail }, log: describe(err) };
  return { error: toErrorData(err), log: describe(err) };
}

function describe(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}
