// The LMDB store: every read and write of the layout (layout.ts), and the transactions writes run in.
// Opened by open.ts; code above src/store sees it through the interfaces in interfaces.ts.
import { ABORT, type Database, type RootDatabase } from 'lmdb';
import { FlagwireError } from '../errors.js';
import { kMaxEmailLength, type Membership, type Org, type Role, type User } from '../model/accounts.js';
import type { AuditEntry } from '../model/audit.js';
import type { Flag, FlagUsage } from '../model/flags.js';
import type { Invitation } from '../model/invitations.js';
import type { MailMessage } from '../model/mail.js';
import type { Audience, Project } from '../model/projects.js';
import type { Credential, Session } from '../model/sessions.js';
import type { Token, TokenActivity } from '../model/tokens.js';
import type { Change, Revision } from './changes.js';
import { kCommitFailedDetail, type AuditPage, type Settled, type Store, type StoreWriter } from './interfaces.js';
import { dueKey, isPending, kSchemaVersion, userEmailKey, type Databases } from './layout.js';
import { openDataFile, type OpenedDataFile, type StoreOptions } from './open.js';

const kMaxRange = '\uffff';
/**
 * Every id Flagwire makes is a short random string. A longer one (an id taken from a URL or the command
 * line) cannot be stored, so it is absent; and LMDB keys are limited in size (lmdb-js throws a
 * RangeError for a key string of a few thousand characters), so it must not reach LMDB at all.
 */
const kMaxIdLength = 512;
const tooLong = (id: string) => id.length > kMaxIdLength;
/** The databases a full copy of the system of record replaces (everything but meta). */
const kReplicatedDbs = [
  'orgs',
  'users',
  'members',
  'projects',
  'audiences',
  'flags',
  'tokens',
  'tokenHashes',
  'projectIndex',
  'audit',
  'activity',
  'mail',
  'mailDue',
  'usage',
  'auth',
] as const satisfies readonly (keyof Databases)[];

export class LmdbStore implements Store, StoreWriter {
  readonly path: string;
  private readonly root: RootDatabase;
  private readonly db: Databases;
  private inTxn = false;
  /** Set by the writes of the current transaction that change configuration (see configSeq). */
  private configChanged = false;
  /** The change set the writes append to while `rehearse` runs; null otherwise. */
  private recording: Change[] | null = null;

  private constructor(file: OpenedDataFile) {
    this.path = file.path;
    this.root = file.root;
    this.db = file.dbs;
  }

  /** Opens (creating if needed) the store in `dataDir`; refuses a newer or foreign layout (open.ts). */
  static open(dataDir: string, options: StoreOptions = {}): LmdbStore {
    return new LmdbStore(openDataFile(dataDir, options));
  }

  /** One LMDB write transaction (the contract: StoreTransactions in interfaces.ts). */
  transact<T>(fn: (writer: StoreWriter) => T): T {
    if (this.inTxn) return fn(this);
    this.inTxn = true;
    this.configChanged = false;
    let applied = false;
    try {
      return this.root.transactionSync(() => {
        const result = fn(this);
        // Only a configuration change moves the number readers key their caches on: the token
        // activity flush (every second under Management API traffic), the flag usage flush (every
        // minute under evaluation traffic), audit and mail writes would
        // otherwise make every eval worker recompile its flags and the API drop its memo each time.
        if (this.configChanged) this.db.meta.putSync('configSeq', this.configSeq() + 1);
        applied = true;
        return result;
      });
    } catch (err) {
      // `fn` ran to its end, so the commit itself failed (disk full, read-only filesystem, I/O
      // error): nothing was written. A defined error, so the API answers 503 and the console
      // "Storage unavailable", instead of an unexpected-error 500.
      if (applied) throw new FlagwireError('STORE_UNAVAILABLE', kCommitFailedDetail, { cause: err });
      throw err;
    } finally {
      this.inTxn = false;
    }
  }

