// Revisions on the wire (docs/api.md: Revisions). Every answer of the Management API, the Evaluation
// API and OFREP names the revision of the store it was computed from (Flagwire-Revision: the store's
// revision(), src/store/interfaces.ts: PostgreSQL's revision on every node of a cluster, the commit
// number on one node alone). A request may ask for at least a revision (Flagwire-Min-Revision): it is
// answered once this node's copy has it, or refused 503 with Retry-After when the copy does not get it
// within the wait (FLAGWIRE_MIN_REVISION_WAIT_MS). That is read-your-writes across nodes for the clients
// that want it: the revision a write on one node answered with, asked of another.
//
// The wait holds no thread and no timer per request: the waiting requests sit in one list, and while
// it is not empty one interval renews this thread's snapshot and reads the revision (one LMDB get),
// then answers those the copy reached and those whose wait ran out.
import { FlagwireError } from '../errors.js';
import { headerKey } from './header-keys.js';

/** The response header: the revision the answer was computed at. */
export const kRevisionHeader = 'Flagwire-Revision';
/** The request header, as uWS's getHeader takes it (lower case): answer at this revision or a later one. */
export const kMinRevisionHeader = 'flagwire-min-revision';
/** The same as bytes, for the evaluation routes' handlers (header-keys.ts). */
export const kMinRevisionKey = headerKey(kMinRevisionHeader);
/** Its name as documented (OpenAPI, CORS preflights). */
export const kMinRevisionName = 'Flagwire-Min-Revision';
/** A header value that is not a revision (minRevisionOf). */
export const kInvalidMinRevision = -1;

/** The 400 of a Flagwire-Min-Revision that is not a revision (fixed text: nothing of the value is echoed). */
export const kInvalidMinRevisionDetail =
  'The Flagwire-Min-Revision header must be a revision: a whole number, as a Flagwire-Revision header gives it.';
/** The 503 of a revision this node's copy did not reach within the wait. */
export const kRevisionNotReachedDetail =
  "This node's copy has not reached the revision the Flagwire-Min-Revision header asks for within the wait; nothing was read or changed. Retry after the time in Retry-After (another node may have it already).";
/** The 503 of a request that would wait while as many wait already as the node allows. */
export const kTooManyWaitingDetail =
  'As many requests as this node allows already wait for a revision (Flagwire-Min-Revision); nothing was read or changed. Retry after a second.';

/**
 * A Flagwire-Min-Revision value as sent ('' when absent): 0 when absent (every store is at revision 0
 * or later, so it is always met), the revision asked for, or kInvalidMinRevision.
 */
export function minRevisionOf(raw: string): number {
  if (raw === '') return 0;
  return /^\d{1,15}$/.test(raw) ? Number(raw) : kInvalidMinRevision;
}

/** minRevisionOf for a pipeline that throws its refusals: INVALID_REQUEST for a value that is not a revision. */
export function requireMinRevision(raw: string): number {
  const min = minRevisionOf(raw);
  if (min === kInvalidMinRevision) throw new FlagwireError('INVALID_REQUEST', kInvalidMinRevisionDetail);
  return min;
}

export interface RevisionWaiterOptions {
  /** This thread's revision now: renews its store snapshot and reads it. */
  current(): number;
  /** How long a request waits for its revision at most (ms); 0: until the next read (pollMs). */
  waitMs: number;
  /** Requests waiting at most; beyond, wait() refuses. */
  maxWaiting: number;
  /** How often the revision is read while requests wait (ms). */
  pollMs?: number;
}

interface Waiting {
  readonly min: number;
  readonly deadline: number;
  readonly then: (reached: boolean) => void;
}

/** How often the revision is read while requests wait: well under the replication lag's tail (deployment.md). */
const kPollMs = 5;

/** One front end's waits for revisions (every route of the thread shares it, and its bound). */
export class RevisionWaiter {
  /** The highest revision this thread has seen: a request asking for no more is served at once, without a read. */
  private known = 0;
  /** In arrival order, so in deadline order. */
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly options: RevisionWaiterOptions) {}

  /** Requests waiting now. */
  get size(): number {
    return this.waiting.length;
  }

  /** The highest revision this thread has seen (answers computed from no snapshot name it). */
  get latest(): number {
    return this.known;
  }

  /** Notes a revision an answer was computed at (an evaluation batch's): it is this node's, or older. */
  saw(revision: number): void {
    if (revision > this.known) this.known = revision;
  }

  /** Whether this node's copy has `min` now: free when an answer at `min` or later was seen, else one read. */
  has(min: number): boolean {
    if (min <= this.known) return true;
    this.saw(this.options.current());
    return min <= this.known;
  }

  /**
   * Calls `then(true)` once this node's copy has `min`, or `then(false)` when the wait runs out (or the
   * front end closes); never synchronously. False, and `then` is never called, when as many requests
   * wait already as the bound allows: the caller refuses the request at once.
   */
  wait(min: number, then: (reached: boolean) => void): boolean {
    if (this.waiting.length >= this.options.maxWaiting) return false;
    this.waiting.push({ min, deadline: performance.now() + this.options.waitMs, then });
    this.timer ??= setInterval(() => this.poll(), this.options.pollMs ?? kPollMs);
    return true;
  }

  /** Answers every waiting request as not reached (shutdown). */
  close(): void {
    this.settle(-1, Number.POSITIVE_INFINITY);
  }

  private poll(): void {
    let revision: number;
    try {
      revision = this.options.current();
    } catch {
      // An unreadable store answers nothing now; the deadlines still run out.
      revision = -1;
    }
    this.saw(revision);
    this.settle(revision, performance.now());
  }

  /** Answers those `revision` reaches (true) and those past their deadline at `now` (false). */
  private settle(revision: number, now: number): void {
    const settled: [Waiting, boolean][] = [];
    const kept: Waiting[] = [];
    for (const w of this.waiting) {
      if (w.min <= revision) settled.push([w, true]);
      else if (w.deadline <= now) settled.push([w, false]);
      else kept.push(w);
    }
    this.waiting = kept;
    if (kept.length === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
    // After the list is updated: an answer may start another wait.
    for (const [w, reached] of settled) w.then(reached);
  }
}

/**
 * The headers that name `revision` on an answer written with send() (src/http/http.ts): the value, and
 * its exposure to browsers (CORS lets a page read only the headers a response exposes); then `more`.
 */
export function revisionHeaders(revision: number, ...more: (readonly [string, string])[]): (readonly [string, string])[] {
  return [[kRevisionHeader, String(revision)], ['Access-Control-Expose-Headers', kRevisionHeader], ...more];
}
