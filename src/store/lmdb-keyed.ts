// The records of the LMDB store: every kind's generic reads and writes (getKeyed, putKeyed and their
// lookups, in the keyed layout of layout.ts), and the audit log, still kept in a layout of its own. The
// writes check that they run inside a transaction (LmdbStore, lmdb-store.ts, owns the transactions),
// note when they change configuration (configSeq), and hand what they write to the change recorder
// (change-recorder.ts).
import { FlagwireError } from '../errors.js';
import type { AuditEntry } from '../model/audit.js';
import type { ChangeLog } from './change-log.js';
import { ChangeRecorder } from './change-recorder.js';
import type { StoreLayout } from './store-layout.js';
import { changeOf, type Change, type Revision } from './changes.js';
import type {
  ChangeBearing,
  EnvironmentBearing,
  ChangeLogUsage,
  AuditPage,
  KeyedKind,
  LookupEntry,
  LookupKey,
  LookupPart,
  LookupRange,
  LookupTally,
  NewAuditEntry,
  StoreWriter,
  Tentative,
} from './interfaces.js';
import { kAuditRecords } from './record-kinds.js';
import { kSchemaVersion, databaseNamed, sequenceKey, type Databases } from './layout.js';
import {
  readEntries,
  readTally,
  refile,
  scanEntries,
  sumEntries,
  heldLookupNames,
  tooLongPart,
  type LookupDatabases,
} from './keyed-lookups.js';

/** An id too long to be a key Flagwire made is absent, and never reaches LMDB (keyed-lookups.ts says why). */
const tooLong = tooLongPart;

export abstract class LmdbKeyed implements StoreWriter {
  /** Whether a write transaction is open (set by LmdbStore's transactions). */
  protected inTxn = false;
  /** Set by the writes of the current transaction that change configuration (see configSeq). */
  protected configChanged = false;
  /** Collects what the writes write while LmdbStore.rehearse runs. */
  protected readonly recorder = new ChangeRecorder();
  /** The audit entries appended while collectAudit runs; null otherwise. */
  private auditCollector: AuditEntry[] | null = null;

  protected constructor(
    protected readonly db: Databases,
    /** The change log (change-log.ts): written by the store's transactions and its copy's, read here. */
    protected readonly changeLog: ChangeLog,
  ) {}

  // ---- reads -------------------------------------------------------------------------------

  configSeq(): number {
    return (this.db.meta.get('configSeq') as number | undefined) ?? 0;
  }

  /** A copy's 'revision' (layout.ts: only a copy of PostgreSQL has one), else configSeq (`configSeq` when given). */
  revision(configSeq?: number): number {
    return (this.db.meta.get('revision') as number | undefined) ?? configSeq ?? this.configSeq();
  }

  /** A copy's 'replicaOf' (the system of record it follows), else this file's own id (layout.ts). */
  source(): string {
    return (this.db.meta.get('replicaOf') as string | undefined) ?? (this.db.meta.get('fileId') as string | undefined) ?? '';
  }

  revisionsAfter(revision: number, limit?: number): Revision[] | null {
    return this.changeLog.after(revision, this.revision(), limit);
  }

  changeLogUsage(): ChangeLogUsage {
    return this.changeLog.usage();
  }

  schemaVersion(): number {
    return (this.db.meta.get('schemaVersion') as number | undefined) ?? kSchemaVersion;
  }

  listAudit(projectId: string, page: AuditPage): AuditEntry[] {
    if (tooLong(projectId)) return [];
    const start: [string, number] = [projectId, page.before === null ? Number.MAX_SAFE_INTEGER : page.before - 1];
    return [...this.db.audit.getRange({ start, end: [projectId, -1], reverse: true, limit: page.limit }).map(({ value }) => value)];
  }

  lastAuditSeq(projectId: string): number {
    if (tooLong(projectId)) return 0;
    const [newest] = this.db.audit.getKeys({ start: [projectId, Number.MAX_SAFE_INTEGER], end: [projectId, -1], reverse: true, limit: 1 });
    return newest?.[1] ?? 0;
  }

