// The kinds of record the store keeps, each as one value: the LMDB database its records are in and the
// databases of the entries derived from them, the key PostgreSQL's table of current records gives one,
// the change kinds a write and a deletion of one record, how a node's copy applies each, and how every
// record of the kind is read back (migrate-to-postgres). The values are the store's (no code outside
// src/store knows a key); which kinds exist, and which capability owns each, is the capabilities'
// declarations (`records` in src/capability/capability.ts): the store's lists (the databases it opens,
// what a full copy clears, what an export reads, the change kinds) are derived from those in
// layout.ts (storeLayout). keyedRecords is the layout a new simple kind takes: its records under one
// string key in a database of its own.
import type { Transaction } from 'lmdb';
import type { AuditEntry } from '../model/audit.js';
import type { KeyedKind, StoreWriter } from './interfaces.js';
import { databaseNamed, kKeyedIndexes, kKeyedTallies, type Databases } from './layout.js';

/** What a node's copy applies a change through: the store's writes (each keeps its derived entries) and its databases. */
export interface RecordTarget {
  readonly writer: StoreWriter;
  readonly db: Databases;
  /** Raises meta's sequence counter `key` to at least `seq` (a copy's next append numbers after it). */
  raiseSeq(key: 'auditSeq', seq: number): void;
}

/** A record's place in PostgreSQL's table of current records. */
export interface RecordKey {
  readonly kind: string;
  readonly key: string;
}

/** A deletion of a kind's record, as its own change kind. */
export interface RemovalKind<V, R extends string = string> {
  /** The change kind. */
  readonly name: R;
  /** The records it removes from PostgreSQL's table of current records. */
  removes(value: V): RecordKey[];
  apply(target: RecordTarget, value: V): void;
}

/** A kind of record `V`: `N` is its change kind, `R` its deletion's (never: its records are never deleted). */
export interface RecordKind<V = unknown, N extends string = string, R extends string = string> {
  /** The change kind a write of one records, and the kind PostgreSQL's table of current records files it under. */
  readonly name: N;
  /** The LMDB database its records are in. */
  readonly database: string;
  /** The databases holding entries derived from its records (indexes), rebuilt as its records are applied. */
  readonly derived: readonly string[];
  /** Read back by migrate-to-postgres (exportRecords) and copied into the database. */
  readonly exported: boolean;
  /**
   * Sent to relays (docs/decisions.md: The relay): true for what evaluation, OFREP, snapshots, flag
   * sets and token checks read; false for secrets and a node's own work, which stay home. Each kind
   * states it: no default, so a new kind is never relayed, or kept back, by accident.
   */
  readonly relayed: boolean;
  /** Its key in PostgreSQL's table of current records. */
  key(value: V): string;
  /** Every record of the kind in `db`, read in `transaction` (an export). */
  read(db: Databases, transaction: Transaction): Iterable<V>;
  /** Writes one record as a node's copy applies it. */
  apply(target: RecordTarget, value: V): void;
  /**
   * The record under `key` (its key() in PostgreSQL's table), read in the open transaction: the version a
   * record written again is logged against (change-log.ts: its changed fields), and which a copy applies
   * those to. Declared by the relayed kinds, which the log holds; a kind without it is logged whole.
   */
  byKey?(db: Databases, key: string): V | undefined;
  /** Its deletion, when its records are ever deleted. */
  readonly removal?: RemovalKind<V, R>;
  /** Its lookups, kept in keyedIndexes (KeyedKind.indexes): keyedRecords' layout only. */
  readonly indexes?: KeyedKind<V>['indexes'];
  /** Its lifecycle (KeyedKind.hangsOff): keyedRecords' layout only. */
  readonly hangsOff?: KeyedKind<V>['hangsOff'];
  /** Configuration though not relayed (KeyedKind.configuration): keyedRecords' layout only. */
  readonly configuration?: boolean;
  /** Its records' numbers in sequence (KeyedKind.sequence): keyedRecords' layout only. */
  sequence?(value: V): number;
}

/**
 * Declares a kind of record V (`recordKind<Flag>()({...})`); the value keeps its change kinds' names,
 * from which src/capabilities.ts derives the Change type (changes.ts).
 */
function recordKind<V>() {
  return <const N extends string, const R extends string = never>(
    kind: Omit<RecordKind<V, N, R>, 'derived' | 'exported'> & Partial<Pick<RecordKind<V, N, R>, 'derived' | 'exported'>>,
  ): RecordKind<V, N, R> => ({ derived: [], exported: true, ...kind });
}

/** Every value of a database of one kind (its records under their own keys). */
function* values<V>(
  db: { getRange(options: { transaction: Transaction }): Iterable<{ value: V }> } | undefined,
  transaction: Transaction,
): Iterable<V> {
  if (db === undefined) return;
  for (const { value } of db.getRange({ transaction })) yield value;
}

/**
 * A key of several parts (a membership's: its organisation's id and its user's), as KeyedKind.key gives
 * it: the parts as a JSON array, which no two lists of parts share (docs/decisions.md: Composite keys).
 */
export function compositeKey(...parts: readonly string[]): string {
  return JSON.stringify(parts);
}

export const kAuditRecords = recordKind<AuditEntry>()({
  name: 'audit',
  relayed: false,
  database: 'audit',
  key: (entry) => String(entry.seq),
  read: (db, txn) => values(db.audit, txn),
  apply: (t, entry) => {
    t.db.audit.putSync([entry.projectId, entry.seq], entry);
    t.raiseSeq('auditSeq', entry.seq);
  },
});

/** A simple kind: keyedRecords' layout, written with StoreWriter.putKeyed (and deleted with deleteKeyed). */
export type KeyedRecordKind<V, N extends string = string, R extends string = never> = RecordKind<V, N, R> & KeyedKind<V>;

/**
 * A simple kind's layout: each record in database `database`, a database of its own, under
 * `key(record)`, and in the lookups it declares (`indexes`, kept by the store in keyedIndexes and
 * keyedTallies with every write). `deletedAs`: the change kind of a deletion, for a kind whose records
 * are deleted. `exported` defaults to true.
 */
export function keyedRecords<V>() {
  return <const N extends string, const R extends string = never>(
    spec: Omit<KeyedKind<V>, 'removal'> & { readonly name: N; readonly deletedAs?: R; readonly exported?: boolean },
  ): KeyedRecordKind<V, N, R> => {
    const { deletedAs, ...rest } = spec;
    const kind: KeyedRecordKind<V, N, R> = {
      derived: spec.indexes === undefined ? [] : [kKeyedIndexes, kKeyedTallies],
      exported: true,
      ...rest,
      read: (db, txn) => values(databaseNamed<V>(db, spec.database), txn),
      apply: (t, value) => t.writer.putKeyed(kind, value),
      byKey: (db, key) => databaseNamed<V>(db, spec.database)?.get(key),
      removal:
        deletedAs === undefined
          ? undefined
          : {
              name: deletedAs,
              removes: (value) => [{ kind: spec.name, key: spec.key(value) }],
              apply: (t, value) => t.writer.deleteKeyed(kind, value),
            },
    };
    return kind;
  };
}
