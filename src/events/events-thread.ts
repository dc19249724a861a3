// The events thread: where a front end's batches of events are read (inflated, parsed, checked), their
// exposures resolved against the flags, and counted in the tally file, so that none of it holds the
// front end's thread, which writes the evaluations' answers. With everything on the front end's thread,
// an evaluation that arrived behind a batch waited for it, and at the issue's rate the evaluations' p99
// was past its bound (bench/RESULTS.md, events.bench). An experiment's statistics are read here too
// (the statistics and results routes, a release plan's experiment guard), and a JSON-lines export's pages
// read and written (export.ts), for the same reason. One per
// front-end thread, started with its first batch or read (event-counter.ts), so a node that is never
// sent an event nor asked for statistics never starts it.
import { parentPort, workerData } from 'node:worker_threads';
import type { ClientKey } from '../client-keys/client-key.js';
import { type ErrorCode, FlagwireError } from '../errors.js';
import { LmdbStore } from '../store/lmdb-store.js';
import { kTestSwitches } from '../test-switches.js';
import { readEventsBody } from './body.js';
import { readEventBatch } from './event-batch.js';
import { EventRate } from './event-rate.js';
import { type JsonLinesPage, jsonLinesPage } from './export.js';
import { readGoffCollectorBatch } from './goff-collector.js';
import { countBatch, type EventsAnswer, resolveBatch, StorageFull, type StorageLimits, tallyScope } from './receive.js';
import type { ExperimentTally, RawCursor, RawRange, TallyScope } from './tally/tally-file.js';
import type { ReadBatch } from './schemas.js';
import { statisticsView } from './statistics.js';
import { TallyWrites } from './tally-writes.js';

export interface EventsThreadData {
  dataDir: string;
  /** PostgreSQL's URL on a node that shares one: the batches are counted there (tally-writes.ts). */
  databaseUrl: string | null;
  /** The process's rate per project (FLAGWIRE_EVENTS_PER_SECOND) and the front-end threads sharing it. */
  eventsPerSecond: number;
  httpThreads: number;
  /** The storage limits (FLAGWIRE_EVENT_SUBJECTS_PER_ENVIRONMENT, FLAGWIRE_RAW_EVENT_BYTES_PER_PROJECT). */
  limits: StorageLimits;
  /** Events threads its front end started before this one (after one died: event-counter.ts). */
  startedBefore: number;
}

/** The bodies the events routes take: Flagwire's batch, and GO Feature Flag's collector body. */
const kReaders = {
  ofrep: readEventBatch,
  goff: readGoffCollectorBatch,
} satisfies Record<string, (body: Readonly<Record<string, unknown>>, now: number) => ReadBatch>;
export type BatchFormat = keyof typeof kReaders;

/** A batch as the front end received it, with the client key that sent it (already granted the events use). */
export interface ReceivedBatch {
  format: BatchFormat;
  bytes: Uint8Array;
  contentEncoding: string;
  contentType: string;
  key: ClientKey;
  now: number;
}

/** A received batch on its way to the events thread, with the id its reply names. */
export interface BatchRequest extends ReceivedBatch {
  id: number;
}

/**
 * A refusal as it crosses back: the error's code and detail, the seconds of Retry-After, if any, and,
 * for a refusal by the rate, when (ms) the project's next batch would be read: until then its front
 * end refuses the key's batches before reading them (refused-keys.ts).
 */
export interface BatchRefusal {
  code: ErrorCode;
  detail: string;
  retryAfter: number | null;
  refusedUntil: number | null;
}

export type BatchReply =
  | { id: number; answer: EventsAnswer }
  | { id: number; refusal: BatchRefusal }
  /** Something the client did not cause (the front end logs it and answers 500). */
  | { id: number; failure: string };

/**
 * A read of an experiment's statistics, with the id its reply names: read here, never on the front end's
 * thread, which would answer no evaluation while it reads. Either the arms and sums of `metrics` (null:
 * every metric), or, with `view`, the statistics route's answer as JSON text (statistics.ts), every
 * metric's: made here too, so the front end only sends it.
 */
export interface StatisticsRequest {
  id: number;
  statistics: {
    scope: TallyScope;
    experiment: string;
    metrics: readonly string[] | null;
    /** The environment the view names (null: a project without environments); null: the sums as stored. */
    view: { environment: string | null } | null;
  };
}

/**
 * A page of a raw-events export (JSON lines, also what a Parquet export is written from), with the id
 * its reply names: read and written here, so the front end only sends its bytes.
 */
export interface ExportPageRequest {
  id: number;
  exportPage: { scope: TallyScope; range: RawRange; after: RawCursor | null };
}

/** What the front end sends: a batch, a read, a page of an export, or the word to close (every one is answered by then). */
export type EventsThreadMessage = BatchRequest | StatisticsRequest | ExportPageRequest | 'close';

/** A read's answer: the experiment's arms and sums as stored, or the statistics view's JSON text. */
export type StatisticsReply = { id: number; tally: ExperimentTally } | { id: number; json: string };

/** A page of an export as JSON lines; its bytes' buffer is moved to the front end, not copied. */
export interface ExportPageReply {
  id: number;
  page: JsonLinesPage;
}

