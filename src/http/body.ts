// Reads request bodies with two bounds: 1 MiB per body (or the caller's smaller cap: an evaluation body's,
// src/evaluation/engine/context-bounds.ts), and one byte budget for the whole process.
//
// Every body reserves its bytes from the budget before they are buffered: the declared Content-Length
// up front (a request that does not fit is refused before anything of its body is read), a body without
// one (chunked) as its chunks arrive. Without the budget, each connection could hold up to 1 MiB
// and the only ceiling was the open-file limit (issue 13: 2,000 connections that each sent most of a
// 1 MiB body and waited held gigabytes). The reservation is released once: when the body's consumer is done
// with it, when the body is refused, or when the client goes away.
//
// Slow senders need nothing here: uWS closes a connection whose body brings less than 160 KiB in its
// 10 s idle timeout (HTTP_RECEIVE_THROUGHPUT_BYTES, 16 KiB/s), which runs onAborted and so releases
// the reservation (docs/operations.md: Request bodies).
import { FlagwireError } from '../errors.js';
import { trackAbort, type PendingResponse } from './http.js';
import { RateLimiter, type RateLimiterState } from './rate-limit.js';
import { kMaxBodyBytes } from './json-bounds.js';

export { kMaxBodyBytes };

export type BodyResult =
  /**
   * `release()` hands the body's bytes back to the budget, and its memory to the system: call it once
   * the body is no longer used (it may be emptied then).
   */
  | { ok: true; body: Buffer; release: () => void }
  /**
   * `tooLarge`: over the cap (413). `busy`: the budget cannot take it now (503). `closes`: the rest of the
   * body is still to come and will not be drained, so the answer closes the connection (see kDrainBytes).
   */
  | { ok: false; reason: 'tooLarge' | 'busy'; closes: boolean };

/**
 * Node 20 has ES2024's resizable ArrayBuffer; the ES2022 library this project compiles against does
 * not describe it.
 */
interface ResizableArrayBuffer extends ArrayBuffer {
  readonly resizable: boolean;
  resize(byteLength: number): void;
}
const ResizableArrayBuffer = ArrayBuffer as unknown as new (byteLength: number, options: { maxByteLength: number }) => ResizableArrayBuffer;

/**
 * A refused body of a declared length up to this is drained (uWS reads and drops it) and its connection
 * kept; a longer one, or one of unknown length (chunked) refused before its end, closes the connection
 * after the answer. Why drain: a connection closed with bytes of the client's body still unread is reset
 * (RST), and a client still sending loses the answer that was already on its way: the OFREP events route
 * answered 1 MiB + 1 byte with a 413 that one client in twelve saw as EPIPE (docs/decisions.md: A refused
 * body is drained). Draining keeps nothing in memory; the bound keeps what a client can make us read.
 */
export const kDrainBytes = 16 * 1024 * 1024;

/**
 * Whether a request answered before any of its body is read closes its connection after the answer:
 * when the body's length is not declared (chunked: its end is unknown) or is past kDrainBytes. Otherwise
 * uWS drains the body and the connection serves the client's next request. `contentLength` is the raw
 * header ('' when absent).
 */
export function closesUnread(contentLength: string): boolean {
  return contentLength === '' || Number(contentLength) > kDrainBytes;
}

const kTooLargeDrained: BodyResult = { ok: false, reason: 'tooLarge', closes: false };
const kTooLargeClosed: BodyResult = { ok: false, reason: 'tooLarge', closes: true };
const kBusyDrained: BodyResult = { ok: false, reason: 'busy', closes: false };
const kBusyClosed: BodyResult = { ok: false, reason: 'busy', closes: true };

/**
 * The answer to a body that was not read, one wording per case for the Management API and the web
 * console (OFREP answers in its own envelope): 413 over the cap, 503 while the budget is spent. The
 * caller closes the connection after this answer when the result `closes`.
 */
export function bodyRefusal(reason: 'tooLarge' | 'busy'): FlagwireError {
  return reason === 'busy'
    ? new FlagwireError(
        'SERVER_BUSY',
        'The server is buffering as many request bodies as it allows; this body was not read and nothing was changed. Retry after a second.',
      )
    : new FlagwireError('PAYLOAD_TOO_LARGE', `The request body is larger than ${kMaxBodyBytes} bytes (1 MiB); send a smaller body.`);
}

