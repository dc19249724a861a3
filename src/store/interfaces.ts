// The store as the rest of Flagwire sees it: record-level reads and writes, the transactions writes
// run in, and readers that renew their snapshot. Code above src/store depends on these interfaces;
// the LMDB implementation (lmdb-store.ts) is named only where a process opens its store.
import type { AuditEntry } from '../model/audit.js';
import type { FlagState } from '../model/flags.js';
import type { Change, LoggedChange, Revision } from './changes.js';

/** The detail of a write whose commit failed (the writer answers it 503; the console exits 1). */
export const kCommitFailedDetail = 'The change could not be written to storage (disk full or read-only); nothing was changed. Retry later.';

export interface AuditPage {
  limit: number;
  /** Only entries with a sequence number below this. */
  before: number | null;
}

/**
 * The store's revision (StoreReader.revision; Flagwire-Revision on the wire): one number for the whole
 * store, PostgreSQL's revision on its copies, the data file's configSeq on LMDB alone. Not a project's
 * revision in flags as code (ProjectRevision, src/flags-as-code/plan.ts), an audit sequence number.
 */
export type StoreRevision = number;

/** Everything the API, the evaluation workers and the console read. */
export interface StoreReader {
  /**
   * Moves with every committed transaction that wrote an org, user, membership, project, audience,
   * flag or token (of any process): a reader that saw the same number can keep what it derived from
   * those records. Audit entries, token activity, flag usage and mail do not move it.
   */
  configSeq(): number;
  /**
   * The store's revision (docs/api.md: Revisions), which every answer of the APIs names and a request
   * may ask for at least: on a copy of PostgreSQL the revision of PostgreSQL it has applied (the same
   * number for the same state on every node), otherwise configSeq. `configSeq`: that number, read by the
   * caller in the same snapshot, so a store that is no copy does not read it again (the eval worker reads
   * both at every batch: engine.ts).
   */
  revision(configSeq?: number): StoreRevision;
  /**
   * The id of the system of record whose revisions these are: the database (or upstream) a copy follows
   * (StoreCopy.replicaOf), else this data file's own. What a relay of this store is told it follows.
   */
  source(): string;
  schemaVersion(): number;
  /**
   * How a change kind bears on an environment's state (the store's layout: interfaces.ts: EnvironmentBearing);
   * undefined: not at all. A store opened without its layout knows none, and throws.
   */
  changeBearing(kind: string): ChangeBearing | undefined;
  /** Every kind that bears on an environment's state (EnvironmentBearing), each once. */
  // biome-ignore lint/suspicious/noExplicitAny: kinds of every record type; each is handed its own values.
  environmentBearings(): readonly EnvironmentBearing<any>[];
  /** Newest first. */
  listAudit(projectId: string, page: AuditPage): AuditEntry[];
  /**
   * The sequence number of the project's newest audit entry (0: none), read without reading the entry:
   * every change to a project's flags, audiences and fragments is audited, so a check made at one value
   * still holds while it has not moved (a fragment change prepared before the writer's transaction).
   */
  lastAuditSeq(projectId: string): number;
  /** Every project's entries with a sequence number above `afterSeq`, lowest first, at most `limit` (the audit stream's read). */
  listAuditAfter(afterSeq: number, limit: number): AuditEntry[];
  /** A record of a simple kind (keyedRecords) by its key; undefined when absent (or its database is not in the file). */
  getKeyed<V>(kind: KeyedKind<V>, key: string): V | undefined;
  /** Every record of a simple kind (or the first `limit`), in key order. */
  listKeyed<V>(kind: KeyedKind<V>, limit?: number): V[];
  /**
   * The records of a simple kind that its lookup `index` (KeyedKind.indexes) files under `key` (its first
   * parts, or all of them), in the lookup's order: by the parts that follow, then by record key.
   */
  listKeyedBy<V>(kind: KeyedKind<V>, index: string, key: LookupKey, range?: LookupRange): V[];
  /** The entries of lookup `index` under `key`, as listKeyedBy orders them, without reading a record. */
  lookupEntries<V>(kind: KeyedKind<V>, index: string, key: LookupKey, range?: LookupRange): LookupEntry[];
  /** What a tallied lookup (Lookup.tallied) holds under the first part `first`. */
  tallyOf<V>(kind: KeyedKind<V>, index: string, first: LookupPart): LookupTally;
}

