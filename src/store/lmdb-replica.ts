// The LMDB file as the local copy of a system of record (src/store/pg/, or an upstream's on a relay): its
// revision, revisions and full copies applied to it (each revision logged: change-log.ts), every record
// exported from it (migrate-to-postgres), and the relayed ones read as a relay's full copy. The PostgreSQL
// code reaches these through the StoreCopy interface (interfaces.ts); LmdbStore (lmdb-store.ts) runs
// them in its transactions.
import type { RootDatabase } from 'lmdb';
import { changeOf, type Change, type LoggedChange, type Revision } from './changes.js';
import type { ChangeLog } from './change-log.js';
import type { ChangeBearing, EnvironmentBearing, StoreWriter } from './interfaces.js';
import type { Databases } from './layout.js';
import { databaseNamed, sequenceKey } from './layout.js';
import type { RecordKind, RecordTarget } from './record-kinds.js';
import { patchedRecord, recordChanges } from './record-patch.js';
import type { StoreLayout } from './store-layout.js';

export class LmdbReplica {
  /**
   * `transact`: the store's write transaction (its writer is the store itself); `markConfigChanged`:
   * makes the running transaction move configSeq.
   */
  constructor(
    private readonly root: RootDatabase,
    private readonly db: Databases,
    /** The store's layout; null in a read-only open without one, which nothing here is asked of. */
    private readonly storeLayout: StoreLayout | null,
    private readonly changeLog: ChangeLog,
    private readonly transact: <T>(fn: (writer: StoreWriter) => T) => T,
    private readonly markConfigChanged: () => void,
  ) {}

  private relayedByName: Map<string, RecordKind> | undefined;

  private get layout(): StoreLayout {
    if (this.storeLayout === null) throw new Error('a store opened read-only without its layout is no copy to write into');
    return this.storeLayout;
  }

  /** The last revision of the system of record applied to this copy (0: none). */
  replicaRevision(): number {
    return (this.db.meta.get('revision') as number | undefined) ?? 0;
  }

  /** Which system of record this copy follows (its id there), or undefined for a copy of none. */
  replicaOf(): string | undefined {
    return this.db.meta.get('replicaOf') as string | undefined;
  }

  /**
   * Applies revisions in order, in one transaction: those at or below this copy's revision are
   * skipped (another thread or process applied them), a gap is an error (nothing is applied). Returns
   * the copy's revision after.
   */
  applyRevisions(revisions: readonly Revision[]): number {
    return this.transact((writer) => {
      let at = this.replicaRevision();
      for (const { revision, changes } of revisions) {
        if (revision <= at) continue;
        if (revision !== at + 1) throw new Error(`revision ${revision} cannot follow ${at}: the change log has a gap`);
        const logged: LoggedChange[] = [];
        for (const change of changes) {
          const kept = this.applyLogged(writer, change);
          if (kept !== null) logged.push(kept);
        }
        this.changeLog.append(revision, logged);
        at = revision;
      }
      this.db.meta.putSync('revision', at);
      return at;
    });
  }

  /**
   * Replaces everything this copy holds with `records` (a full copy of system of record `source` at
   * `revision`), in one transaction. A copy of the same source already at or past `revision` (another
   * thread applied newer revisions meanwhile) is left as it is: a copy never goes back.
   */
  replaceAll(source: string, revision: number, records: readonly Change[]): void {
    this.transact((writer) => {
      if (this.replicaOf() === source && this.replicaRevision() >= revision) return;
      // Every database of the layout but the store's own: each holds only records the system of record
      // keeps and entries derived from them, which applying the copy's records rebuilds.
      for (const name of this.layout.copied) {
        const db = databaseNamed<unknown>(this.db, name);
        if (db !== undefined) for (const key of [...db.getKeys()]) db.removeSync(key);
      }
      // The sequences of the kinds numbered in sequence: the records applied raise them again.
      for (const kind of this.layout.kinds) this.db.meta.removeSync(sequenceKey(kind.name));
      // The revisions before the copy are not this store's history: a relay behind it is sent a copy too.
      this.changeLog.clear();
      for (const change of records) this.applyChange(writer, change);
      this.markConfigChanged();
      this.db.meta.putSync('revision', revision);
      this.db.meta.putSync('replicaOf', source);
    });
  }

  /**
   * Every record, as the changes that would write them into an empty store (migrate-to-postgres), all
   * read in one read transaction: a flag and its audit entry, written together, are exported together
   * even while another process commits, whatever lmdb-js's shared read transaction does meanwhile.
   */
  exportRecords(): Change[] {
    const out: Change[] = [];
    const transaction = this.root.useReadTransaction();
    try {
      for (const kind of this.layout.kinds)
        if (kind.exported) for (const value of kind.read(this.db, transaction)) out.push(changeOf(kind.name, value));
    } finally {
      transaction.done();
    }
    return out;
  }

  /** Whether this store is a relay's copy: of another Flagwire node, never of PostgreSQL directly (markRelayCopy). */
  isRelayCopy(): boolean {
    return this.db.meta.get('relayCopy') === true;
  }

  /**
   * Marks this store, empty, as a relay's copy before its first full copy arrives: from then on only a
   * relay serves it (a PostgreSQL node's copy and a relay's may follow the same system of record, so its
   * id alone cannot tell them apart). replaceAll keeps the mark.
   */
  markRelayCopy(): void {
    this.transact(() => this.db.meta.putSync('relayCopy', true));
  }