/**
 * The body's bytes as its consumer's own, for a consumer that keeps them past release() or hands them
 * to another thread (the writer's, the plan thread's), which then gets them moved, not copied
 * (movableBuffers, src/model/request-body.ts). A body of one chunk of 4 KiB or more already owns its
 * whole ArrayBuffer and is taken as it is; any other is copied once, exactly: a smaller one is a view
 * into Buffer's shared 8 KiB pool (structured clone would send the whole pool, other requests' bytes
 * included, and it cannot be moved), one of several chunks lives in the reader's store, which
 * release() empties.
 */
export function keepBody(body: Buffer): Uint8Array {
  const whole = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
  if (whole && !(body.buffer as ResizableArrayBuffer).resizable) return new Uint8Array(body.buffer, 0, body.byteLength);
  return new Uint8Array(body);
}

/** The reserved bytes and the refusals of a budget, shared by every front-end thread (BigInt64: budgets reach 1 TiB). */
const kReserved = 0;
const kRefused = 1;

/** A budget's size and shared memory: cloned to every front-end thread, which attaches to it. */
export interface BodyBudgetState {
  readonly maxBytes: number;
  /** Two BigInt64: reserved bytes, refused requests. */
  readonly counts: SharedArrayBuffer;
}

export class BodyBudget {
  readonly maxBytes: number;
  /** [reserved bytes, refused requests], in shared memory: the budget is the process's, whichever thread reads. */
  private readonly counts: BigInt64Array;

  /** A new budget of `maxBytes`, in new shared memory. */
  static create(maxBytes: number): BodyBudget {
    return new BodyBudget({ maxBytes, counts: new SharedArrayBuffer(16) });
  }

  /** One more handle on a budget's shared `state`. */
  constructor(readonly state: BodyBudgetState) {
    this.maxBytes = state.maxBytes;
    this.counts = new BigInt64Array(state.counts);
  }

  /** Bytes reserved now by bodies being read or held. */
  get bytes(): number {
    return Number(Atomics.load(this.counts, kReserved));
  }

  /** Requests refused because the budget was spent. */
  get refused(): number {
    return Number(Atomics.load(this.counts, kRefused));
  }

  /**
   * Reads `res`'s body and calls `done` once, unless the client goes away first. Attaches the response's
   * abort handler (uWS keeps one per response): `onAbort` runs from it too. `contentLength` is the raw
   * header ('' when absent). `maxBytes`: the cap, at most the spec's 1 MiB.
   */
  read(
    res: PendingResponse,
    contentLength: string,
    done: (result: BodyResult) => void,
    onAbort?: () => void,
    maxBytes = kMaxBodyBytes,
  ): void {
    let held = 0;
    let finished = false;
    // A body of more than one chunk is copied into one resizable ArrayBuffer (see below).
    let store: ResizableArrayBuffer | null = null;
    const release = () => {
      if (held > 0) Atomics.sub(this.counts, kReserved, BigInt(held));
      held = 0;
      store?.resize(0);
    };
    trackAbort(res, () => {
      finished = true;
      release();
      onAbort?.();
    });
    // From here the reader decides: its refusals say whether they close (`closes`), and a body read
    // whole leaves nothing unread.
    res.unreadBodyCloses = false;
    const declared = contentLength === '' ? 0 : Number(contentLength);
    if (declared > maxBytes) {
      finished = true;
      done(closesUnread(contentLength) ? kTooLargeClosed : kTooLargeDrained);
      return;
    }
    if (declared > 0) {
      if (!this.reserve(declared)) {
        finished = true;
        done(kBusyDrained);
        return;
      }
      held = declared;
    }
    let size = 0;
    res.onData((chunk, isLast) => {
      if (finished) return;
      const at = size;
      size += chunk.byteLength;
      // Only a body of unknown length (chunked) gets here past its cap or its reservation: its end is
      // not known, so it is not drained unless this was its last chunk.
      let failure: BodyResult | null = null;
      if (size > maxBytes) failure = isLast ? kTooLargeDrained : kTooLargeClosed;
      else if (size > held && this.reserve(size - held)) held = size;
      else if (size > held) failure = isLast ? kBusyDrained : kBusyClosed;
      if (failure !== null) {
        finished = true;
        release();
        done(failure);
        return;
      }
      // Chunks are copied: uWS neuters them after this callback.
      if (isLast && store === null) {
        // One chunk (the usual case): one plain copy.
        finished = true;
        done({ ok: true, body: Buffer.from(new Uint8Array(chunk)), release });
        return;
      }
      // Why a resizable ArrayBuffer: resize(0) gives its pages back to the system at once (checked on
      // Node 20: RSS back to where it started). A body in ordinary Buffers stays in memory after its
      // client is gone until a major GC, which V8 starts only after much such garbage, so each wave of
      // abandoned bodies raised the peak.
      // It reserves address space only; pages are committed as the body grows.
      store ??= new ResizableArrayBuffer(0, { maxByteLength: declared > 0 ? declared : maxBytes });
      store.resize(size);
      new Uint8Array(store, at).set(new Uint8Array(chunk));
      if (isLast) {
        finished = true;
        done({ ok: true, body: Buffer.from(store, 0, size), release });
      }
    });
  }