const start = workerData as EventsThreadData;
const port = parentPort!;
// Exposures name flags: resolved in the node's local copy, as an evaluation worker reads it (a node on
// PostgreSQL has one too).
const store = LmdbStore.open(start.dataDir, { readOnly: true });
const writes = new TallyWrites(start);
const rate = new EventRate(start.eventsPerSecond, start.httpThreads);

async function receive(request: BatchRequest): Promise<EventsAnswer | BatchRefusal> {
  const { projectId } = request.key;
  const exhausted = rate.exhausted(projectId, request.now);
  if (exhausted > 0) return rateRefusal(projectId, exhausted);
  const body = await readEventsBody(request.bytes, request.contentEncoding, request.contentType);
  const batch = kReaders[request.format](body, request.now);
  const wait = rate.take(projectId, batch.events.length, request.now);
  if (wait > 0) return rateRefusal(projectId, wait);
  store.resetReadTxn();
  const resolved = resolveBatch(store, request.key, batch);
  const touches = {
    batchId: batch.batchId,
    subjects: resolved.events.map((e) => e.subject),
    metrics: resolved.events.flatMap((e) => (e.kind === 'track' && !resolved.declaredMetrics.has(e.metric) ? [e.metric] : [])),
    // PostgreSQL's tally reads the project's raw bytes only for a batch that keeps raw events.
    ...(resolved.retentionDays === null ? {} : { keepsRaw: { scopes: resolved.projectScopes, now: request.now } }),
  };
  const counted = await writes.count(tallyScope(request.key), touches, (txn) =>
    countBatch(txn, request.key, batch.batchId, resolved, request.now, start.limits),
  );
  if (counted instanceof StorageFull)
    return { code: counted.code, detail: counted.detail, retryAfter: counted.retryAfter, refusedUntil: null };
  if (batch.batchId !== null && batch.batchId === kTestSwitches.eventsCrashBatchId && start.startedBefore === 0) await dieUnanswered();
  return counted;
}

/**
 * The test switch's death (FLAGWIRE_TEST_EVENTS_CRASH_BATCH_ID): an uncaught error, as a fault of ours
 * would kill the thread, once the batch is counted and before it is answered, with other batches in
 * flight. Thrown from a task of its own, never inside a transaction's work: a thread that dies inside
 * lmdb-js's transaction callback leaves that transaction committed with its work half done.
 */
function dieUnanswered(): Promise<never> {
  return new Promise(() =>
    setImmediate(() => {
      throw new Error('the events thread killed by FLAGWIRE_TEST_EVENTS_CRASH_BATCH_ID');
    }),
  );
}

function rateRefusal(projectId: string, seconds: number): BatchRefusal {
  const { code, detail } = rate.refusal(seconds);
  return { code, detail, retryAfter: seconds, refusedUntil: rate.refusedUntil(projectId) };
}

function reply(id: number, outcome: EventsAnswer | BatchRefusal): BatchReply {
  return 'code' in outcome ? { id, refusal: outcome } : { id, answer: outcome };
}

async function read({ id, statistics }: StatisticsRequest): Promise<StatisticsReply> {
  const { scope, experiment, metrics, view } = statistics;
  const tally = await writes.experiment(scope, experiment, metrics);
  return view === null ? { id, tally } : { id, json: JSON.stringify(statisticsView(experiment, view.environment, tally)) };
}

async function exportPage({ id, exportPage }: ExportPageRequest): Promise<ExportPageReply> {
  const pages = await writes.rawPages();
  const { scope, range, after } = exportPage;
  return { id, page: pages === null ? noPage() : await jsonLinesPage(pages, scope, range, after) };
}

/** An empty last page, where no tally file is on disk: a new one each time, as its buffer is moved. */
function noPage(): JsonLinesPage {
  return { bytes: new Uint8Array(0), last: null };
}

function answered(message: BatchRequest | StatisticsRequest | ExportPageRequest): Promise<BatchReply | StatisticsReply | ExportPageReply> {
  if ('statistics' in message) return read(message);
  if ('exportPage' in message) return exportPage(message);
  return receive(message).then((outcome) => reply(message.id, outcome));
}

// Batches still being counted, and reads still reading. The front end drains before it closes, but a batch
// whose client went away is no request in flight any more: its count still finishes (or is refused)
// before the files close, never failing on a closed database.
const counting = new Set<Promise<void>>();

port.on('message', (message: EventsThreadMessage) => {
  if (message === 'close') {
    void Promise.allSettled(counting)
      .then(() => Promise.all([writes.close(), store.close()]))
      .then(() => port.postMessage('closed'));
    return;
  }
  const counted = answered(message).then(
    (answer) => port.postMessage(answer, 'page' in answer ? [answer.page.bytes.buffer as ArrayBuffer] : []),
    (err: unknown) =>
      port.postMessage(
        err instanceof FlagwireError
          ? { id: message.id, refusal: { code: err.code, detail: err.detail, retryAfter: null, refusedUntil: null } }
          : { id: message.id, failure: err instanceof Error ? (err.stack ?? err.message) : String(err) },
      ),
  );
  counting.add(counted);
  void counted.finally(() => counting.delete(counted));
});
