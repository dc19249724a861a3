// A change set: the records one write transaction put or deleted, as data. When PostgreSQL is the
// system of record (src/store/pg/), the writer records the change set of each group of commands while
// it runs them against the node's LMDB copy, stores it in PostgreSQL under the transaction's
// revision (each record written again as its changed fields: LoggedChange), and every node applies it
// to its LMDB copy (StoreCopy.applyRevisions, lmdb-replica.ts). Derived entries
// (token hashes, the project index, the mail due index, sequence counters, configSeq) are not in it:
// applying a change rebuilds them, so the change set is the records and nothing else. The change kinds
// are derived from the record kinds the store and the capabilities declare (store-layout.ts).
import type { FieldChanges } from './record-patch.js';

/**
 * Every change kind the store and the capabilities declare (a record kind's name, or its deletion's:
 * record-kinds.ts), with the record it carries. The store knows no capability: src/capabilities.ts adds
 * the keys (declaration merging) from the kinds declared there, as it adds the audit actions.
 */
// biome-ignore lint/suspicious/noEmptyInterface: its keys are added by src/capabilities.ts
export interface DeclaredChanges {}

/** One record put, or removed, by a write: its kind says what `value` is and how a copy applies it (store-layout.ts). */
export type Change = { [K in keyof DeclaredChanges]: { kind: K; value: DeclaredChanges[K] } }[keyof DeclaredChanges];

/** A change of kind `kind`, as the store's layout declares it (a kind's write, a deletion, or one read back from PostgreSQL). */
export function changeOf(kind: string, value: unknown): Change {
  return { kind, value } as Change;
}

/**
 * A record of kind `kind` written again, as the change log keeps it (change-log.ts; PostgreSQL's too,
 * src/store/pg/): the fields that changed from the version before (record-patch.ts), applied to that
 * version by a copy that holds it.
 */
export interface RecordPatch extends FieldChanges {
  /** The record kind's name. */
  readonly kind: string;
  /** The record's key (RecordKind.key). */
  readonly key: string;
}

/** A change as a revision carries it: whole, or (from a change log) a record's changed fields. */
export type LoggedChange = Change | { kind: 'patch'; value: RecordPatch };

/** One committed revision of the system of record: its number and what it changed. */
export interface Revision {
  revision: number;
  changes: LoggedChange[];
}