  private reserve(bytes: number): boolean {
    const counts = this.counts;
    const more = BigInt(bytes);
    const max = BigInt(this.maxBytes);
    // Check and add as one step against the other threads: retry when another changed it in between.
    for (let now = Atomics.load(counts, kReserved); ; ) {
      if (now + more > max) {
        Atomics.add(counts, kRefused, 1n);
        return false;
      }
      const seen = Atomics.compareExchange(counts, kReserved, now, now + more);
      if (seen === now) return true;
      now = seen;
    }
  }
}

/**
 * The process's body budget in two shares, so that clients without a token cannot starve writes: the
 * credential-free routes (OFREP) draw on one, the Management API (which reads a body only after its
 * token was checked, behind the per-address limits) on the other. The Management API gets a quarter
 * of the whole, at least one body of the 1 MiB cap; the rest is the credential-free routes'.
 */
export interface BodyBudgetsState {
  readonly management: BodyBudgetState;
  readonly credentialFree: BodyBudgetState;
  readonly evalBytes: RateLimiterState;
}

/**
 * The window of each credential's evaluation body bytes: `limit` bytes in any second (the limiter's
 * bounds: at most `limit` in five sixths of its window), so a refused client is told to retry after one.
 */
const kEvalBytesWindowMs = 1200;

export class BodyBudgets {
  readonly credentialFree: BodyBudget;
  readonly management: BodyBudget;
  /**
   * Each credential's evaluation body bytes per second, those past an ordinary context's (an Unleash
   * front-end API POST's client key, an OFREP POST's client address: OFREP has no credential), taken
   * before the body is read
   * (src/evaluation/engine/queued-body.ts): one key sending large bodies fast is refused 429 past its share,
   * so it cannot spend the eval workers' time on parsing them, nor the credential-free share, that
   * every other key's requests need.
   */
  readonly evalBytes: RateLimiter;

  /**
   * `totalBytes`: at least two bodies of the cap (config.ts enforces it); `evalBytesPerSecond`: each
   * credential's evaluation body bytes per second. In new shared memory.
   */
  static create(totalBytes: number, evalBytesPerSecond: number): BodyBudgets {
    const management = Math.max(kMaxBodyBytes, Math.floor(totalBytes / 4));
    return new BodyBudgets({
      management: BodyBudget.create(management).state,
      credentialFree: BodyBudget.create(totalBytes - management).state,
      evalBytes: RateLimiter.create({ limit: evalBytesPerSecond, windowMs: kEvalBytesWindowMs }).state,
    });
  }

  /** One more handle on the budgets' shared `state`. */
  constructor(readonly state: BodyBudgetsState) {
    this.management = new BodyBudget(state.management);
    this.credentialFree = new BodyBudget(state.credentialFree);
    this.evalBytes = new RateLimiter(state.evalBytes);
  }

  /** Bytes reserved now, both shares. */
  get bytes(): number {
    return this.credentialFree.bytes + this.management.bytes;
  }

  /** Requests refused because their share was spent, both shares. */
  get refused(): number {
    return this.credentialFree.refused + this.management.refused;
  }
}