/**
 * A reader that keeps seeing one snapshot of the store until it renews it. A reader that lives long
 * (the eval engine, the Management API's memo, the change feed, the mailer) renews it before each unit
 * of reads (a batch, a request, a poll), so each unit sees every write committed before it started.
 */
export interface SnapshotReader extends StoreReader {
  /** Drops this thread's read snapshot so the next read sees every committed write. */
  resetReadTxn(): void;
}

/** The write side, only usable inside `StoreTransactions.transact`. */
/**
 * Every audit action a capability declares, as this interface's keys. The store knows no capability:
 * src/capabilities.ts adds the keys (declaration merging), so the web console's browser code, which
 * reads this module's types, stays clear of the capabilities' modules.
 */
// biome-ignore lint/suspicious/noEmptyInterface: its keys are added by src/capabilities.ts
export interface DeclaredAuditActions {}

/**
 * An audit entry as a command appends it: its action is one a capability declares, so no command
 * writes an action the webhooks and flags as code do not know of.
 */
export type NewAuditEntry = Omit<AuditEntry, 'seq' | 'action'> & { action: keyof DeclaredAuditActions };

/**
 * A simple kind of record as the store's keyed layout keeps it (record-kinds.ts keyedRecords): its
 * change kind, its database (one of its own) and each record's key there.
 */
export interface KeyedKind<V> {
  readonly name: string;
  readonly database: string;
  /** Sent to relays (RecordKind.relayed); a write of a relayed kind moves the revision, as configuration does. */
  readonly relayed: boolean;
  /** A kind not relayed whose writes move configSeq all the same (users: StoreReader.configSeq names them). */
  readonly configuration?: boolean;
  /**
   * The record's key: one string, the same in LMDB and in PostgreSQL's table of current records. A key of
   * several parts is their compositeKey (record-kinds.ts); a number is its decimal string.
   */
  key(value: V): string;
  /**
   * A kind numbered in sequence (mail): the record's number. StoreWriter.nextSeq gives the next one, and
   * every write of a record (a copy's too) raises the sequence to it.
   */
  sequence?(value: V): number;
  /**
   * Lookups the store keeps of the kind's records, kept in the transaction of every write (keyedRecords'
   * layout), by lookup name. Read with StoreReader.listKeyedBy, lookupEntries and tallyOf.
   */
  readonly indexes?: Readonly<Record<string, Lookup<V>>>;
  /** The change kind a deletion of one of its records is recorded as (StoreWriter.deleteKeyed); absent: never deleted. */
  readonly removal?: { readonly name: string };
  /** The kind its records hang off, and what a deletion of their record of that kind does to them (HangsOff). */
  readonly hangsOff?: HangsOff;
}

/**
 * A kind's lifecycle: the kind its records hang off (a flag's usage hangs off the flag), how a record is
 * found from its record of that kind, and what deleting that record does to it: `cascade` deletes it in
 * the same transaction, recorded as its own deletion before the one it hangs off; `keep` leaves it (a
 * scheduled change of a deleted flag stays, and fails when it falls due); `refuse` refuses the deletion
 * while one hangs off it (a 400 saying `refusal`; nothing is deleted). Checked by the store's layout.
 */
export type HangsOff = {
  /** The kind's name (a simple kind that may be deleted). */
  readonly kind: string;
  /** The lookup that files a record under its record's key (first part); null: its own key is that record's key. */
  readonly via: string | null;
} & (
  | { readonly onDelete: 'cascade' | 'keep' }
  | { readonly onDelete: 'refuse' /** What the refused deletion says: what to delete first. */; readonly refusal: string }
);

/** One part of a lookup's key: a lookup orders its entries by their parts, one after the other. */
export type LookupPart = string | number;

/** Where a lookup files a record: its parts in order (a string alone is one part). */
export type LookupKey = string | readonly LookupPart[];

/**
 * A lookup of a simple kind (KeyedKind.indexes). Its methods are methods, so that a kind of one record
 * type is a kind of records (as its key() is): the store hands each kind only its own records.
 */
