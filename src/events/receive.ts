// A read batch of a client key's events made ready to count (issue 58, items 2 and 4): each exposure's
// flag key resolved to the experiment its state in the key's environment runs, its variant checked
// against the flag's; then counted in one transaction of the tally file, once per batch id.
import type { ClientKey } from '../client-keys/client-key.js';
import { findFlagByName } from '../flags/records/flag-store.js';
import { effectiveState } from '../flags/records/flag-state.js';
import type { StoreReader } from '../store/interfaces.js';
import type { TallyScope, TallyTxn } from './tally/tally-file.js';
import { FlagwireError } from '../errors.js';
import { listExperiments } from '../experiments/records.js';
import type { ClientEvent, EventRejection, ReadBatch } from './schemas.js';
import { type CountedEvent, isNewSubject, millionths, tallyBatch } from './tally.js';
import { getProject } from '../model/records/project-records.js';

/** The answer to a batch of events: how many were kept, how many of those were exposures already kept, which were refused and why. */
export interface EventsAnswer {
  accepted: number;
  duplicates: number;
  rejected: EventRejection[];
}

/** How long a batch id is remembered: a retry later than this is counted again. */
export const kBatchIdMemoryMs = 24 * 3600 * 1000;
/** Batch ids forgotten per transaction at most, so a transaction's cost stays bounded. */
const kForgetPerBatch = 100;

/** Raw events forgotten per transaction at most beyond the batch's own count: expiry keeps up with what a batch adds, within a bound. */
const kForgetRawPerBatch = 100;
/**
 * The Retry-After of a batch refused because its project environment has as many subjects as it may:
 * subjects leave only when erased (or the limit is raised), which no clock says, so a client is told
 * to come back in an hour rather than retry at once.
 */
export const kSubjectsFullRetrySeconds = 3600;

/** The storage limits a batch is held to (src/config.ts: eventSubjectsPerEnvironment, rawEventBytesPerProject). */
export interface StorageLimits {
  readonly subjectsPerEnvironment: number;
  readonly rawBytesPerProject: number;
}

/** A batch refused whole because its project is at a storage limit: nothing of it applied; retry after `retryAfter` seconds. */
export class StorageFull extends FlagwireError {
  constructor(
    detail: string,
    readonly retryAfter: number,
  ) {
    super('EVENT_STORAGE_FULL', detail);
  }
}

/** A batch resolved: its events to count, each with the event as received (what raw retention keeps), and its rejections. */
export interface ResolvedBatch {
  readonly events: readonly CountedEvent[];
  readonly received: readonly ClientEvent[];
  readonly indexes: readonly number[];
  readonly rejected: readonly EventRejection[];
  /** Days the project keeps its raw events; null: it keeps none. */
  readonly retentionDays: number | null;
  /** Every scope of the project (its environments), where its raw events are kept. */
  readonly projectScopes: readonly TallyScope[];
  /** The metrics the experiments of the key's environment declare: always counted (tallyBatch). */
  readonly declaredMetrics: ReadonlySet<string>;
}

/** What the flag of an exposure's key is in the key's environment: its experiment and variants, or why it counts none. */
type Resolved = { experiment: string; variants: readonly string[] } | string;

/** The scope of a client key's events: its project, and its environment ('' on a project without environments). */
export function tallyScope(key: ClientKey): TallyScope {
  return { projectId: key.projectId, environment: key.environment ?? '' };
}

/**
 * `batch`'s events as counted events, the ones that cannot count added to its rejections, by index.
 * Reads the flags of the key's project in `store` (a snapshot the caller renewed).
 */
export function resolveBatch(store: StoreReader, key: ClientKey, batch: ReadBatch): ResolvedBatch {
  const resolved = new Map<string, Resolved>();
  const resolve = (flagKey: string): Resolved => {
    let found = resolved.get(flagKey);
    if (found === undefined) {
      found = resolveFlag(store, key, flagKey);
      resolved.set(flagKey, found);
    }
    return found;
  };
  const events: CountedEvent[] = [];
  const received: ClientEvent[] = [];
  const indexes: number[] = [];
  const rejected = [...batch.rejected];
  for (const [i, event] of batch.events.entries()) {
    const index = batch.indexes[i]!;
    if (event.kind === 'track') {
      events.push({ kind: 'track', subject: event.targetingKey, metric: event.key, value: millionths(event.value), at: event.timestamp });
      received.push(event);
      indexes.push(index);
      continue;
    }
    const flag = resolve(event.key);
    const variant = event.variant ?? '';
    if (typeof flag === 'string') rejected.push({ index, reason: flag });
    else if (!flag.variants.includes(variant))
      rejected.push({ index, reason: `variant "${variant}" is not one of flag "${event.key}"'s variants (${flag.variants.join(', ')})` });
    else {
      events.push({ kind: 'exposure', subject: event.targetingKey, experiment: flag.experiment, variant, at: event.timestamp });
      received.push(event);
      indexes.push(index);
    }
  }
  const project = getProject(store, key.projectId);
  const environments = project === undefined || project.kind === 'single' ? [''] : project.environments;
  return {
    events,
    received,
    indexes,
    rejected,
    retentionDays: project?.rawEventRetentionDays ?? null,
    projectScopes: environments.map((environment) => ({ projectId: key.projectId, environment })),
    declaredMetrics: new Set(listExperiments(store, key.projectId, key.environment).flatMap((e) => e.metrics.map((m) => m.metric))),
  };
}

