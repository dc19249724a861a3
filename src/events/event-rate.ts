// How many events a project may send (docs/events.md: Limits): a token bucket per project that holds
// one second of its rate and refills continuously, so a client sending at the rate is never refused, a
// burst of up to a second's worth passes, and a flood is refused with how long to wait. The events thread
// of each front-end thread keeps its own buckets with its share of the rate (the process's rate divided
// by the front-end threads): uWS hands connections to the threads in turn, so a project's share is the
// rate whichever thread its clients reach. A batch is admitted or refused whole: half a batch counted would have its retry count
// the other half twice.
import { FlagwireError } from '../errors.js';

interface Bucket {
  tokens: number;
  at: number;
  /** The events of the project's last batch, when the rate refused it (0 once a batch passes). */
  refused: number;
}

export class EventRate {
  private readonly perMs: number;
  private readonly capacity: number;
  /** One bucket per project that sent events: as many as the node has projects at most. */
  private readonly buckets = new Map<string, Bucket>();

  /** `perSecond`: the process's rate per project; `threads`: the front-end threads sharing it. */
  constructor(
    private readonly perSecond: number,
    threads: number,
  ) {
    this.capacity = perSecond / threads;
    this.perMs = this.capacity / 1000;
  }

  /** Takes `events` from `projectId`'s bucket at `now`: 0, or the seconds to wait before the batch would pass (nothing taken). */
  take(projectId: string, events: number, now: number): number {
    const bucket = this.refilled(projectId, now);
    // A batch larger than the bucket (a thread's share of a low rate: 1,000 a second over 8 front-end
    // threads is 125) passes when the bucket is full and leaves it owing the rest, repaid at the rate:
    // else a full batch could never pass, and its client would resend it for ever.
    if (events <= bucket.tokens || bucket.tokens >= this.capacity) {
      bucket.tokens -= events;
      bucket.refused = 0;
      return 0;
    }
    bucket.refused = events;
    return this.wait(bucket, events);
  }

  /**
   * 0 while `projectId` may send a batch at `now`, else the seconds until it may (nothing taken): a batch
   * is refused by this before it is read, so that a flood past the rate costs the node no parsing. Its
   * size is not known before it is read, so it is taken to be one event, or, after the rate refused the
   * project's last batch, that batch's size until one passes: a flooding client sends the same batches
   * again at once (refused only after parsing, such a flood kept the node's cores busy), while
   * a client that waits the Retry-After (a second at least) finds the bucket refilled.
   */
  exhausted(projectId: string, now: number): number {
    const bucket = this.refilled(projectId, now);
    const needed = this.needed(bucket);
    return bucket.tokens >= needed ? 0 : this.wait(bucket, needed);
  }

  /**
   * When (ms) exhausted() stops refusing `projectId`, as its bucket stands (refilled at the last check):
   * what the front end is told after a refusal by the rate, to refuse the project's next batches itself
   * until then (refused-keys.ts). Its Retry-After is the one exhausted() gives.
   */
  refusedUntil(projectId: string): number {
    const bucket = this.buckets.get(projectId);
    if (bucket === undefined) return 0;
    const needed = this.needed(bucket);
    return bucket.tokens >= needed ? bucket.at : bucket.at + (needed - bucket.tokens) / this.perMs;
  }

  /** What the bucket must hold before a batch is read: never more than it can hold, or a batch past a second's worth would shut its project out for good. */
  private needed(bucket: Bucket): number {
    return Math.min(Math.max(1, bucket.refused), this.capacity);
  }

  private refilled(projectId: string, now: number): Bucket {
    let bucket = this.buckets.get(projectId);
    if (bucket === undefined) {
      bucket = { tokens: this.capacity, at: now, refused: 0 };
      this.buckets.set(projectId, bucket);
    }
    bucket.tokens = Math.min(this.capacity, bucket.tokens + (now - bucket.at) * this.perMs);
    bucket.at = now;
    return bucket;
  }

  private wait(bucket: Bucket, events: number): number {
    return Math.max(1, Math.ceil((Math.min(events, this.capacity) - bucket.tokens) / this.perMs / 1000));
  }

  /** The refusal of a batch that must wait `seconds`. */
  refusal(seconds: number): FlagwireError {
    return rateRefusal(this.perSecond, seconds);
  }
}

/** The refusal of a batch past a rate of `perSecond` events a second, to send again after `seconds`: the events thread's and the front end's. */
export function rateRefusal(perSecond: number, seconds: number): FlagwireError {
  return new FlagwireError(
    'TOO_MANY_EVENTS',
    `This project's clients sent more than ${perSecond} events a second; nothing of this batch was counted. Send it again after ${seconds} s (Retry-After), under the same batch id.`,
  );
}
