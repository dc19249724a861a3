// FlagwireProvider: an OpenFeature server provider that evaluates in-process with Flagwire's own engine
// (src/evaluation/engine, src/ofrep/answer.ts, src/targeting), so it answers exactly as the server's OFREP does, for
// every flag (design §2's modulo-bucketed ones included, which flagd's language cannot express).
//
//   initialize()   GET /v1/snapshots/{project}[?env=] once (initialTimeoutMs). Answered: READY. Not
//                  reachable: the snapshot file (snapshotPath), READY then PROVIDER_STALE with its age;
//                  no file either: rejects (ERROR; evaluations answer the default with
//                  PROVIDER_NOT_READY) and keeps trying, PROVIDER_READY once synced. A refusal (bad
//                  token, unknown project or environment) is PROVIDER_FATAL.
//   then           follows /v1/stream/project/{project}[?env=]: each event (and each connection's
//                  `ready`) refetches the snapshot with If-None-Match; a new one is compiled and swapped
//                  in at once, PROVIDER_CONFIGURATION_CHANGED names the flags it changed (ids and names),
//                  and it is saved to snapshotPath atomically. A lost stream reconnects with backoff; the
//                  server unreachable is PROVIDER_STALE (the snapshot's age in the message), synced again
//                  PROVIDER_READY. Every 5 minutes it refetches anyway: a plan's end changes
//                  `audiencesAllowed` without an event.
//
// Evaluations never wait on the network: they read the compiled snapshot in memory, synchronously.
// Each is counted by flag and variant and reported to the server as flag usage (usage-reporter.ts), in
// batches once a minute and at close, unless `usage: false`.
// Memory is one compiled snapshot (the previous one only while a change is diffed).
import {
  type EvaluationContext,
  type JsonValue,
  type Logger,
  OpenFeatureEventEmitter,
  type Provider,
  ProviderEvents,
  ProviderFatalError,
  type ResolutionDetails,
  type TrackingEventDetails,
} from '@openfeature/server-sdk';
import { OfrepContext } from '../ofrep/context.js';
import type { Snapshot } from '../model/snapshot-shape.js';
import { followChanges } from './change-stream.js';
import type { FlagwireEvents } from './events.js';
import { changedFlags, type CompiledSnapshot, compileSnapshot } from './compile.js';
import { resolveFlag } from './resolve.js';
import { fetchSnapshot, SnapshotRefused, type SnapshotSource } from './snapshot-client.js';
import { type UsageCounts, UsageReporter } from './usage-reporter.js';
import { readSnapshotFile, writeSnapshotFile } from './snapshot-file.js';

export interface FlagwireProviderOptions {
  /** The Flagwire server's base URL, e.g. http://flagwire.internal:8080. */
  url: string;
  /** A read token of the project (fw_...); an environment-limited token must allow `environment`. */
  token: string;
  /** The project's id. */
  project: string;
  /** The environment to evaluate (a multi-environment project); omit or null for a single-environment project. */
  environment?: string | null;
  /** Where the last snapshot is kept (a file path), to start from when the server is unreachable; null: not kept. */
  snapshotPath?: string | null;
  /** How long initialize() waits for the server before starting from the snapshot file (default 5000 ms). */
  initialTimeoutMs?: number;
  /** Where failures to save the snapshot file are reported (default: console). */
  logger?: Pick<Logger, 'warn'>;
  /**
   * Where `client.track(...)` sends outcomes (src/provider/events.ts); absent: track does nothing. Add its
   * `hook` too (OpenFeature.addHooks) for the exposures.
   */
  events?: FlagwireEvents;
  /**
   * How the provider's evaluations are reported to the server as flag usage (docs/provider.md: Usage),
   * so flags evaluated only in-process do not look unused; false: not counted, not reported.
   */
  usage?: FlagwireUsageOptions | false;
}

/** The usage reports' settings (docs/provider.md: Usage). */
export interface FlagwireUsageOptions {
  /** How often the counts are sent (default 60,000 ms). */
  flushIntervalMs?: number;
  /** Flag and variant pairs counted per interval at most (default and most 10,000); past them evaluations are dropped, counted. */
  maxKeys?: number;
  /** Unanswered batches kept to send again at most (default 60); past them the oldest is dropped, counted. */
  maxPendingBatches?: number;
  /** How long close() tries to send what is counted (default 5,000 ms). */
  closeTimeoutMs?: number;
}

const kFetchTimeoutMs = 30_000;
const kRefreshEveryMs = 5 * 60_000;
const kMinBackoffMs = 500;
const kMaxBackoffMs = 30_000;