  /**
   * Every record of the relayed kinds (StoreLayout.relayed), as changes, read in lmdb-js's shared read
   * transaction (useReadTransaction pins it): the snapshot the caller reads the revision in, in the same
   * synchronous run.
   */
  relayedRecords(): Change[] {
    const out: Change[] = [];
    const transaction = this.root.useReadTransaction();
    try {
      for (const kind of this.layout.relayed) for (const value of kind.read(this.db, transaction)) out.push(changeOf(kind.name, value));
    } finally {
      transaction.done();
    }
    return out;
  }

  /**
   * `changes` as the change log keeps them (change-log.ts): the relayed ones, each record written over
   * another (`baseOf`: the version it replaced, or undefined) as the fields that changed.
   */
  logged(changes: readonly Change[], baseOf: (change: Change) => unknown): LoggedChange[] {
    return this.patched(
      changes.filter((change) => this.layout.relayedChanges.has(change.kind)),
      baseOf,
    );
  }

  /**
   * Every one of `changes`, each record of a relayed kind written over another (`baseOf`) as the fields
   * that changed: a revision as PostgreSQL's change log keeps it (src/store/pg/), which a copy holding
   * the revision before applies (applyRevisions).
   */
  patched(changes: readonly Change[], baseOf: (change: Change) => unknown): LoggedChange[] {
    return changes.map((change) => this.asLogged(change, baseOf(change)));
  }

  private asLogged(change: Change, base: unknown): LoggedChange {
    const kind = this.relayedKinds.get(change.kind);
    if (kind === undefined || base === undefined) return change;
    const changes = recordChanges(base, change.value);
    return changes === null ? change : { kind: 'patch', value: { kind: kind.name, key: kind.key(change.value), ...changes } };
  }

  /**
   * Applies one change of a revision (a record's changed fields to the version this copy holds) and
   * returns it as this copy's log keeps it (null: a kind relays are not sent).
   */
  private applyLogged(writer: StoreWriter, change: LoggedChange): LoggedChange | null {
    if (change.kind === 'patch') {
      const { kind: name, key } = change.value;
      const kind = this.relayedKinds.get(name);
      const base = kind?.byKey?.(this.db, key);
      if (kind === undefined || base === undefined)
        throw new Error(`a change to ${name} ${key}, which this copy does not hold: the change log does not follow this copy`);
      kind.apply(this.target(writer), patchedRecord(base, change.value));
      return change;
    }
    const kind = this.relayedKinds.get(change.kind);
    const base = kind?.byKey?.(this.db, kind.key(change.value));
    this.applyChange(writer, change);
    return this.layout.relayedChanges.has(change.kind) ? this.asLogged(change, base) : null;
  }

  /** The relayed kinds by their change kind (a write's: a deletion is logged whole). */
  private get relayedKinds(): ReadonlyMap<string, RecordKind> {
    this.relayedByName ??= new Map(this.layout.relayed.map((kind) => [kind.name, kind]));
    return this.relayedByName;
  }

  /** Marks this store as the copy of system of record `source` at `revision` (after migrate-to-postgres copied it there). */
  adoptAsCopy(source: string, revision: number): void {
    this.transact(() => {
      this.db.meta.putSync('revision', revision);
      this.db.meta.putSync('replicaOf', source);
    });
  }

  /** Whether it holds any record of a kind that is configuration (StoreCopy.holdsConfiguration). */
  holdsConfiguration(): boolean {
    return this.layout.kinds.some((kind) => {
      const db = kind.relayed || kind.configuration === true ? databaseNamed<unknown>(this.db, kind.database) : undefined;
      return db !== undefined && [...db.getKeys({ limit: 1 })].length > 0;
    });
  }

  /** How a change kind bears on an environment's state (StoreWriter.changeBearing). */
  changeBearing(kind: string): ChangeBearing | undefined {
    return this.layout.bearings.get(kind);
  }

  /** The layout it was opened with: what a deletion deletes with it, or is refused by (StoreLayout). */
  layoutOf(): StoreLayout {
    return this.layout;
  }

  /** The kinds that bear on an environment's state (StoreWriter.environmentBearings). */
  // biome-ignore lint/suspicious/noExplicitAny: kinds of every record type; each is handed its own values.
  environmentBearings(): readonly EnvironmentBearing<any>[] {
    return this.layout.bearingKinds;
  }

  /** Writes each change as a copy applies it, in the open transaction (StoreWriter.applyChanges). */
  applyChanges(writer: StoreWriter, changes: readonly Change[]): void {
    for (const change of changes) this.applyChange(writer, change);
  }

  private applyChange(writer: StoreWriter, change: Change): void {
    const kind = this.layout.changes.get(change.kind);
    if (kind === undefined) throw new Error(`a change of kind ${change.kind}, which this Flagwire does not know`);
    kind.apply(this.target(writer), change.value);
  }

  private target(writer: StoreWriter): RecordTarget {
    return { writer, db: this.db, raiseSeq: (key, seq) => this.raiseSeq(key, seq) };
  }

  private raiseSeq(key: 'auditSeq', seq: number): void {
    if (seq > ((this.db.meta.get(key) as number | undefined) ?? 0)) this.db.meta.putSync(key, seq);
  }
}