  listAuditAfter(afterSeq: number, limit: number): AuditEntry[] {
    // Keyed by project, then sequence number: one seek per project that has entries, each range ending
    // below the lowest `limit` found so far, so the pages read stay within `limit` entries a project.
    let found: AuditEntry[] = [];
    let ceiling = Number.MAX_SAFE_INTEGER;
    let [key] = this.db.audit.getKeys({ limit: 1 });
    while (key !== undefined) {
      const projectId = key[0];
      for (const { value } of this.db.audit.getRange({ start: [projectId, afterSeq + 1], end: [projectId, ceiling], limit }))
        found.push(value);
      if (found.length >= limit) {
        found = found.sort((a, b) => a.seq - b.seq).slice(0, limit);
        ceiling = found[limit - 1]!.seq;
      }
      [key] = this.db.audit.getKeys({ start: [projectId, Number.MAX_SAFE_INTEGER], limit: 1 });
    }
    return found.sort((a, b) => a.seq - b.seq);
  }

  getKeyed<V>(kind: KeyedKind<V>, key: string): V | undefined {
    return tooLong(key) ? undefined : databaseNamed<V>(this.db, kind.database)?.get(key);
  }

  listKeyed<V>(kind: KeyedKind<V>, limit?: number): V[] {
    const db = databaseNamed<V>(this.db, kind.database);
    return db === undefined ? [] : [...db.getRange({ limit }).map(({ value }) => value)];
  }

  listKeyedBy<V>(kind: KeyedKind<V>, index: string, key: LookupKey, range: LookupRange = {}): V[] {
    const db = databaseNamed<V>(this.db, kind.database);
    const out: V[] = [];
    for (const entry of this.lookupEntries(kind, index, key, range)) {
      const value = db?.get(entry.key);
      if (value !== undefined) out.push(value);
    }
    return out;
  }

  lookupEntries<V>(kind: KeyedKind<V>, index: string, key: LookupKey, range: LookupRange = {}): LookupEntry[] {
    const entries = this.db.keyedIndexes;
    // A read-only open of a file that does not hold the lookup yet: every record read, as the lookup would file it.
    if (entries === undefined || !this.holdsLookup(kind.name, index)) return scanEntries(this.listKeyed(kind), kind, index, key, range);
    return readEntries(entries, kind, index, key, range);
  }

  tallyOf<V>(kind: KeyedKind<V>, index: string, first: LookupPart): LookupTally {
    const tallies = this.db.keyedTallies;
    if (tallies === undefined || !this.holdsLookup(kind.name, index)) return sumEntries(this.lookupEntries(kind, index, [first]));
    return readTally(tallies, kind, index, first);
  }

  /** meta's 'keyedLookups' as last read, and what it names (open.ts settleLookups writes it). */
  private held: { raw: string | undefined; names: Set<string> } = { raw: undefined, names: new Set() };

  /** Whether the file holds lookup `index` of kind `kindName`: an open for writing builds every one declared. */
  private holdsLookup(kindName: string, index: string): boolean {
    const raw = this.db.meta.get('keyedLookups') as string | undefined;
    if (raw !== this.held.raw) this.held = { raw, names: heldLookupNames(raw) };
    return this.held.names.has(`${kindName}\u0000${index}`);
  }

  // ---- writes (inside transact) ------------------------------------------------------------

  private assertTxn(): void {
    if (!this.inTxn) throw new Error('store writes must run inside Store.transact');
  }

  private assertConfigTxn(): void {
    this.assertTxn();
    this.configChanged = true;
  }

  appendAudit(entry: NewAuditEntry): AuditEntry {
    this.assertTxn();
    const full: AuditEntry = { seq: this.advance('auditSeq'), ...entry };
    this.db.audit.putSync([full.projectId, full.seq], full);
    this.recorder.record(changeOf(kAuditRecords.name, full));
    this.auditCollector?.push(full);
    return full;
  }

  putKeyed<V>(kind: KeyedKind<V>, value: V): void {
    if (kind.relayed || kind.configuration === true) this.assertConfigTxn();
    else this.assertTxn();
    const db = this.keyedDatabase(kind);
    const logged = kind.relayed && this.recorder.collecting;
    const stored = logged || kind.indexes !== undefined ? db.get(kind.key(value)) : undefined;
    if (kind.indexes !== undefined) refile(this.lookupDatabases(), kind, stored, value);
    db.putSync(kind.key(value), value);
    if (kind.sequence !== undefined) this.raiseSeq(sequenceKey(kind.name), kind.sequence(value));
    this.recorder.record(changeOf(kind.name, value), logged ? stored : undefined);
  }

