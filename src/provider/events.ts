// FlagwireEvents: what an application sends back to Flagwire (issue 58, item 3; docs/events.md), for
// OpenFeature's server and web SDKs alike, with any provider whose answers say which are exposures:
// Flagwire's and the stock OFREP ones by `inExperiment`, the stock flagd ones by the variant (flagd's
// flag metadata is fixed per flag, so Flagwire's flag sets answer an exposure with a twin variant whose
// name ends in a marker: src/flags/flagd-flag.ts):
//
//   hook       an OpenFeature hook whose `after` stage records an exposure when an answer says it is one
//              (flag metadata `experimentKey` and either `inExperiment: true`, or a variant ending in the
//              marker `flagwireExposureMarker` names, sent without it), once per subject and experiment
//   track()    an outcome (FlagwireProvider's `track` calls it, so `client.track(...)` works there)
//
// Events are sent in batches to POST /ofrep/v1/events with a client key: when 1,000 are waiting, and at
// least every 10 s. A batch carries an id and is sent again under it while the server cannot be reached
// (or answers 429 or 5xx), so a batch whose answer was lost is counted once. At most `maxQueued` events
// wait; past that the oldest are dropped (and counted in `dropped`), so an application whose Flagwire is
// down for a day does not grow without end. `close()` keeps trying what waits for `closeTimeoutMs`, then
// drops and counts the rest. It imports nothing of Node's: browsers load it as it is.

/** What the hook reads of OpenFeature's hook context (the server and web SDKs' alike). */
interface HookContextLike {
  readonly flagKey: string;
  readonly context: { readonly targetingKey?: string };
}

/** What the hook reads of an evaluation's details. */
interface DetailsLike {
  readonly variant?: string;
  readonly flagMetadata?: Readonly<Record<string, unknown>>;
}

export interface FlagwireEventsOptions {
  /** The Flagwire server's base URL, e.g. https://flags.example.com. */
  url: string;
  /** A client key of the project with the `events` use (fwc_...): safe in a page, it can only send events. */
  clientKey: string;
  /** How long an event waits at most before its batch is sent (default and most: 10,000 ms). */
  flushIntervalMs?: number;
  /** Events per batch (default and most: 1,000): a full batch is sent at once. */
  maxBatch?: number;
  /** Events held at most while they cannot be sent (default 10,000); past it the oldest are dropped. */
  maxQueued?: number;
  /** Subject and experiment pairs remembered as exposed, so each is sent once (default 100,000; the oldest forgotten first). */
  rememberExposures?: number;
  /** How long close() keeps trying to send what waits (default 5,000 ms); what is left then is dropped. */
  closeTimeoutMs?: number;
  /** The fetch to send with (default: the global one). */
  fetch?: typeof fetch;
  /** Told of a batch the server refused (a 4xx other than 429: it is not sent again) or could not be reached. */
  onError?: (error: Error) => void;
}

interface Event {
  kind: 'exposure' | 'track';
  key: string;
  targetingKey: string;
  variant?: string;
  value?: number;
  details?: Record<string, string | number | boolean | null>;
  timestamp: number;
}

const kMaxBatch = 1000;
const kMaxFlushIntervalMs = 10_000;
const kCloseTimeoutMs = 5000;
/** close()'s first pause between tries, doubled each time up to the most. */
const kClosePauseMs = 100;
const kMaxClosePauseMs = 1000;
/** What the server keeps of `details`: flat values, this many entries, strings this long, this many bytes as JSON. */
const kMaxDetailEntries = 20;
const kMaxDetailLength = 256;
const kMaxDetailsBytes = 2048;
const kUtf8 = new TextEncoder();

export class FlagwireEvents {
  /** The OpenFeature hook: add it with `OpenFeature.addHooks(events.hook)` (or a client's addHooks). */
  readonly hook: { after(hookContext: HookContextLike, details: DetailsLike): void };
  private readonly endpoint: string;
  private readonly headers: Record<string, string>;
  private readonly maxBatch: number;
  private readonly maxQueued: number;
  private readonly remember: number;
  private readonly send: typeof fetch;
  private readonly onError: (error: Error) => void;
  /** Events not yet in a batch. */
  private queue: Event[] = [];
  /** Batches formed and not yet answered, oldest first, each kept under its id until the server has it. */
  private readonly batches: { batchId: string; events: Event[] }[] = [];
  /** Subject and experiment pairs already sent, and the same in a ring in the order sent: the oldest forgotten first. */
  private readonly exposed = new Set<string>();
  private readonly exposedOrder: string[] = [];
  private exposedNext = 0;
  private readonly timer: ReturnType<typeof setInterval>;
  private readonly batchPrefix = globalThis.crypto.randomUUID();
  private batchSeq = 0;
  /** The pass sending now, and the one to run after it for events that came meanwhile. */
  private flushing: Promise<void> | null = null;
  private nextFlush: Promise<void> | null = null;
  private readonly closeTimeoutMs: number;
  /** Aborts the request under way when close() gives up. */
  private readonly giveUp = new AbortController();
  private closed = false;
  /** Events dropped: because more than `maxQueued` were waiting, or still unsent when close() gave up. */
  dropped = 0;