export class FlagwireProvider implements Provider {
  readonly metadata = { name: 'flagwire' } as const;
  readonly runsOn = 'server' as const;
  // Written out: the package's declarations are made file by file (scripts/pack-provider.mjs), without inference.
  readonly events: OpenFeatureEventEmitter = new OpenFeatureEventEmitter();
  private readonly source: SnapshotSource;
  private readonly snapshotPath: string | null;
  private readonly initialTimeoutMs: number;
  private readonly logger: Pick<Logger, 'warn'>;
  /** What every evaluation reads: replaced whole, never changed in place. */
  private current: CompiledSnapshot | null = null;
  private etag: string | null = null;
  /** When the snapshot in use was fetched from the server (or saved, when it came from the file). */
  private syncedAt = 0;
  /** Whether the SDK was last told STALE (or not READY): the next sync says READY. */
  private behind = false;
  private readonly ctx = new OfrepContext();
  private readonly stop = new AbortController();
  private refreshing = false;
  private refreshAgain = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private retries = 0;
  private periodic: NodeJS.Timeout | null = null;
  private saving: Promise<void> = Promise.resolve();
  private following: Promise<void> | null = null;
  private readonly eventsOut: FlagwireEvents | null;
  private readonly usage: UsageReporter | null;
  /** Where each evaluation is counted (the reporter's): null when usage is off. */
  private readonly counts: UsageCounts | null;

  constructor(options: FlagwireProviderOptions) {
    this.source = { url: options.url, token: options.token, project: options.project, environment: options.environment ?? null };
    this.snapshotPath = options.snapshotPath ?? null;
    this.initialTimeoutMs = options.initialTimeoutMs ?? 5000;
    this.logger = options.logger ?? console;
    this.eventsOut = options.events ?? null;
    this.usage = options.usage === false ? null : new UsageReporter(this.source, options.usage ?? {}, this.logger);
    this.counts = this.usage?.counts ?? null;
  }

  /** Evaluations counted and never reported as usage: past the bounds (usage options), or refused by the server. */
  get usageDropped(): number {
    return this.usage?.dropped ?? 0;
  }

  /** Sends the usage counted so far now; true when the server has every batch (false: they are sent again later). */
  flushUsage(): Promise<boolean> {
    return this.usage?.flush() ?? Promise.resolve(true);
  }

  /** OpenFeature's tracking API: an outcome of the context's subject, sent with the events (options.events). */
  track(trackingEventName: string, context: EvaluationContext, trackingEventDetails: TrackingEventDetails): void {
    this.eventsOut?.track(trackingEventName, context, trackingEventDetails);
  }

  async initialize(): Promise<void> {
    let unreachable: unknown = null;
    try {
      const answer = await fetchSnapshot(this.source, null, this.initialTimeoutMs);
      if (answer.modified) this.install(answer.snapshot, answer.etag, Date.now(), true);
    } catch (err) {
      if (err instanceof SnapshotRefused) throw new ProviderFatalError(err.message);
      unreachable = err;
    }
    this.startFollowing();
    if (unreachable === null) return;
    const saved = this.snapshotPath === null ? null : await readSnapshotFile(this.snapshotPath);
    // Synced while the file was read: nothing is stale.
    if (this.current !== null) return;
    this.behind = true;
    if (saved === null || !this.matchesSource(saved.snapshot)) {
      throw new Error(
        `Flagwire at ${this.source.url} is unreachable (${describe(unreachable)}) and there is no snapshot file` +
          `${this.snapshotPath === null ? ' (no snapshotPath)' : ` at ${this.snapshotPath}`}: evaluations answer the default ` +
          '(PROVIDER_NOT_READY) until the server answers; PROVIDER_READY follows.',
      );
    }
    this.install(saved.snapshot, saved.etag, saved.savedAt, false);
    // After initialize() resolves (the SDK then says READY): the answers are the file's, of some age.
    setImmediate(() => {
      if (this.behind) this.announceStale(`Flagwire at ${this.source.url} is unreachable (${describe(unreachable)})`);
    });
  }

  async onClose(): Promise<void> {
    this.stop.abort();
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    if (this.periodic !== null) clearInterval(this.periodic);
    await this.following;
    await this.saving;
    await this.usage?.close();
  }

  async resolveBooleanEvaluation(flagKey: string, defaultValue: boolean, context: EvaluationContext): Promise<ResolutionDetails<boolean>> {
    return resolveFlag(this.current, this.ctx, flagKey, 'boolean', defaultValue, context, Date.now(), this.counts);
  }

  async resolveStringEvaluation(flagKey: string, defaultValue: string, context: EvaluationContext): Promise<ResolutionDetails<string>> {
    return resolveFlag(this.current, this.ctx, flagKey, 'string', defaultValue, context, Date.now(), this.counts);
  }

  async resolveNumberEvaluation(flagKey: string, defaultValue: number, context: EvaluationContext): Promise<ResolutionDetails<number>> {
    return resolveFlag(this.current, this.ctx, flagKey, 'number', defaultValue, context, Date.now(), this.counts);
  }