  nextSeq<V>(kind: KeyedKind<V>): number {
    this.assertTxn();
    if (kind.sequence === undefined) throw new Error(`record kind ${kind.name} is not numbered in sequence`);
    return ((this.db.meta.get(sequenceKey(kind.name)) as number | undefined) ?? 0) + 1;
  }

  deleteKeyed<V>(kind: KeyedKind<V>, value: V): void {
    if (kind.relayed || kind.configuration === true) this.assertConfigTxn();
    else this.assertTxn();
    if (kind.removal === undefined) throw new Error(`record kind ${kind.name} declares no deletion`);
    const db = this.keyedDatabase(kind);
    const key = kind.key(value);
    // The stored record decides which entries go (the caller's copy may be older).
    const stored = db.get(key);
    if (stored === undefined) return;
    // What hangs off it and refuses its deletion: the whole write is refused, nothing deleted.
    for (const { kind: dependent, via, refusal } of this.layoutOf().refusals.get(kind.name) ?? []) {
      const hanging =
        via === null ? this.getKeyed(dependent, key) !== undefined : this.lookupEntries(dependent, via, key, { limit: 1 }).length > 0;
      if (hanging) throw new FlagwireError('INVALID_REQUEST', refusal);
    }
    // What hangs off it and goes with it, each recorded as its own deletion first: a copy applying the
    // changes in order finds nothing left to cascade.
    for (const dependent of this.layoutOf().cascades.get(kind.name) ?? []) {
      const via = dependent.hangsOff!.via;
      const records = via === null ? [this.getKeyed(dependent, key)] : this.listKeyedBy(dependent, via, key);
      for (const record of records) if (record !== undefined) this.deleteKeyed(dependent, record);
    }
    if (kind.indexes !== undefined) refile(this.lookupDatabases(), kind, stored, undefined);
    db.removeSync(key);
    this.recorder.record(changeOf(kind.removal.name, stored));
  }

  private keyedDatabase<V>(kind: KeyedKind<V>) {
    const db = databaseNamed<V>(this.db, kind.database);
    if (db === undefined) throw new Error(`record kind ${kind.name}: database ${kind.database} is not in the store's layout`);
    return db;
  }

  private lookupDatabases(): LookupDatabases {
    const { keyedIndexes: entries, keyedTallies: tallies } = this.db;
    if (entries === undefined || tallies === undefined) throw new Error('the keyedIndexes and keyedTallies databases are not open');
    return { entries, tallies };
  }

  abstract tentatively<T>(fn: () => T, review: (changes: readonly Change[]) => boolean): Tentative<T>;

  abstract applyChanges(changes: readonly Change[]): void;

  abstract changeBearing(kind: string): ChangeBearing | undefined;

  /** The store's layout: what a deletion of a record deletes with it, or is refused by (store-layout.ts). */
  protected abstract layoutOf(): StoreLayout;

  // biome-ignore lint/suspicious/noExplicitAny: kinds of every record type; each is handed its own values.
  abstract environmentBearings(): readonly EnvironmentBearing<any>[];

  collectAudit<T>(fn: () => T): { value: T; entries: AuditEntry[] } {
    const entries: AuditEntry[] = [];
    const outer = this.auditCollector;
    this.auditCollector = entries;
    try {
      return { value: fn(), entries };
    } finally {
      this.auditCollector = outer;
    }
  }

  /** Moves meta's sequence counter `key` on by one, and returns it. */
  private advance(key: string): number {
    const next = ((this.db.meta.get(key) as number | undefined) ?? 0) + 1;
    this.db.meta.putSync(key, next);
    return next;
  }

  /** Raises meta's sequence counter `key` to `seq` when below it: the next record of its kind numbers after it. */
  private raiseSeq(key: string, seq: number): void {
    if (seq > ((this.db.meta.get(key) as number | undefined) ?? 0)) this.db.meta.putSync(key, seq);
  }
}
