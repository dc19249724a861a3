// Messages between the server's main thread and the writer actor.
import { FlagwireError, toErrorData, type ErrorData } from '../errors.js';
import { kCommitFailedDetail } from '../store/store.js';

export interface WriterStart {
  dataDir: string;
  /** SharedArrayBuffer of one Int32: seconds added to the clock (tests move time without sleeping). */
  clock: SharedArrayBuffer;
}

export interface WriterRequest {
  id: number;
  name: string;
  input: unknown;
  /** A readiness ping: answered at once, outside any transaction. */
  ping?: true;
  /**
   * A barrier: answered once every command sent before it is committed (at once when none is queued),
   * without a transaction of its own. Tests use it to know a refused request left nothing to commit.
   */
  idle?: true;
}

export type WriterReply =
  | { id: number; ok: true; value: unknown }
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
  return err instanceof Error ? err.stack ?? err.message : String(err);
}
