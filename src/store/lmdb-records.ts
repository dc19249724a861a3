// The records of the LMDB store: the simple kinds' generic reads and writes (getKeyed, putKeyed and their
// lookups), and those of the kinds still kept in a layout of their own (memberships, audit, mail and
// console sign-in), in the layout of layout.ts. The writes check that they run inside a
// transaction (LmdbStore, lmdb-store.ts, owns the transactions), note when they change configuration
// (configSeq), and hand what they write to the change recorder (change-recorder.ts).
import { FlagwireError } from '../errors.js';
import { isPending } from '../model/mail.js';
import { kMaxEmailLength, type Membership, type Role } from '../model/accounts.js';
import type { AuditEntry } from '../model/audit.js';
import type { Invitation } from '../model/invitations.js';
import type { MailMessage } from '../model/mail.js';
import type { Credential, Session } from '../model/sessions.js';
import type { ChangeLog } from './change-log.js';
import { byCreation } from '../model/by-creation.js';
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
import {
  kAuditRecords,
  kCredentialRecords,
  kDemoSeededRecords,
  kInvitationRecords,
  kMailRecords,
  kMemberRecords,
  kSessionRecords,
  type RecordKind,
} from './record-kinds.js';
import { dueKey, kSchemaVersion, kUserOrgsSchema, userOrgKey, databaseNamed, type Databases } from './layout.js';
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

const kMaxRange = '\uffff';

/** An id too long to be a key Flagwire made is absent, and never reaches LMDB (keyed-lookups.ts says why). */
const tooLong = tooLongPart;

export abstract class LmdbRecords implements StoreWriter {
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

  isDemoSeeded(): boolean {
    return this.db.meta.get('demoSeeded') !== undefined;
  }

  isEmpty(): boolean {
    return this.db.orgs.getKeysCount() === 0 && this.db.users.getKeysCount() === 0 && this.db.projects.getKeysCount() === 0;
  }

  getRole(orgId: string, userId: string): Role | undefined {
    return tooLong(orgId) || tooLong(userId) ? undefined : this.db.members.get([orgId, userId]);
  }

  listMembers(orgId: string): Membership[] {
    return [...this.db.members.getRange({ start: [orgId], end: [orgId, kMaxRange] })].map(({ key, value }) => ({
      orgId,
      userId: key[1],
      role: value,
    }));
  }