  async resolveObjectEvaluation<T extends JsonValue>(
    flagKey: string,
    defaultValue: T,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<T>> {
    return resolveFlag(this.current, this.ctx, flagKey, 'object', defaultValue, context, Date.now(), this.counts);
  }

  /** The revision of the snapshot in use (null before the first); what the snapshot file holds once saved. */
  get revision(): number | null {
    return this.current?.revision ?? null;
  }

  private matchesSource(snapshot: Snapshot): boolean {
    return snapshot.projectId === this.source.project && snapshot.environment === this.source.environment;
  }

  /** Swaps in `snapshot`; `fromServer`: saves it, and a change is announced. */
  private install(snapshot: Snapshot, etag: string | null, syncedAt: number, fromServer: boolean): void {
    const compiled = compileSnapshot(snapshot);
    const before = this.current;
    this.current = compiled;
    this.etag = etag;
    this.syncedAt = syncedAt;
    if (!fromServer) return;
    this.save(snapshot, etag, syncedAt);
    if (before === null) return;
    const flagsChanged = changedFlags(before, compiled);
    if (flagsChanged.length > 0) {
      this.events.emit(ProviderEvents.ConfigurationChanged, { flagsChanged, message: `Revision ${compiled.revision}.` });
    }
  }

  /** One write at a time, in order: the file ends as the last snapshot. */
  private save(snapshot: Snapshot, etag: string | null, savedAt: number): void {
    const path = this.snapshotPath;
    if (path === null) return;
    this.saving = this.saving
      .then(() => writeSnapshotFile(path, { savedAt, etag, snapshot }))
      .catch((err: unknown) => this.logger.warn(`Flagwire provider: the snapshot file ${path} could not be written: ${describe(err)}`));
  }

  private startFollowing(): void {
    this.following = this.follow();
    this.periodic = setInterval(() => this.refresh(), kRefreshEveryMs);
    this.periodic.unref();
  }

  /** The change stream, reconnected with backoff until onClose(). */
  private async follow(): Promise<void> {
    const { signal } = this.stop;
    let failures = 0;
    while (!signal.aborted) {
      let opened = false;
      try {
        await followChanges(
          this.source,
          signal,
          () => {
            opened = true;
            failures = 0;
          },
          () => this.refresh(),
        );
      } catch (err) {
        if (signal.aborted) return;
        // Not even connected: the server is unreachable, and answers may fall behind from now on.
        if (!opened) this.markStale(`Flagwire at ${this.source.url} is unreachable (${describe(err)})`);
      }
      if (signal.aborted) return;
      failures++;
      await sleep(backoffMs(failures), signal);
    }
  }

  /** Refetches the snapshot (If-None-Match); requests made meanwhile are coalesced into one more fetch. */
  private refresh(): void {
    if (this.stop.signal.aborted) return;
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = true;
    void this.fetchLoop();
  }

  private async fetchLoop(): Promise<void> {
    do {
      this.refreshAgain = false;
      try {
        const answer = await fetchSnapshot(this.source, this.etag, kFetchTimeoutMs);
        if (this.stop.signal.aborted) break;
        if (answer.modified) this.install(answer.snapshot, answer.etag, Date.now(), true);
        else this.syncedAt = Date.now();
        this.retries = 0;
        this.markSynced();
      } catch (err) {
        if (this.stop.signal.aborted) break;
        if (err instanceof SnapshotRefused) {
          this.behind = true;
          this.events.emit(ProviderEvents.Error, { message: err.message });
        } else this.markStale(`The snapshot could not be fetched (${describe(err)})`);
        this.retryLater();
      }
    } while (this.refreshAgain && !this.stop.signal.aborted);
    this.refreshing = false;
  }

  /** A failed fetch is tried again with backoff, even if no event comes. */
  private retryLater(): void {
    if (this.retryTimer !== null) return;
    this.retries++;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.refresh();
    }, backoffMs(this.retries));
    this.retryTimer.unref();
  }

  /** The first failure since the last sync says STALE; before any snapshot there is nothing to be stale. */
  private markStale(why: string): void {
    if (this.current === null || this.behind) return;
    this.behind = true;
    this.announceStale(why);
  }

  private announceStale(why: string): void {
    const current = this.current!;
    const ageSeconds = Math.max(0, Math.round((Date.now() - this.syncedAt) / 1000));
    this.events.emit(ProviderEvents.Stale, {
      message: `${why}: answering from the snapshot of revision ${current.revision}, ${ageSeconds} s old (synced at ${new Date(this.syncedAt).toISOString()}).`,
    });
  }

  private markSynced(): void {
    if (!this.behind) return;
    this.behind = false;
    this.events.emit(ProviderEvents.Ready, { message: `Synced with Flagwire at revision ${this.current?.revision}.` });
  }
}

function backoffMs(failures: number): number {
  const base = Math.min(kMaxBackoffMs, kMinBackoffMs * 2 ** Math.min(failures - 1, 10));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    return cause instanceof Error ? `${err.message}: ${cause.message}` : err.message;
  }
  return String(err);
}
