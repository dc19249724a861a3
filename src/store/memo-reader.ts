// A StoreReader that keeps the records a request reads again and again (its token, project,
// organisation and flag) decoded, for as long as nothing is committed.
//
// Why: a Management API read decodes the same four records on every request, and msgpack decoding
// was the largest share of its CPU after the socket writes (bench (d), --profile). Every write
// transaction bumps the store's commit sequence, so a record decoded at sequence N is exactly what any
// snapshot at sequence N holds. `resetReadTxn()` renews the snapshot and drops every memo when the
// sequence moved: callers renew before each unit of reads (the Management API does, per request),
// which is also what makes a revoked token fail on the very next request. Memoised records are shared
// by every request until the next commit, so they are frozen: code that would change one throws.
import type { AuditEntry } from '../model/audit.js';
import type {
  ChangeBearing,
  EnvironmentBearing,
  AuditPage,
  KeyedKind,
  LookupEntry,
  LookupKey,
  LookupPart,
  LookupRange,
  LookupTally,
  SnapshotReader,
} from './interfaces.js';

/** Entries kept per record kind; past it the memo starts over (a bound, not an LRU: hits are per project). */
const kMaxEntries = 4096;

function deepFreeze(value: object): void {
  Object.freeze(value);
  for (const child of Object.values(value)) {
    if (child !== null && typeof child === 'object' && !Object.isFrozen(child)) deepFreeze(child as object);
  }
}

class Memo<V extends object> {
  private readonly entries = new Map<string, V | undefined>();

  get(key: string, load: (key: string) => V | undefined): V | undefined {
    if (this.entries.has(key)) return this.entries.get(key);
    const value = load(key);
    if (value !== undefined) deepFreeze(value);
    if (this.entries.size >= kMaxEntries) this.entries.clear();
    this.entries.set(key, value);
    return value;
  }

  clear(): void {
    this.entries.clear();
  }
}

export class MemoReader implements SnapshotReader {
  private seq = -1;
  /** Records of the relayed kinds (configuration: each write of one moves configSeq), per kind. */
  private readonly keyed = new Map<string, Memo<object>>();
  /** The entries of the relayed kinds' lookups, per kind: they move only with those records. */
  private readonly entries = new Map<string, Memo<LookupEntry[]>>();

  constructor(private readonly store: SnapshotReader) {}

  resetReadTxn(): void {
    this.store.resetReadTxn();
    const seq = this.store.configSeq();
    if (seq === this.seq) return;
    this.seq = seq;
    this.keyed.clear();
    this.entries.clear();
  }

  configSeq(): number {
    return this.store.configSeq();
  }
  changeBearing(kind: string): ChangeBearing | undefined {
    return this.store.changeBearing(kind);
  }
  // biome-ignore lint/suspicious/noExplicitAny: kinds of every record type; each is handed its own values.
  environmentBearings(): readonly EnvironmentBearing<any>[] {
    return this.store.environmentBearings();
  }
  revision(configSeq?: number): number {
    return this.store.revision(configSeq);
  }
  source(): string {
    return this.store.source();
  }
  schemaVersion(): number {
    return this.store.schemaVersion();
  }
  listAudit(projectId: string, page: AuditPage): AuditEntry[] {
    return this.store.listAudit(projectId, page);
  }
  lastAuditSeq(projectId: string): number {
    return this.store.lastAuditSeq(projectId);
  }
  listAuditAfter(afterSeq: number, limit: number): AuditEntry[] {
    return this.store.listAuditAfter(afterSeq, limit);
  }
  getKeyed<V>(kind: KeyedKind<V>, key: string): V | undefined {
    // Only a relayed kind's records move configSeq when written: another kind's could change unseen.
    if (!kind.relayed) return this.store.getKeyed(kind, key);
    const memo = this.keyed.get(kind.name) ?? this.keyed.set(kind.name, new Memo<object>()).get(kind.name)!;
    return memo.get(key, (k) => this.store.getKeyed(kind, k) as object | undefined) as V | undefined;
  }
  listKeyed<V>(kind: KeyedKind<V>, limit?: number): V[] {
    return this.store.listKeyed(kind, limit);
  }
  listKeyedBy<V>(kind: KeyedKind<V>, index: string, key: LookupKey, range?: LookupRange): V[] {
    return this.store.listKeyedBy(kind, index, key, range);
  }
  lookupEntries<V>(kind: KeyedKind<V>, index: string, key: LookupKey, range?: LookupRange): LookupEntry[] {
    if (!kind.relayed) return this.store.lookupEntries(kind, index, key, range);
    const memo = this.entries.get(kind.name) ?? this.entries.set(kind.name, new Memo<LookupEntry[]>()).get(kind.name)!;
    const found = memo.get(JSON.stringify([index, key, range ?? null]), () => this.store.lookupEntries(kind, index, key, range));
    // A copy of the list (its entries are the memo's, frozen): a caller may sort or extend what it is given.
    return [...found!];
  }
  tallyOf<V>(kind: KeyedKind<V>, index: string, first: LookupPart): LookupTally {
    return this.store.tallyOf(kind, index, first);
  }
}