  constructor(options: FlagwireEventsOptions) {
    this.endpoint = `${options.url.replace(/\/+$/, '')}/ofrep/v1/events`;
    this.headers = { authorization: `Bearer ${options.clientKey}`, 'content-type': 'application/json' };
    this.maxBatch = Math.min(Math.max(1, options.maxBatch ?? kMaxBatch), kMaxBatch);
    this.maxQueued = Math.max(this.maxBatch, options.maxQueued ?? 10 * kMaxBatch);
    this.remember = Math.max(1, options.rememberExposures ?? 100_000);
    this.closeTimeoutMs = Math.max(0, options.closeTimeoutMs ?? kCloseTimeoutMs);
    this.send = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.onError = options.onError ?? ((error) => console.warn(`Flagwire events: ${error.message}`));
    const every = Math.min(Math.max(1, options.flushIntervalMs ?? kMaxFlushIntervalMs), kMaxFlushIntervalMs);
    this.timer = setInterval(() => void this.flush(), every);
    // In Node, the timer alone does not keep the application running.
    (this.timer as { unref?: () => void }).unref?.();
    this.hook = { after: (hookContext, details) => this.exposure(hookContext, details) };
  }

  /** Records an outcome of the subject `context.targetingKey`: `name` is the metric, `details.value` its value (default 1). */
  track(name: string, context: { readonly targetingKey?: string }, details: Readonly<Record<string, unknown>> = {}): void {
    if (this.closed || context.targetingKey === undefined || context.targetingKey === '') return;
    const { value, ...rest } = details;
    this.add({
      kind: 'track',
      key: name,
      targetingKey: context.targetingKey,
      ...(typeof value === 'number' && Number.isFinite(value) ? { value } : {}),
      ...flatDetails(rest),
      timestamp: Date.now(),
    });
  }

  /**
   * Sends every waiting event now; settles when the server has every event recorded before the call, or
   * refused it, or could not take it (it then waits for the next try). While a send is under way, the
   * events recorded since go in one more pass after it, which every flush meanwhile shares.
   */
  flush(): Promise<void> {
    if (this.flushing === null) {
      this.flushing = this.sendAll().finally(() => {
        this.flushing = null;
      });
      return this.flushing;
    }
    this.nextFlush ??= this.flushing.then(() => {
      this.nextFlush = null;
      return this.flush();
    });
    return this.nextFlush;
  }

