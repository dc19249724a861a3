// Release plans' records as the store keeps them (keyedRecords: scheduled changes and rollouts each in a
// database of their own, found through the lookups they declare), and every read and write of them:
// one by id, a page of a project's or a flag's by time, what falls due, and a project's pending changes
// counted for its bound. Each list's entries weigh their record's size as JSON (listedBytes), so a page
// is measured before any record is read.
import { listedBytes } from '../model/listed-bytes.js';
import type { KeyedKind, StoreReader, StoreWriter } from '../store/interfaces.js';
import { keyedRecords } from '../store/record-kinds.js';
import type { Page, PagePosition, PageRequest } from './list-pages.js';
import type { RolloutPlan } from './rollouts.js';
import type { ScheduledChange } from './schedules.js';

export const kScheduleRecords = keyedRecords<ScheduledChange>()({
  name: 'schedule',
  database: 'schedules',
  relayed: false,
  key: (change) => change.id,
  // Kept when its flag is deleted: it fails, with the reason, when it falls due (docs/release-plans.md).
  hangsOff: { kind: 'flag', via: 'flag', onDelete: 'keep' },
  indexes: {
    /** Pending changes by due time: the scheduler's poll. */
    due: { keysOf: (change) => (change.status === 'pending' ? [[change.at]] : []) },
    /** A project's changes by due time. */
    project: { keysOf: (change) => [[change.projectId, change.at]], weigh: listedBytes },
    /** A flag's, likewise. */
    flag: { keysOf: (change) => [[change.flagId, change.at]], weigh: listedBytes },
    /** A project's pending ones, counted and measured for its bound without reading them. */
    pending: {
      keysOf: (change) => (change.status === 'pending' ? [[change.projectId, change.at]] : []),
      weigh: listedBytes,
      tallied: true,
    },
  },
});

export const kRolloutRecords = keyedRecords<RolloutPlan>()({
  name: 'rollout',
  database: 'rollouts',
  relayed: false,
  key: (plan) => plan.id,
  // Kept when its flag is deleted: at its next step it pauses, saying the flag was deleted (rolloutAdvance).
  hangsOff: { kind: 'flag', via: 'flag', onDelete: 'keep' },
  indexes: {
    /** Running rollouts at the sooner of their next step and their guard's next reading. */
    due: { keysOf: (plan) => dueAt(plan) },
    /** A project's, oldest first. */
    project: { keysOf: (plan) => [[plan.projectId, plan.createdAt]], weigh: listedBytes },
    /** A flag's. */
    flag: { keysOf: (plan) => [[plan.flagId, plan.createdAt]], weigh: listedBytes },
  },
});

/** A running rollout's place among those due: the sooner of its next step and its guard's next reading; none when it has neither to come. */
function dueAt(plan: RolloutPlan): [number][] {
  if (plan.status !== 'running') return [];
  const times = [plan.nextAt, plan.guardNextAt].filter((t): t is number => typeof t === 'number');
  return times.length === 0 ? [] : [[Math.min(...times)]];
}

export function getSchedule(r: StoreReader, id: string): ScheduledChange | undefined {
  return r.getKeyed(kScheduleRecords, id);
}

/** A page of a project's scheduled changes by due time (`pendingOnly`: those still pending). */
export function listSchedules(r: StoreReader, projectId: string, page: PageRequest & { pendingOnly: boolean }): Page<ScheduledChange> {
  return pageOf(r, kScheduleRecords, page.pendingOnly ? 'pending' : 'project', projectId, page);
}

/** A page of a flag's scheduled changes by due time. */
export function listFlagSchedules(r: StoreReader, flagId: string, page: PageRequest): Page<ScheduledChange> {
  return pageOf(r, kScheduleRecords, 'flag', flagId, page);
}

/** How many of a project's changes are pending, and their size in bytes (as JSON), read from the tally alone. */
export function pendingSchedules(r: StoreReader, projectId: string): { count: number; bytes: number } {
  const { count, weight } = r.tallyOf(kScheduleRecords, 'pending', projectId);
  return { count, bytes: weight };
}

/** Those pending and due at `now`, earliest first. */
export function listDueSchedules(r: StoreReader, now: number, limit: number): ScheduledChange[] {
  return r.listKeyedBy(kScheduleRecords, 'due', [], { through: [now], limit });
}

/** Scheduled changes do not move configSeq: evaluation never reads them. */
export function putSchedule(w: StoreWriter, change: ScheduledChange): void {
  w.putKeyed(kScheduleRecords, change);
}

export function getRollout(r: StoreReader, id: string): RolloutPlan | undefined {
  return r.getKeyed(kRolloutRecords, id);
}

/** A page of a project's rollouts by creation. */
export function listRollouts(r: StoreReader, projectId: string, page: PageRequest): Page<RolloutPlan> {
  return pageOf(r, kRolloutRecords, 'project', projectId, page);
}

/** A page of a flag's rollouts by creation. */
export function listFlagRollouts(r: StoreReader, flagId: string, page: PageRequest): Page<RolloutPlan> {
  return pageOf(r, kRolloutRecords, 'flag', flagId, page);
}

/** Those running whose next step or guard reading is due at `now`, earliest first. */
export function listDueRollouts(r: StoreReader, now: number, limit: number): RolloutPlan[] {
  return r.listKeyedBy(kRolloutRecords, 'due', [], { through: [now], limit });
}

/** Rollouts do not move configSeq either (the flag changes they make do). */
export function putRollout(w: StoreWriter, plan: RolloutPlan): void {
  w.putKeyed(kRolloutRecords, plan);
}

/**
 * A page of one of a kind's lists by time ([owner, time] entries weighing their record's size): at most
 * `limit` records and, past the first, `maxBytes` of them, measured from the entries; only those on the
 * page are read.
 */
function pageOf<V>(r: StoreReader, kind: KeyedKind<V>, lookup: string, owner: string, page: PageRequest): Page<V> {
  const after = page.after === null ? null : [page.after.time, page.after.id];
  const items: V[] = [];
  let bytes = 0;
  let last: PagePosition | null = null;
  // One more entry than the page holds: whether there is a next page.
  const entries = r.lookupEntries(kind, lookup, owner, { after, reverse: page.newestFirst === true, limit: page.limit + 1 });
  for (const entry of entries) {
    if (items.length === page.limit || (items.length > 0 && bytes + entry.weight > page.maxBytes)) return { items, next: last };
    const item = r.getKeyed(kind, entry.key);
    if (item === undefined) continue;
    items.push(item);
    bytes += entry.weight;
    last = { time: entry.at[0] as number, id: entry.key };
  }
  return { items, next: null };
}