  /** Group commit: each function in its own LMDB child transaction inside one write transaction. */
  transactEach<T>(fns: readonly ((writer: StoreWriter) => T)[]): Settled<T>[] {
    return this.transact(() =>
      fns.map((fn): Settled<T> => {
        try {
          return { ok: true, value: this.root.transactionSync(() => fn(this)) };
        } catch (error) {
          return { ok: false, error };
        }
      }),
    );
  }

  /**
   * Runs each function as transactEach does, then rolls everything back: nothing is written here, and
   * what the functions wrote (the ones that did not throw) is returned as a change set. PostgreSQL's
   * write path (src/store/pg/pg-write-path.ts) commits that change set there first, then applies it
   * here with applyRevisions, so readers never see a change the system of record does not hold.
   */
  rehearse<T>(fns: readonly ((writer: StoreWriter) => T)[]): { settled: Settled<T>[]; changes: Change[] } {
    if (this.inTxn) throw new Error('rehearse runs outside any transaction');
    const changes: Change[] = [];
    let settled: Settled<T>[] = [];
    this.inTxn = true;
    this.recording = changes;
    try {
      this.root.transactionSync(() => {
        settled = fns.map((fn): Settled<T> => {
          const mark = changes.length;
          try {
            return { ok: true, value: this.root.transactionSync(() => fn(this)) };
          } catch (error) {
            changes.length = mark;
            return { ok: false, error };
          }
        });
        return ABORT;
      });
    } finally {
      this.inTxn = false;
      this.recording = null;
    }
    return { settled, changes };
  }

