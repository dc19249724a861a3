// The store's lists, derived from the record kinds its owners declare: the store itself (meta and the
// lookups) and every capability (`databases` and `records` in src/capability/capability.ts,
// listed by src/capabilities.ts as kStoreLayout). The databases a store opens and calls its own, what a
// full copy of PostgreSQL clears and copies, what migrate-to-postgres exports, and what each change
// kind does (PostgreSQL's records, a copy's apply) are all read from one StoreLayout, so a kind declared
// once is in every one of them.
import { kKeyedIndexes, kKeyedTallies, kMaxDbs } from './layout.js';
import type { RecordKey, RecordKind, RecordTarget } from './record-kinds.js';
import type { ChangeBearing, EnvironmentBearing, KeyedKind } from './interfaces.js';
import { sideStorage, type SideStorage, type SideStorageOwner } from './side-storage.js';

/** Who declares databases and record kinds: a capability, or the store itself. */
export interface RecordOwner extends SideStorageOwner {
  readonly name: string;
  /** The LMDB databases it owns (each is declared by exactly one owner). */
  readonly databases?: readonly string[];
  /** The kinds of record it stores, each in one of the declared databases. */
  readonly records?: readonly RecordKind[];
  /** How its kinds bear on an environment's state (interfaces.ts: EnvironmentBearing). */
  // biome-ignore lint/suspicious/noExplicitAny: each bearing is typed by its own kind; the list holds every kind's.
  readonly environmentState?: readonly EnvironmentBearing<any>[];
}

/** A kind whose records refuse the deletion of the record they hang off (HangsOff `refuse`), as declared. */
export interface Refusal {
  readonly kind: KeyedKind<unknown>;
  readonly via: string | null;
  readonly refusal: string;
}

/** What a change of one kind does: to PostgreSQL's table of current records, and to a node's copy. */
export interface ChangeKind {
  records(value: unknown): { put: RecordKey | null; remove: RecordKey[] };
  apply(target: RecordTarget, value: unknown): void;
}

/** With the side storage every owner declares (side-storage.ts): side files, PostgreSQL's migrations. */
export interface StoreLayout extends SideStorage {
  /** Every named database, the store's own first, each once: what a store opens and calls its own. */
  readonly databases: readonly string[];
  /** Which owner declares each database. */
  readonly owners: ReadonlyMap<string, string>;
  /** Every record kind, in its owners' order. */
  readonly kinds: readonly RecordKind[];
  /** The databases a full copy of the system of record clears: every one but the store's own, and the lookups of what it copies. */
  readonly copied: readonly string[];
  /** Every change kind (a kind's write, and its deletion where it has one) by name. */
  readonly changes: ReadonlyMap<string, ChangeKind>;
  /** The kinds sent to relays (RecordKind.relayed): what a relay's full copy holds. */
  readonly relayed: readonly RecordKind[];
  /** Their change kinds (writes and deletions): the only changes a relay is sent. */
  readonly relayedChanges: ReadonlySet<string>;
  /** How each change kind bears on an environment's state, by name; absent: it does not (the approvals gate). */
  readonly bearings: ReadonlyMap<string, ChangeBearing>;
  /** The kinds whose records a deletion of one of a kind's records deletes with it (HangsOff cascade), by that kind's name. */
  readonly cascades: ReadonlyMap<string, readonly KeyedKind<unknown>[]>;
  /** By kind name: the kinds whose records refuse a deletion of the record they hang off (HangsOff `refuse`). */
  readonly refusals: ReadonlyMap<string, readonly Refusal[]>;
  /** The kinds that bear on an environment's state, each once. */
  // biome-ignore lint/suspicious/noExplicitAny: kinds of every record type; each is handed its own values.
  readonly bearingKinds: readonly EnvironmentBearing<any>[];
}

/**
 * The store's own: meta (the schema version, configSeq, sequence counters, a copy's revision) with the
 * change log (change-log.ts), which holds no kind of record: the change sets of the last revisions,
 * whatever their kinds; and keyedIndexes and keyedTallies, the lookups simple kinds declare
 * (KeyedKind.indexes), entries derived from records others own.
 */
export const kStoreRecordOwner: RecordOwner = {
  name: 'store',
  databases: ['meta', kKeyedIndexes, kKeyedTallies],
};

/**
 * The layout of the store's own databases and kinds and `owners`'. A database declared twice or never,
 * a kind in a database no one declares, a change kind declared twice, or more databases than an
 * environment opens, is a start-up error.
 */