export interface Lookup<V> {
  /** The keys the lookup files a record under (none: the record is not in it). */
  keysOf(value: V): readonly LookupKey[];
  /** A number filed with each of the record's entries (its size, say), read back with them (LookupEntry.weight). */
  weigh?(value: V): number;
  /** Kept: for each first part of the lookup's keys, how many entries it holds and their weights' sum (StoreReader.tallyOf). */
  readonly tallied?: boolean;
}

/** An entry of a lookup (StoreReader.lookupEntries). */
export interface LookupEntry {
  /** Its parts after those asked for, the record's key last: a position a range may start after. */
  readonly at: readonly LookupPart[];
  /** The record's key. */
  readonly key: string;
  /** What the lookup's weigh gave the record when it was filed (0 when it weighs none). */
  readonly weight: number;
}

/** Which of the entries under a lookup key are read, and in which order. */
export interface LookupRange {
  /** Only the entries after this position (LookupEntry.at of the last one read), in the order read. */
  readonly after?: readonly LookupPart[] | null;
  /** Only the entries past every one whose parts start with these (a skip to the next group); not with `after`. */
  readonly past?: readonly LookupPart[];
  /** Only the entries whose parts are at or before these (a due time: the entries due by then); not with `reverse`. */
  readonly through?: readonly LookupPart[];
  /** Last first. */
  readonly reverse?: boolean;
  readonly limit?: number;
  readonly offset?: number;
}

/** A lookup's tally under one first part (Lookup.tallied). */
export interface LookupTally {
  readonly count: number;
  readonly weight: number;
}

export interface StoreWriter extends StoreReader {
  appendAudit(entry: NewAuditEntry): AuditEntry;
  /**
   * A record of a simple kind (keyedRecords), recorded as its kind's change. Moves configSeq only for a
   * relayed kind: what relays follow is configuration, and a revision of an embedded node is a configSeq.
   */
  putKeyed<V>(kind: KeyedKind<V>, value: V): void;
  /** Deletes a record of a simple kind (the one stored under its key), recorded as its kind's removal; nothing when there is none. */
  deleteKeyed<V>(kind: KeyedKind<V>, value: V): void;
  /** The number the next record of a kind numbered in sequence (KeyedKind.sequence) takes: one above every one written. */
  nextSeq<V>(kind: KeyedKind<V>): number;
  /** Runs `fn`, returning what it returned and the audit entries it appended (the webhook outbox's input). */
  collectAudit<T>(fn: () => T): { value: T; entries: AuditEntry[] };
  /**
   * Runs `fn` in a nested transaction and hands what it wrote to `review`, which reads the store as `fn`
   * left it: `review` false keeps the writes; true rolls them back (nothing of them is written or
   * recorded) and returns them, so the caller may read the store as it was before (the approvals gate,
   * src/approvals/gate.ts). A thrown error rolls the writes back and is thrown on.
   */
  tentatively<T>(fn: () => T, review: (changes: readonly Change[]) => boolean): Tentative<T>;
  /** Writes each change as a node's copy applies it (an approved change request's change set). */
  applyChanges(changes: readonly Change[]): void;
}

/** What StoreWriter.tentatively did with the writes: kept them, or rolled them back (with what they were). */
export type Tentative<T> = { kept: true; value: T } | { kept: false; value: T; changes: Change[] };

export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** The transactions every change runs in: what the writer actor and the console write through. */
export interface StoreTransactions {
  /**
   * Runs `fn` in one write transaction, committed and flushed to disk before this returns; called
   * inside another, `fn` runs in that one. A thrown error aborts the transaction: nothing of it is
   * written. A commit that fails throws FlagwireError STORE_UNAVAILABLE (kCommitFailedDetail).
   */
  transact<T>(fn: (writer: StoreWriter) => T): T;
  /**
   * Group commit: runs each function in one transaction, so a burst of commands shares one flush to
   * disk. A function that throws rolls back only its own writes; its error is returned in its slot.
   * If the commit itself fails, this throws and nothing is written.
   */
  transactEach<T>(fns: readonly ((writer: StoreWriter) => T)[]): Settled<T>[];
  /** The revision (StoreReader.revision) the last transaction this handle committed left the store at, read inside it. */
  committedRevision(): number;
}