  /**
   * Stops the timer and sends what waits, trying again (with a pause) while the server cannot take it,
   * for `closeTimeoutMs` at most; what is still unsent then is dropped, counted in `dropped`, and said
   * to onError. Later events are ignored.
   */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    const deadline = Date.now() + this.closeTimeoutMs;
    const timer = setTimeout(() => this.giveUp.abort(), this.closeTimeoutMs);
    await this.flush();
    for (let pause = kClosePauseMs; this.waiting() > 0 && Date.now() + pause < deadline; pause = Math.min(2 * pause, kMaxClosePauseMs)) {
      await new Promise((resolve) => setTimeout(resolve, pause));
      await this.flush();
    }
    clearTimeout(timer);
    const unsent = this.waiting();
    if (unsent === 0) return;
    this.batches.length = 0;
    this.queue = [];
    this.dropped += unsent;
    this.onError(
      new Error(`${unsent} event(s) were dropped: Flagwire did not take them before close() gave up after ${this.closeTimeoutMs} ms`),
    );
  }

  private exposure(hookContext: HookContextLike, details: DetailsLike): void {
    const metadata = details.flagMetadata;
    const experiment = metadata?.experimentKey;
    const subject = hookContext.context.targetingKey;
    if (this.closed || typeof experiment !== 'string' || subject === undefined || subject === '') return;
    const variant = exposedVariant(details.variant, metadata!);
    if (variant === undefined) return;
    const pair = `${experiment}\u0000${subject}`;
    if (this.exposed.has(pair)) return;
    // A ring, not a Map's first key: V8 leaves a hole per entry deleted at a Map's front, which the next
    // first-key lookup walks over, so forgetting the oldest that way grew with every pair forgotten
    // (bench/events-hook.bench.ts; bench/RESULTS.md).
    const forgotten = this.exposedOrder[this.exposedNext];
    if (forgotten !== undefined) this.exposed.delete(forgotten);
    this.exposedOrder[this.exposedNext] = pair;
    this.exposedNext = (this.exposedNext + 1) % this.remember;
    this.exposed.add(pair);
    this.add({ kind: 'exposure', key: hookContext.flagKey, targetingKey: subject, variant, timestamp: Date.now() });
  }

  private add(event: Event): void {
    this.queue.push(event);
    if (this.waiting() > this.maxQueued) this.dropOldest();
    if (this.queue.length >= this.maxBatch) void this.flush();
  }

  private waiting(): number {
    return this.batches.reduce((n, batch) => n + batch.events.length, this.queue.length);
  }

  /** Drops the oldest batch that is not being sent (the first may be), else the oldest event of the queue. */
  private dropOldest(): void {
    if (this.batches.length > 1) this.dropped += this.batches.splice(1, 1)[0]!.events.length;
    else {
      this.queue.shift();
      this.dropped++;
    }
  }

  private async sendAll(): Promise<void> {
    while (this.queue.length > 0) {
      this.batches.push({ batchId: `${this.batchPrefix}-${++this.batchSeq}`, events: this.queue.splice(0, this.maxBatch) });
    }
    while (this.batches.length > 0) {
      const batch = this.batches[0]!;
      let status: number;
      try {
        const request = { method: 'POST', headers: this.headers, body: JSON.stringify(batch), signal: this.giveUp.signal };
        const answer = await this.send(this.endpoint, request);
        status = answer.status;
        if (status === 200) this.sayRejected((await answer.json()) as { rejected?: { index: number; reason: string }[] });
        else if (status >= 400 && status !== 429 && status < 500)
          this.onError(new Error(`a batch was refused (${status}): ${await answer.text()}`));
        else await answer.body?.cancel();
      } catch (err) {
        const again = this.closed ? 'tried again until close() gives up' : 'sent again later';
        this.onError(new Error(`Flagwire could not be reached (${(err as Error).message}); the batch is ${again}`));
        return;
      }
      // Busy or failing: sent again at the next flush, under the same id.
      if (status === 429 || status >= 500) return;
      this.batches.shift();
    }
  }

  /** Events of a counted batch the server refused (a field out of bounds, a flag without an experiment): said once per batch. */
  private sayRejected(answer: { rejected?: { index: number; reason: string }[] }): void {
    const rejected = answer.rejected ?? [];
    if (rejected.length > 0)
      this.onError(new Error(`${rejected.length} event(s) of a batch were refused, the first: ${rejected[0]!.reason}`));
  }
}

/**
 * The variant an answer exposed the subject to, or undefined when it is no exposure: OFREP's (and
 * FlagwireProvider's) say `inExperiment: true`; a flagd flag set's answers a twin variant, its name
 * ending in the marker the flag metadata names (src/model/flags.ts kExposureMarkerField), and the
 * variant is the name without it (the one the server knows).
 */
function exposedVariant(variant: string | undefined, metadata: Readonly<Record<string, unknown>>): string | undefined {
  if (variant === undefined) return undefined;
  if (metadata.inExperiment === true) return variant;
  const marker = metadata.flagwireExposureMarker;
  if (typeof marker !== 'string' || marker === '' || !variant.endsWith(marker)) return undefined;
  return variant.slice(0, -marker.length);
}

/** `details` as the server keeps them: flat values only, at most 20 entries, strings cut to 256 characters, 2 KiB as JSON. */
function flatDetails(details: Readonly<Record<string, unknown>>): { details?: Record<string, string | number | boolean | null> } {
  const kept: [string, string | number | boolean | null][] = [];
  let bytes = 2;
  for (const [name, raw] of Object.entries(details)) {
    const value = typeof raw === 'string' ? raw.slice(0, kMaxDetailLength) : raw;
    const flat =
      value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
    if (!flat || name.length > 64) continue;
    const size = kUtf8.encode(JSON.stringify([name, value])).length;
    if (kept.length === kMaxDetailEntries || bytes + size > kMaxDetailsBytes) break;
    kept.push([name, value]);
    bytes += size;
  }
  // fromEntries defines own properties: a detail named "__proto__" stays a detail.
  return kept.length === 0 ? {} : { details: Object.fromEntries(kept) };
}