export function storeLayout(owners: readonly RecordOwner[]): StoreLayout {
  const all = [kStoreRecordOwner, ...owners];
  const ownerOf = new Map<string, string>();
  for (const owner of all)
    for (const database of owner.databases ?? []) {
      const first = ownerOf.get(database);
      if (first !== undefined) throw new Error(`database ${database} is declared by ${first} and by ${owner.name}`);
      ownerOf.set(database, owner.name);
    }
  if (ownerOf.size > kMaxDbs) throw new Error(`${ownerOf.size} databases are declared; an environment opens at most ${kMaxDbs}`);
  const kinds = all.flatMap((owner) => owner.records ?? []);
  const used = new Set<string>(kStoreRecordOwner.databases);
  const changes = new Map<string, ChangeKind>();
  const relayedChanges = new Set<string>();
  const declare = (name: string, change: ChangeKind) => {
    if (changes.has(name)) throw new Error(`change kind ${name} is declared twice`);
    changes.set(name, change);
  };
  for (const kind of kinds) {
    for (const database of [kind.database, ...kind.derived]) {
      if (!ownerOf.has(database)) throw new Error(`record kind ${kind.name} is kept in database ${database}, which no one declares`);
      used.add(database);
    }
    if (kind.relayed) relayedChanges.add(kind.name);
    if (kind.relayed && kind.removal !== undefined) relayedChanges.add(kind.removal.name);
    declare(kind.name, {
      records: (value) => ({ put: { kind: kind.name, key: kind.key(value) }, remove: [] }),
      apply: (target, value) => kind.apply(target, value),
    });
    const removal = kind.removal;
    if (removal !== undefined)
      declare(removal.name, {
        records: (value) => ({ put: null, remove: removal.removes(value) }),
        apply: (target, value) => removal.apply(target, value),
      });
  }
  const cascades = new Map<string, KeyedKind<unknown>[]>();
  const refusals = new Map<string, Refusal[]>();
  for (const kind of kinds) {
    const parent = kind.hangsOff;
    if (parent === undefined) continue;
    const of = kinds.find((k) => k.name === parent.kind);
    if (of === undefined || of.removal === undefined)
      throw new Error(`record kind ${kind.name} hangs off ${parent.kind}, which is no kind whose records are deleted`);
    if (parent.via !== null && kind.indexes?.[parent.via] === undefined)
      throw new Error(`record kind ${kind.name} hangs off ${parent.kind} via ${parent.via}, a lookup it does not declare`);
    if (parent.onDelete === 'cascade') {
      if (kind.removal === undefined) throw new Error(`record kind ${kind.name} is deleted with ${parent.kind} but declares no deletion`);
      cascades.set(parent.kind, [...(cascades.get(parent.kind) ?? []), kind as KeyedKind<unknown>]);
    }
    if (parent.onDelete === 'refuse') {
      // Else the record it hangs off could never be deleted.
      if (kind.removal === undefined)
        throw new Error(`record kind ${kind.name} refuses deletions of ${parent.kind} but declares no deletion`);
      const refusal: Refusal = { kind: kind as KeyedKind<unknown>, via: parent.via, refusal: parent.refusal };
      refusals.set(parent.kind, [...(refusals.get(parent.kind) ?? []), refusal]);
    }
  }
  const unused = [...ownerOf.keys()].filter((database) => !used.has(database));
  if (unused.length > 0) throw new Error(`databases ${unused.join(', ')} are declared but hold no kind of record`);
  const databases = [...ownerOf.keys()];
  const bearings = new Map<string, ChangeBearing>();
  const bearingKinds = all.flatMap((owner) => owner.environmentState ?? []);
  for (const bearing of bearingKinds) {
    if (!kinds.some((kind) => kind.name === bearing.kind.name))
      throw new Error(`record kind ${bearing.kind.name} bears on environments but no one stores it`);
    bearings.set(bearing.kind.name, { bearing, removal: false });
    if (bearing.kind.removal !== undefined) bearings.set(bearing.kind.removal.name, { bearing, removal: true });
  }
  return {
    ...sideStorage(owners),
    databases,
    owners: ownerOf,
    kinds,
    copied: databases.filter(
      (database) => ownerOf.get(database) !== kStoreRecordOwner.name || database === kKeyedIndexes || database === kKeyedTallies,
    ),
    changes,
    relayed: kinds.filter((kind) => kind.relayed),
    relayedChanges,
    bearings,
    bearingKinds,
    cascades,
    refusals,
  };
}