/** A relay's full copy of a store: every record of the relayed kinds, at `revision` of `source`. */
export interface RelayedCopy {
  source: string;
  revision: number;
  records: Change[];
}

/** What the change log holds (src/store/change-log.ts): its revisions and their bytes. */
export interface ChangeLogUsage {
  readonly revisions: number;
  readonly bytes: number;
}

/** A store as a process opened it: its reads, its transactions, and closing it. */
export interface Store extends SnapshotReader, StoreTransactions {
  /**
   * The change log (src/store/change-log.ts): the revisions after `revision` up to the store's, oldest
   * first, each with its changes of the relayed kinds, a record written again as its changed fields (at
   * most `limit` of them, when given): what a relay is sent, and applies on top of the revision before;
   * [] at the store's revision; null when the log no longer reaches `revision` + 1 (a relay that far
   * behind is sent a copy). Read from the memory map, in the reader's snapshot.
   */
  revisionsAfter(revision: number, limit?: number): Revision[] | null;
  /** What the change log holds: its revisions and their bytes (FLAGWIRE_CHANGE_LOG_BYTES bounds them). */
  changeLogUsage(): ChangeLogUsage;
  /** Every record of the relayed kinds with the source and revision they are at, read in one snapshot (a store opened with its layout). */
  relayedCopy(): RelayedCopy;
  close(): Promise<void>;
}

/**
 * A node's store as the copy of a system of record (PostgreSQL, src/store/pg/): what the PostgreSQL code
 * does to the copy, and what migrate-to-postgres reads from a store and marks on it. The LMDB store
 * implements it (lmdb-replica.ts); the PostgreSQL code names only this interface.
 */
export interface StoreCopy extends Store {
  /** The last revision of the system of record applied to this copy (0: none). */
  replicaRevision(): number;
  /** Which system of record this copy follows (its id there), or undefined for a copy of none. */
  replicaOf(): string | undefined;
  /**
   * Applies revisions in order, in one transaction: those at or below this copy's revision are
   * skipped (another thread or process applied them), a gap is an error (nothing is applied). Returns
   * the copy's revision after.
   */
  applyRevisions(revisions: readonly Revision[]): number;
  /**
   * Replaces everything this copy holds with `records` (a full copy of system of record `source` at
   * `revision`), in one transaction; a copy of the same source already at or past `revision` is left as it is.
   */
  replaceAll(source: string, revision: number, records: readonly Change[]): void;
  /**
   * Runs each function as transactEach does, then rolls everything back: nothing is written, and what
   * the functions that did not throw wrote is returned as a change set (the write path commits it to
   * the system of record, then applies it here with applyRevisions), and as `logged`: the same changes,
   * each record written over another as the fields that changed (record-patch.ts), which a copy at the
   * revision before applies (what PostgreSQL's change log keeps).
   */
  rehearse<T>(fns: readonly ((writer: StoreWriter) => T)[]): { settled: Settled<T>[]; changes: Change[]; logged: LoggedChange[] };
  /** Every record, as the changes that would write them into an empty store, read in one snapshot. */
  exportRecords(): Change[];
  /** Whether this store is a relay's copy of another Flagwire node (src/relay/upstream-follower.ts), not a PostgreSQL node's. */
  isRelayCopy(): boolean;
  /** Marks this store, empty, as a relay's copy (its first full copy comes from the upstream). */
  markRelayCopy(): void;
  /** Marks this store as the copy of system of record `source` at `revision`. */
  adoptAsCopy(source: string, revision: number): void;
  /**
   * Whether it holds records of its own: any record of a kind that is configuration (relayed, or
   * KeyedKind.configuration). A data dir that does not may become a copy (its first full copy replaces it).
   */
  holdsConfiguration(): boolean;
}

/**
 * The path every change of the writer actor and the console takes to the system of record: the LMDB
 * file itself (write-path.ts), or PostgreSQL and then the node's LMDB copy (pg/pg-write-path.ts).
 */
