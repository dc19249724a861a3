// A read batch of a client key's events made ready to count (issue 58, items 2 and 4): each exposure's
// flag key resolved to the experiment its state in the key's environment runs, its variant checked
// against the flag's; then counted in one transaction of the tally file, once per batch id.
import type { ClientKey } from '../client-keys/records.js';
import { findFlagByName } from '../flags/flag-store.js';
import { effectiveState } from '../flags/flag-state.js';
import type { StoreReader } from '../store/interfaces.js';
import type { TallyScope, TallyTxn } from '../store/tally-file.js';
import type { EventRejection, ReadBatch } from './schemas.js';
import { type CountedEvent, millionths, tallyBatch } from './tally.js';

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
export function resolveBatch(
  store: StoreReader,
  key: ClientKey,
  batch: ReadBatch,
): { events: CountedEvent[]; indexes: number[]; rejected: EventRejection[] } {
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
  const indexes: number[] = [];
  const rejected = [...batch.rejected];
  for (const [i, event] of batch.events.entries()) {
    const index = batch.indexes[i]!;
    if (event.kind === 'track') {
      events.push({ kind: 'track', subject: event.targetingKey, metric: event.key, value: millionths(event.value), at: event.timestamp });
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
      indexes.push(index);
    }
  }
  return { events, indexes, rejected };
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
 * Counts a resolved batch of `key` in `txn`; a batch id counted before (within kBatchIdMemoryMs) changes
 * nothing and answers what it answered then.
 */
export function countBatch(
  txn: TallyTxn,
  key: ClientKey,
  batchId: string | null,
  resolved: { events: readonly CountedEvent[]; indexes: readonly number[]; rejected: readonly EventRejection[] },
  now: number,
): EventsAnswer {
  const scope = tallyScope(key);
  txn.forgetBatches(now - kBatchIdMemoryMs, kForgetPerBatch);
  if (batchId !== null) {
    const counted = txn.batch(scope, batchId);
    if (counted !== undefined) return counted.answer as EventsAnswer;
  }
  const { counted, duplicates, refused } = tallyBatch(txn, scope, resolved.events);
  const rejected = [...resolved.rejected, ...refused.map(({ position, reason }) => ({ index: resolved.indexes[position]!, reason }))];
  rejected.sort((a, b) => a.index - b.index);
  const answer: EventsAnswer = { accepted: counted + duplicates, duplicates, rejected };
  if (batchId !== null) txn.putBatch(scope, batchId, { at: now, answer });
  return answer;
}