  /**
   * Through the auth database's index of a user's organisations (kUserOrgsSchema): the console's home must not
   * read every organisation on the front-end thread. A read-only open of an older file reads every membership.
   */
  listUserMemberships(userId: string): Membership[] {
    if (tooLong(userId)) return [];
    const auth = this.db.auth;
    if (auth === undefined || this.schemaVersion() < kUserOrgsSchema) {
      const out: Membership[] = [];
      for (const { key, value } of this.db.members.getRange()) if (key[1] === userId) out.push({ orgId: key[0], userId, role: value });
      return out;
    }
    const out: Membership[] = [];
    for (const key of auth.getKeys({ start: ['userOrg', userId], end: ['userOrg', userId, kMaxRange] })) {
      const orgId = (key as string[])[2]!;
      const role = this.getRole(orgId, userId);
      if (role !== undefined) out.push({ orgId, userId, role });
    }
    return out;
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

  listKeyed<V>(kind: KeyedKind<V>): V[] {
    const db = databaseNamed<V>(this.db, kind.database);
    return db === undefined ? [] : [...db.getRange().map(({ value }) => value)];
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

  listMail(): MailMessage[] {
    return [...this.db.mail.getRange().map(({ value }) => value)];
  }

  getMail(seq: number): MailMessage | undefined {
    return this.db.mail.get(seq);
  }

  listDueMail(now: number, limit: number): MailMessage[] {
    const out: MailMessage[] = [];
    for (const key of this.db.mailDue.getKeys({ end: [now, Number.MAX_SAFE_INTEGER], limit })) {
      const message = this.db.mail.get(key[1]);
      if (message !== undefined) out.push(message);
    }
    return out;
  }

  getCredential(userId: string): Credential | undefined {
    return tooLong(userId) ? undefined : (this.db.auth?.get(['credential', userId]) as Credential | undefined);
  }

  getSession(idHash: string): Session | undefined {
    return tooLong(idHash) ? undefined : (this.db.auth?.get(['session', idHash]) as Session | undefined);
  }

  listUserSessions(userId: string): Session[] {
    const auth = this.db.auth;
    if (auth === undefined || tooLong(userId)) return [];
    const out: Session[] = [];
    for (const key of auth.getKeys({ start: ['userSession', userId], end: ['userSession', userId, kMaxRange] })) {
      const session = auth.get(['session', (key as string[])[2]!]) as Session | undefined;
      if (session !== undefined) out.push(session);
    }
    return out;
  }

  getInvitation(id: string): Invitation | undefined {
    return tooLong(id) ? undefined : (this.db.auth?.get(['invitation', id]) as Invitation | undefined);
  }

  listOrgInvitations(orgId: string): Invitation[] {
    return tooLong(orgId) ? [] : this.invitationsIndexed('orgInvitation', orgId);
  }

  listEmailInvitations(email: string): Invitation[] {
    const wanted = email.toLowerCase();
    return wanted.length > kMaxEmailLength ? [] : this.invitationsIndexed('emailInvitation', wanted);
  }

  private invitationsIndexed(index: 'orgInvitation' | 'emailInvitation', value: string): Invitation[] {
    const auth = this.db.auth;
    if (auth === undefined) return [];
    const out: Invitation[] = [];
    for (const key of auth.getKeys({ start: [index, value], end: [index, value, kMaxRange] })) {
      const invitation = auth.get(['invitation', (key as string[])[2]!]) as Invitation | undefined;
      if (invitation !== undefined) out.push(invitation);
    }
    return out.sort(byCreation);
  }

  // ---- writes (inside transact) ------------------------------------------------------------

  private assertTxn(): void {
    if (!this.inTxn) throw new Error('store writes must run inside Store.transact');
  }

  private assertConfigTxn(): void {
    this.assertTxn();
    this.configChanged = true;
  }

  putMember(member: Membership): void {
    this.assertConfigTxn();
    this.db.members.putSync([member.orgId, member.userId], member.role);
    // Derived, as the e-mail index: a copy rebuilds it from the memberships it applies.
    this.db.auth?.putSync(userOrgKey(member), null);
    this.recordPut(kMemberRecords, member);
  }

  deleteMember(member: Pick<Membership, 'orgId' | 'userId'>): void {
    this.assertConfigTxn();
    const role = this.getRole(member.orgId, member.userId);
    if (role === undefined) return;
    this.db.members.removeSync([member.orgId, member.userId]);
    this.db.auth?.removeSync(userOrgKey(member));
    this.recordRemoval(kMemberRecords, { orgId: member.orgId, userId: member.userId, role });
  }

  appendAudit(entry: NewAuditEntry): AuditEntry {
    this.assertTxn();
    const full: AuditEntry = { seq: this.nextSeq('auditSeq'), ...entry };
    this.db.audit.putSync([full.projectId, full.seq], full);
    this.recordPut(kAuditRecords, full);
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
    this.recorder.record(changeOf(kind.name, value), logged ? stored : undefined);
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

  /** Hands the change that put `value`, a record of `kind`, written over `base` (baseOf), to the recorder. */
  private recordPut<V>(kind: RecordKind<V>, value: V, base?: V): void {
    this.recorder.record(changeOf(kind.name, value), base);
  }

  /** Hands the change that deleted `value`, a record of `kind`, to the recorder. */
  private recordRemoval<V>(kind: RecordKind<V>, value: V): void {
    if (kind.removal === undefined) throw new Error(`record kind ${kind.name} declares no deletion`);
    this.recorder.record(changeOf(kind.removal.name, value));
  }

  appendMail(message: Omit<MailMessage, 'seq'>): MailMessage {
    this.assertTxn();
    const full: MailMessage = { seq: this.nextSeq('mailSeq'), ...message };
    this.db.mail.putSync(full.seq, full);
    if (isPending(full)) this.db.mailDue.putSync(dueKey(full), null);
    this.recordPut(kMailRecords, full);
    return full;
  }

  putMail(message: MailMessage): void {
    this.assertTxn();
    const before = this.db.mail.get(message.seq);
    if (before !== undefined && isPending(before)) this.db.mailDue.removeSync(dueKey(before));
    this.db.mail.putSync(message.seq, message);
    if (isPending(message)) this.db.mailDue.putSync(dueKey(message), null);
    this.recordPut(kMailRecords, message);
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

  markDemoSeeded(at: number): void {
    this.assertTxn();
    this.db.meta.putSync('demoSeeded', at);
    this.recordPut(kDemoSeededRecords, at);
  }

  putCredential(credential: Credential): void {
    this.assertTxn();
    this.db.auth!.putSync(['credential', credential.userId], credential);
    this.recordPut(kCredentialRecords, credential);
  }

  putSession(session: Session): void {
    this.assertTxn();
    this.db.auth!.putSync(['session', session.idHash], session);
    this.db.auth!.putSync(['userSession', session.userId, session.idHash], null);
    this.recordPut(kSessionRecords, session);
  }

  deleteSession(session: Session): void {
    this.assertTxn();
    this.db.auth!.removeSync(['session', session.idHash]);
    this.db.auth!.removeSync(['userSession', session.userId, session.idHash]);
    this.recordRemoval(kSessionRecords, session);
  }

  putInvitation(invitation: Invitation): void {
    this.assertTxn();
    this.db.auth!.putSync(['invitation', invitation.id], invitation);
    this.db.auth!.putSync(['orgInvitation', invitation.orgId, invitation.id], null);
    this.db.auth!.putSync(['emailInvitation', invitation.email, invitation.id], null);
    this.recordPut(kInvitationRecords, invitation);
  }

  deleteInvitation(invitation: Invitation): void {
    this.assertTxn();
    this.db.auth!.removeSync(['invitation', invitation.id]);
    this.db.auth!.removeSync(['orgInvitation', invitation.orgId, invitation.id]);
    this.db.auth!.removeSync(['emailInvitation', invitation.email, invitation.id]);
    this.recordRemoval(kInvitationRecords, invitation);
  }

  private nextSeq(key: 'auditSeq' | 'mailSeq'): number {
    const next = ((this.db.meta.get(key) as number | undefined) ?? 0) + 1;
    this.db.meta.putSync(key, next);
    return next;
  }
}