export interface WritePath {
  /**
   * Group commit, as StoreTransactions.transactEach. `claim` is called once the write lock is held
   * (only the commit remains) and returns the functions to run; each runs against the store, and the
   * result is answered only once what they wrote is committed and readable in this node's LMDB.
   * Rejects when the commit failed: then nothing of it is written, now or later.
   *
   * `cutOff`: when it aborts before the commit is sent, the path that can stop there (PostgreSQL's)
   * drops the transaction and rejects with the abort's reason, nothing written; once the commit is
   * sent, the answer waits for its outcome. The LMDB file's commit runs synchronously and never sees it.
   */
  commit<T>(claim: () => readonly ((writer: StoreWriter) => T)[], cutOff?: AbortSignal): Promise<Settled<T>[]>;
  /**
   * The revision (StoreReader.revision) the last commit that resolved answers its changes at: the one it
   * committed, or for one that changed nothing, the one it read. The writer names it in each reply.
   */
  revision(): number;
  close(): Promise<void>;
}

// ---- how a record bears on an environment's state --------------------------------------------------
// Declared by the capability that owns the kind (`environmentState` in src/capability/capability.ts),
// carried in the store's layout beside what each change kind does (store-layout.ts), and read by the
// approvals gate (src/approvals/gate.ts), which compares a record's view before and after a change in
// each guarded environment. A kind no capability declares so never needs an approval.

export interface EnvironmentBearing<V = never> {
  /**
   * The kind (record-kinds.ts: its write's change kind and, where it has one, its deletion's, and a
   * record's key), as this module names it: the web console's browser code reads these types, and
   * record-kinds.ts imports lmdb.
   */
  readonly kind: { readonly name: string; key(value: V): string; readonly removal?: { readonly name: string } };
  /** The project a record belongs to. */
  projectOf(value: V): string;
  /** The record stored now under the key of `value` (undefined: none). */
  stored(r: StoreReader, value: V): V | undefined;
  /**
   * What evaluation in `env` (null: a single-environment project's one environment) reads of `value`
   * (undefined: the record is absent), compared as JSON; null when it bears on that environment not at all.
   * `reads`: the flag states evaluation there reads now or will read (EnvRead), for a kind read through
   * them (an audience, a shared fragment), or by what will read them (a flag a plan will turn on): what a
   * pending plan or change request will read is guarded from the moment it is approved, or asked for.
   */
  view(r: StoreReader, value: V | undefined, env: string | null, reads: EnvReads): unknown;
  /**
   * The flag states in `env` that evaluation reads because of `value`: a flag's own state there now; the
   * states a plan still to run will set. A change request holding a change of the kind reads them too.
   */
  reads?(r: StoreReader, value: V, env: string | null): readonly EnvRead[];
  /** The project's records of the kind that may read (a plan: those still to run), for `reads`. */
  list?(r: StoreReader, projectId: string): readonly V[];
  /**
   * A release plan (a scheduled change, a rollout): approved when it is made, so what it changes as it
   * runs needs no further approval; ending it (its view left null: cancelled, run, completed) needs none.
   */
  readonly isPlan?: boolean;
  /**
   * The record as an approved request writes it, `delayMs` after the request was made: its own
   * times moved on (a flag's updatedAt, a rollout's step times), so it reads as made when applied.
   */
  onApply?(value: V, now: number, delayMs: number): V;
}

/**
 * A flag state evaluation in an environment reads: a flag's now (`by` null), or one that a release plan
 * (`by`: its id) or a pending change request (its id) will set.
 */
export interface EnvRead {
  flagId: string;
  state: FlagState;
  by: string | null;
}

/**
 * The flag states evaluation in an environment reads (EnvRead), read only when asked: every one, or with
 * 'planned' only those a pending plan or request will set (no flag's state now is read: cheaper).
 */
export type EnvReads = (only?: 'planned') => readonly EnvRead[];

/** A change kind's bearing: its kind's, and whether the change deletes the record. */
export interface ChangeBearing {
  // biome-ignore lint/suspicious/noExplicitAny: a change of any bearing kind; the gate hands each its own values.
  readonly bearing: EnvironmentBearing<any>;
  readonly removal: boolean;
}