  // ---- the local copy of a system of record (src/store/pg/) ----------------------------------

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
    return this.transact(() => {
      let at = this.replicaRevision();
      for (const { revision, changes } of revisions) {
        if (revision <= at) continue;
        if (revision !== at + 1) throw new Error(`revision ${revision} cannot follow ${at}: the change log has a gap`);
        for (const change of changes) this.applyChange(change);
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
    this.transact(() => {
      if (this.replicaOf() === source && this.replicaRevision() >= revision) return;
      for (const name of kReplicatedDbs) {
        const db = this.db[name] as Database<unknown, string> | undefined;
        if (db !== undefined) for (const key of [...db.getKeys()]) db.removeSync(key);
      }
      for (const key of ['auditSeq', 'mailSeq', 'demoSeeded']) this.db.meta.removeSync(key);
      for (const change of records) this.applyChange(change);
      this.configChanged = true;
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
      const all = <V, K extends string | number | (string | number)[]>(db: Database<V, K> | undefined) =>
        db === undefined ? [] : [...db.getRange({ transaction })];
      for (const { value } of all(this.db.orgs)) out.push({ kind: 'org', value });
      for (const { value } of all(this.db.users)) out.push({ kind: 'user', value });
      for (const { key, value } of all(this.db.members))
        out.push({ kind: 'member', value: { orgId: key[0], userId: key[1], role: value } });
      for (const { value } of all(this.db.projects)) out.push({ kind: 'project', value });
      for (const { value } of all(this.db.audiences)) out.push({ kind: 'audience', value });
      for (const { value } of all(this.db.flags)) out.push({ kind: 'flag', value });
      for (const { value } of all(this.db.tokens)) out.push({ kind: 'token', value });
      for (const { value } of all(this.db.audit)) out.push({ kind: 'audit', value });
      for (const { value } of all(this.db.activity)) out.push({ kind: 'activity', value });
      for (const { value } of all(this.db.usage)) out.push({ kind: 'usage', value });
      for (const { value } of all(this.db.mail)) out.push({ kind: 'mail', value });
      for (const { key, value } of all(this.db.auth)) {
        if (key[0] === 'credential') out.push({ kind: 'credential', value: value as Credential });
        else if (key[0] === 'session') out.push({ kind: 'session', value: value as Session });
        else if (key[0] === 'invitation') out.push({ kind: 'invitation', value: value as Invitation });
      }
      const seeded = this.db.meta.get('demoSeeded', { transaction }) as number | undefined;
      if (seeded !== undefined) out.push({ kind: 'demoSeeded', value: seeded });
    } finally {
      transaction.done();
    }
    return out;
  }

  /** Marks this store as the copy of system of record `source` at `revision` (after migrate-to-postgres copied it there). */
  adoptAsCopy(source: string, revision: number): void {
    this.transact(() => {
      this.db.meta.putSync('revision', revision);
      this.db.meta.putSync('replicaOf', source);
    });
  }

  private applyChange(change: Change): void {
    switch (change.kind) {
      case 'org':
        return this.putOrg(change.value);
      case 'user':
        return this.putUser(change.value);
      case 'member':
        return this.putMember(change.value);
      case 'project':
        return this.putProject(change.value);
      case 'audience':
        return this.putAudience(change.value);
      case 'flag':
        return this.putFlag(change.value);
      case 'flagDeleted':
        return this.deleteFlag(change.value);
      case 'token':
        return this.putToken(change.value);
      case 'activity':
        return this.putActivity(change.value);
      case 'usage':
        return this.putUsage(change.value);
      case 'demoSeeded':
        return this.markDemoSeeded(change.value);
      case 'credential':
        return this.putCredential(change.value);
      case 'session':
        return this.putSession(change.value);
      case 'sessionEnded':
        return this.deleteSession(change.value);
      case 'invitation':
        return this.putInvitation(change.value);
      case 'invitationEnded':
        return this.deleteInvitation(change.value);
      case 'audit':
        this.db.audit.putSync([change.value.projectId, change.value.seq], change.value);
        return this.raiseSeq('auditSeq', change.value.seq);
      case 'mail':
        this.putMail(change.value);
        return this.raiseSeq('mailSeq', change.value.seq);
    }
  }

  private raiseSeq(key: 'auditSeq' | 'mailSeq', seq: number): void {
    if (seq > ((this.db.meta.get(key) as number | undefined) ?? 0)) this.db.meta.putSync(key, seq);
  }

  resetReadTxn(): void {
    this.root.resetReadTxn();
  }

  async close(): Promise<void> {
    await this.root.close();
  }

  // ---- reads -------------------------------------------------------------------------------

  configSeq(): number {
    return (this.db.meta.get('configSeq') as number | undefined) ?? 0;
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

  getOrg(id: string): Org | undefined {
    return tooLong(id) ? undefined : this.db.orgs.get(id);
  }

  /** Oldest first, as every list the console prints. */
  listOrgs(): Org[] {
    return [...this.db.orgs.getRange().map(({ value }) => value)].sort(byCreation);
  }

  getUser(id: string): User | undefined {
    return tooLong(id) ? undefined : this.db.users.get(id);
  }

  /** Oldest first. */
  listUsers(): User[] {
    return [...this.db.users.getRange().map(({ value }) => value)].sort(byCreation);
  }

  /**
   * Without case. Through the e-mail index (a sign-in with an unknown address must not cost a scan of
   * every user on the front-end thread); a read-only open of a file older than schema 4 has no index
   * and scans.
   */
  findUserByEmail(email: string): User | undefined {
    const wanted = email.toLowerCase();
    const auth = this.db.auth;
    if (auth === undefined) {
      for (const { value } of this.db.users.getRange()) if (value.email.toLowerCase() === wanted) return value;
      return undefined;
    }
    // No user's address is longer (userCreate), and a longer one might not be a valid LMDB key.
    if (wanted.length > kMaxEmailLength) return undefined;
    const [key] = auth.getKeys({ start: ['userEmail', wanted], end: ['userEmail', wanted, kMaxRange], limit: 1 });
    return key === undefined ? undefined : this.db.users.get((key as string[])[2]!);
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

  getProject(id: string): Project | undefined {
    return tooLong(id) ? undefined : this.db.projects.get(id);
  }

  /** Oldest first. */
  listProjects(): Project[] {
    return [...this.db.projects.getRange().map(({ value }) => value)].sort(byCreation);
  }

  getAudience(id: string): Audience | undefined {
    return tooLong(id) ? undefined : this.db.audiences.get(id);
  }

  listAudiences(projectId: string): Audience[] {
    return this.indexed(projectId, 'a', this.db.audiences);
  }

  getFlag(id: string): Flag | undefined {
    return tooLong(id) ? undefined : this.db.flags.get(id);
  }

  listFlags(projectId: string): Flag[] {
    return this.indexed(projectId, 'f', this.db.flags).sort(byCreation);
  }

  getToken(id: string): Token | undefined {
    return tooLong(id) ? undefined : this.db.tokens.get(id);
  }

  getTokenByHash(secretHash: string): Token | undefined {
    const id = this.db.tokenHashes.get(secretHash);
    return id === undefined ? undefined : this.db.tokens.get(id);
  }

  listTokens(projectId: string): Token[] {
    return this.indexed(projectId, 't', this.db.tokens).sort(byCreation);
  }

  listAudit(projectId: string, page: AuditPage): AuditEntry[] {
    if (tooLong(projectId)) return [];
    const start: [string, number] = [projectId, page.before === null ? Number.MAX_SAFE_INTEGER : page.before - 1];
    return [...this.db.audit.getRange({ start, end: [projectId, -1], reverse: true, limit: page.limit }).map(({ value }) => value)];
  }

  getActivity(tokenId: string): TokenActivity | undefined {
    return tooLong(tokenId) ? undefined : this.db.activity.get(tokenId);
  }

  getUsage(flagId: string): FlagUsage | undefined {
    return tooLong(flagId) ? undefined : this.db.usage?.get(flagId);
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

  private indexed<V>(projectId: string, kind: string, source: Database<V, string>): V[] {
    if (tooLong(projectId)) return [];
    const out: V[] = [];
    for (const key of this.db.projectIndex.getKeys({ start: [projectId, kind], end: [projectId, kind, kMaxRange] })) {
      const value = source.get(key[2]);
      if (value !== undefined) out.push(value);
    }
    return out;
  }

  // ---- writes (inside transact) ------------------------------------------------------------

  private assertTxn(): void {
    if (!this.inTxn) throw new Error('store writes must run inside Store.transact');
  }

  private assertConfigTxn(): void {
    this.assertTxn();
    this.configChanged = true;
  }

  putOrg(org: Org): void {
    this.assertConfigTxn();
    this.db.orgs.putSync(org.id, org);
    this.recording?.push({ kind: 'org', value: org });
  }

  putUser(user: User): void {
    this.assertConfigTxn();
    this.db.users.putSync(user.id, user);
    // Derived, as the project index: a replica rebuilds it from the user records it applies.
    this.db.auth?.putSync(userEmailKey(user), null);
    this.recording?.push({ kind: 'user', value: user });
  }

  putMember(member: Membership): void {
    this.assertConfigTxn();
    this.db.members.putSync([member.orgId, member.userId], member.role);
    this.recording?.push({ kind: 'member', value: member });
  }

  putProject(project: Project): void {
    this.assertConfigTxn();
    this.db.projects.putSync(project.id, project);
    this.recording?.push({ kind: 'project', value: project });
  }

  putAudience(audience: Audience): void {
    this.assertConfigTxn();
    this.db.audiences.putSync(audience.id, audience);
    this.db.projectIndex.putSync([audience.projectId, 'a', audience.id], null);
    this.recording?.push({ kind: 'audience', value: audience });
  }

  putFlag(flag: Flag): void {
    this.assertConfigTxn();
    this.db.flags.putSync(flag.id, flag);
    this.db.projectIndex.putSync([flag.projectId, 'f', flag.id], null);
    this.recording?.push({ kind: 'flag', value: flag });
  }

  deleteFlag(flag: Flag): void {
    this.assertConfigTxn();
    this.db.flags.removeSync(flag.id);
    this.db.projectIndex.removeSync([flag.projectId, 'f', flag.id]);
    this.db.usage!.removeSync(flag.id);
    this.recording?.push({ kind: 'flagDeleted', value: flag });
  }

  putToken(token: Token): void {
    this.assertConfigTxn();
    this.db.tokens.putSync(token.id, token);
    this.db.tokenHashes.putSync(token.secretHash, token.id);
    this.db.projectIndex.putSync([token.projectId, 't', token.id], null);
    this.recording?.push({ kind: 'token', value: token });
  }

  appendAudit(entry: Omit<AuditEntry, 'seq'>): AuditEntry {
    this.assertTxn();
    const full: AuditEntry = { seq: this.nextSeq('auditSeq'), ...entry };
    this.db.audit.putSync([full.projectId, full.seq], full);
    this.recording?.push({ kind: 'audit', value: full });
    return full;
  }

  putActivity(activity: TokenActivity): void {
    this.assertTxn();
    this.db.activity.putSync(activity.tokenId, activity);
    this.recording?.push({ kind: 'activity', value: activity });
  }

  putUsage(usage: FlagUsage): void {
    this.assertTxn();
    this.db.usage!.putSync(usage.flagId, usage);
    this.recording?.push({ kind: 'usage', value: usage });
  }

  appendMail(message: Omit<MailMessage, 'seq'>): MailMessage {
    this.assertTxn();
    const full: MailMessage = { seq: this.nextSeq('mailSeq'), ...message };
    this.db.mail.putSync(full.seq, full);
    if (isPending(full)) this.db.mailDue.putSync(dueKey(full), null);
    this.recording?.push({ kind: 'mail', value: full });
    return full;
  }

  putMail(message: MailMessage): void {
    this.assertTxn();
    const before = this.db.mail.get(message.seq);
    if (before !== undefined && isPending(before)) this.db.mailDue.removeSync(dueKey(before));
    this.db.mail.putSync(message.seq, message);
    if (isPending(message)) this.db.mailDue.putSync(dueKey(message), null);
    this.recording?.push({ kind: 'mail', value: message });
  }

  markDemoSeeded(at: number): void {
    this.assertTxn();
    this.db.meta.putSync('demoSeeded', at);
    this.recording?.push({ kind: 'demoSeeded', value: at });
  }

  putCredential(credential: Credential): void {
    this.assertTxn();
    this.db.auth!.putSync(['credential', credential.userId], credential);
    this.recording?.push({ kind: 'credential', value: credential });
  }

  putSession(session: Session): void {
    this.assertTxn();
    this.db.auth!.putSync(['session', session.idHash], session);
    this.db.auth!.putSync(['userSession', session.userId, session.idHash], null);
    this.recording?.push({ kind: 'session', value: session });
  }

  deleteSession(session: Session): void {
    this.assertTxn();
    this.db.auth!.removeSync(['session', session.idHash]);
    this.db.auth!.removeSync(['userSession', session.userId, session.idHash]);
    this.recording?.push({ kind: 'sessionEnded', value: session });
  }

  putInvitation(invitation: Invitation): void {
    this.assertTxn();
    this.db.auth!.putSync(['invitation', invitation.id], invitation);
    this.db.auth!.putSync(['orgInvitation', invitation.orgId, invitation.id], null);
    this.db.auth!.putSync(['emailInvitation', invitation.email, invitation.id], null);
    this.recording?.push({ kind: 'invitation', value: invitation });
  }

  deleteInvitation(invitation: Invitation): void {
    this.assertTxn();
    this.db.auth!.removeSync(['invitation', invitation.id]);
    this.db.auth!.removeSync(['orgInvitation', invitation.orgId, invitation.id]);
    this.db.auth!.removeSync(['emailInvitation', invitation.email, invitation.id]);
    this.recording?.push({ kind: 'invitationEnded', value: invitation });
  }

  private nextSeq(key: 'auditSeq' | 'mailSeq'): number {
    const next = ((this.db.meta.get(key) as number | undefined) ?? 0) + 1;
    this.db.meta.putSync(key, next);
    return next;
  }
}

function byCreation(a: { createdAt: number; id: string }, b: { createdAt: number; id: string }): number {
  return a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