function resolveFlag(store: StoreReader, key: ClientKey, flagKey: string): Resolved {
  const flag = findFlagByName(store, key.projectId, flagKey);
  if (flag === undefined) return `no flag of this project has the key "${flagKey}"`;
  const state = effectiveState(flag, key.environment);
  const where = key.environment === null ? '' : ` in ${key.environment}`;
  if (state.experiment === undefined) return `flag "${flagKey}" runs no experiment${where}: an exposure counts only while one runs`;
  return { experiment: state.experiment, variants: state.typed === undefined ? ['on', 'off'] : Object.keys(state.typed.variants) };
}

/**
 * Counts a resolved batch of `key` in `txn`, keeping each event counted as received when its project
 * keeps raw events; a batch id counted before (within kBatchIdMemoryMs) changes nothing and answers
 * what it answered then. A batch past a storage limit applies nothing and is answered StorageFull.
 * Each batch first forgets what expired (batch ids, raw events of any project), in bounded steps.
 */
export function countBatch(
  txn: TallyTxn,
  key: ClientKey,
  batchId: string | null,
  resolved: ResolvedBatch,
  now: number,
  limits: StorageLimits,
): EventsAnswer | StorageFull {
  const scope = tallyScope(key);
  txn.forgetBatches(now - kBatchIdMemoryMs, kForgetPerBatch);
  txn.forgetRawEvents(now, resolved.events.length + kForgetRawPerBatch);
  if (batchId !== null) {
    const counted = txn.batch(scope, batchId);
    if (counted !== undefined) return counted.answer as EventsAnswer;
  }
  const full = storageFull(txn, scope, resolved, now, limits);
  if (full !== null) return full;
  const { counted, duplicates, refused } = tallyBatch(txn, scope, resolved.events, resolved.declaredMetrics);
  if (resolved.retentionDays !== null) {
    const notCounted = new Set(refused.map(({ position }) => position));
    const kept = resolved.received
      .filter((_, position) => !notCounted.has(position))
      .map((event) => ({ ...event, value: event.kind === 'track' ? event.value : null }));
    txn.putRawEvents(scope, kept, now, resolved.retentionDays * kDayMs);
  }
  const rejected = [...resolved.rejected, ...refused.map(({ position, reason }) => ({ index: resolved.indexes[position]!, reason }))];
  rejected.sort((a, b) => a.index - b.index);
  const answer: EventsAnswer = { accepted: counted + duplicates, duplicates, rejected };
  if (batchId !== null) txn.putBatch(scope, batchId, { at: now, answer });
  return answer;
}

const kDayMs = 24 * 3600 * 1000;

/**
 * Why the batch may not be applied, or null: its new subjects would take its project environment past
 * its subjects (exactly: the batch's subjects are looked up only when it could), or its project keeps
 * raw events and they take as many bytes as it may (a batch that starts below passes whole, so by at
 * most one batch's bytes). The latter's Retry-After is when the project's oldest raw event expires.
 */
function storageFull(txn: TallyTxn, scope: TallyScope, resolved: ResolvedBatch, now: number, limits: StorageLimits): StorageFull | null {
  const subjects = txn.subjectCount(scope);
  const named = new Set(resolved.events.map((event) => event.subject));
  if (subjects + named.size > limits.subjectsPerEnvironment) {
    const fresh = [...named].filter((subject) => isNewSubject(txn.subject(scope, subject))).length;
    if (subjects + fresh > limits.subjectsPerEnvironment)
      return new StorageFull(
        `This project environment has ${subjects} subjects, and this batch would add ${fresh}: at most ${limits.subjectsPerEnvironment} are kept (FLAGWIRE_EVENT_SUBJECTS_PER_ENVIRONMENT). Nothing of this batch was counted; erase subjects, or ask the operator to raise the limit.`,
        kSubjectsFullRetrySeconds,
      );
  }
  if (resolved.retentionDays === null) return null;
  const bytes = txn.rawBytes(scope.projectId);
  if (bytes < limits.rawBytesPerProject) return null;
  const firstExpiry = txn.firstRawExpiry(resolved.projectScopes);
  const wait = firstExpiry === null ? kSubjectsFullRetrySeconds : Math.max(1, Math.ceil((firstExpiry - now) / 1000));
  return new StorageFull(
    `This project keeps ${bytes} bytes of raw events, its most (FLAGWIRE_RAW_EVENT_BYTES_PER_PROJECT). Nothing of this batch was counted; send it again after ${wait} s (Retry-After), when its oldest raw events expire, or shorten its retention.`,
    wait,
  );
}
