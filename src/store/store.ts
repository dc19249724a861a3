// The LMDB store: the only module that knows database names and key layouts.
//
// Layout (one LMDB environment, named sub-databases, msgpack values):
//   meta             'schemaVersion' -> number, 'configSeq' -> number (bumped by every write txn that
//                    changes what readers cache: orgs, users, members, projects, audiences, flags, tokens),
//                    'auditSeq' / 'mailSeq' -> last sequence numbers, 'demoSeeded' -> number
//   orgs             orgId -> Org              users       userId -> User
//   members          [orgId, userId] -> Role   projects    projectId -> Project
//   audiences        audienceId -> Audience    flags       flagId -> Flag
//   tokens           tokenId -> Token          tokenHashes sha256 hex -> tokenId
//   projectIndex     [projectId, 'a'|'f'|'t', id] -> null  (audiences, flags, tokens of a project)
//   audit            [projectId, seq] -> AuditEntry        activity  tokenId -> TokenActivity
//   mail             seq -> MailMessage                    (every message, kept: `mail list`)
//   mailDue          [nextAttemptAt, seq] -> null          (messages still to send: not sent, not given
//                                                           up; the mailer's poll reads only these)
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { FlagwireError } from '../errors.js';
import { checkDataFile, StoreOpenError } from './data-file.js';

export { StoreOpenError };
import type {
  Audience, AuditEntry, Flag, MailMessage, Membership, Org, Project, Role, Token, TokenActivity, User,
} from './records.js';

/** The LMDB data file in a data dir. */
export function dataFilePath(dataDir: string): string {
  return join(dataDir, kFileName);
}

/**
 * Bumped when the layout changes incompatibly; a data dir written by a newer version is refused, an
 * older one is migrated when opened for writing. 2: the mailDue index (an older Flagwire would append
 * mail without indexing it, and that mail would never be sent).
 */
export const kSchemaVersion = 2;
const kFileName = 'flagwire.mdb';
/** The named databases of the layout above: anything else in the file's main database is not ours. */
export const kDbNames: ReadonlySet<string> = new Set([
  'meta', 'orgs', 'users', 'members', 'projects', 'audiences', 'flags', 'tokens', 'tokenHashes', 'projectIndex', 'audit',
  'activity', 'mail', 'mailDue',
]);
/** The detail of a write whose commit failed (the writer answers it 503; the console exits 1). */
export const kCommitFailedDetail = 'The change could not be written to storage (disk full or read-only); nothing was changed. Retry later.';

export interface AuditPage {
  limit: number;
  /** Only entries with a sequence number below this. */
  before: number | null;
}

/** Everything the API, the evaluation workers and the console read. */
export interface StoreReader {
  configSeq(): number;
  schemaVersion(): number;
  isDemoSeeded(): boolean;
  isEmpty(): boolean;
  getOrg(id: string): Org | undefined;
  listOrgs(): Org[];
  getUser(id: string): User | undefined;
  listUsers(): User[];
  findUserByEmail(email: string): User | undefined;
  getRole(orgId: string, userId: string): Role | undefined;
  listMembers(orgId: string): Membership[];
  getProject(id: string): Project | undefined;
  listProjects(): Project[];
  getAudience(id: string): Audience | undefined;
  listAudiences(projectId: string): Audience[];
  getFlag(id: string): Flag | undefined;
  listFlags(projectId: string): Flag[];
  getToken(id: string): Token | undefined;
  getTokenByHash(secretHash: string): Token | undefined;
  listTokens(projectId: string): Token[];
  listAudit(projectId: string, page: AuditPage): AuditEntry[];
  getActivity(tokenId: string): TokenActivity | undefined;
  /** Every message of the outbox, oldest first. */
  listMail(): MailMessage[];
  getMail(seq: number): MailMessage | undefined;
  /** Up to `limit` messages still to send whose next attempt is due at `now`, earliest due first. */
  listDueMail(now: number, limit: number): MailMessage[];
}

/** The write side, only usable inside `Store.transact`. */
export interface StoreWriter extends StoreReader {
  putOrg(org: Org): void;
  putUser(user: User): void;
  putMember(member: Membership): void;
  putProject(project: Project): void;
  putAudience(audience: Audience): void;
  putFlag(flag: Flag): void;
  deleteFlag(flag: Flag): void;
  putToken(token: Token): void;
  appendAudit(entry: Omit<AuditEntry, 'seq'>): AuditEntry;
  putActivity(activity: TokenActivity): void;
  appendMail(message: Omit<MailMessage, 'seq'>): MailMessage;
  putMail(message: MailMessage): void;
  markDemoSeeded(at: number): void;
}

export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

export interface StoreOptions {
  readOnly?: boolean;
}

const kMaxRange = '\uffff';
/**
 * Every id Flagwire makes is a short random string. A longer one (an id taken from a URL or the command
 * line) cannot be stored, so it is absent; and LMDB keys are limited in size (lmdb-js throws a
 * RangeError for a key string of a few thousand characters), so it must not reach LMDB at all.
 */
const kMaxIdLength = 512;
const tooLong = (id: string) => id.length > kMaxIdLength;

export class Store implements StoreWriter {
  readonly path: string;
  private readonly root: RootDatabase;
  private readonly meta: Database<unknown, string>;
  private readonly orgs: Database<Org, string>;
  private readonly users: Database<User, string>;
  private readonly members: Database<Role, [string, string]>;
  private readonly projects: Database<Project, string>;
  private readonly audiences: Database<Audience, string>;
  private readonly flags: Database<Flag, string>;
  private readonly tokens: Database<Token, string>;
  private readonly tokenHashes: Database<string, string>;
  private readonly projectIndex: Database<null, [string, string, string]>;
  private readonly audit: Database<AuditEntry, [string, number]>;
  private readonly activity: Database<TokenActivity, string>;
  private readonly mail: Database<MailMessage, number>;
  private readonly mailDue: Database<null, [number, number]>;
  private inTxn = false;
  /** Set by the writes of the current transaction that change configuration (see configSeq). */
  private configChanged = false;

  private constructor(dataDir: string, options: StoreOptions) {
    this.path = join(dataDir, kFileName);
    refuseForeignFiles(dataDir);
    checkDataFile(this.path);
    try {
      this.root = openRoot(this.path, options.readOnly ?? false);
    } catch (err) {
      throw new StoreOpenError(`cannot open the data file ${this.path}: ${(err as Error).message}`);
    }
    // Before any openDB below creates a database: an LMDB file of another application is refused,
    // never written into.
    const names = [...this.root.getKeys()].map(String);
    // A newer Flagwire may have added databases: say so, rather than call its file foreign.
    if (names.includes('meta')) {
      try {
        refuseNewerSchema(this.path, this.root.openDB<unknown, string>({ name: 'meta' }).get('schemaVersion'));
      } catch (err) {
        void this.root.close();
        throw err;
      }
    }
    const foreign = names.filter((name) => !kDbNames.has(name));
    if (foreign.length > 0) {
      void this.root.close();
      throw new StoreOpenError(
        `${this.path} is an LMDB file of another application (it holds ${foreign.slice(0, 3).map((n) => `"${n}"`).join(', ')}); Flagwire will not write into it: use an empty or Flagwire-only data directory`,
      );
    }
    const db = <V, K extends string | number | (string | number)[]>(name: string) =>
      this.root.openDB<V, K>({ name }) as unknown as Database<V, K>;
    this.meta = db('meta');
    this.orgs = db('orgs');
    this.users = db('users');
    this.members = db('members');
    this.projects = db('projects');
    this.audiences = db('audiences');
    this.flags = db('flags');
    this.tokens = db('tokens');
    this.tokenHashes = db('tokenHashes');
    this.projectIndex = db('projectIndex');
    this.audit = db('audit');
    this.activity = db('activity');
    this.mail = db('mail');
    this.mailDue = db('mailDue');
  }

  /** Opens (creating if needed) the store in `dataDir`; refuses a newer or foreign layout. */
  static open(dataDir: string, options: StoreOptions = {}): Store {
    const store = new Store(dataDir, options);
    try {
      store.checkSchema(options.readOnly ?? false);
    } catch (err) {
      void store.root.close();
      throw err;
    }
    return store;
  }

  private checkSchema(readOnly: boolean): void {
    const version = this.meta.get('schemaVersion');
    if (version === undefined) {
      if (readOnly) return;
      this.root.transactionSync(() => {
        if (this.meta.get('schemaVersion') === undefined) this.meta.putSync('schemaVersion', kSchemaVersion);
      });
      return;
    }
    if (typeof version !== 'number') {
      throw new StoreOpenError(`${this.path} is not a Flagwire data file (no valid schema version)`);
    }
    refuseNewerSchema(this.path, version);
    // A read-only open of a schema 1 file reads it as it is: only the mailer, which runs in a server
    // that opened the store for writing first, reads the mailDue index.
    if (version === 1 && !readOnly) this.migrateFrom1();
  }

  /**
   * Schema 1 to 2: index the mail still to send. One transaction, re-checked inside it, so a crash
   * leaves schema 1 (migrated again at the next open) and two processes opening at once migrate once.
   */
  private migrateFrom1(): void {
    this.root.transactionSync(() => {
      if (this.meta.get('schemaVersion') !== 1) return;
      for (const { value } of this.mail.getRange()) {
        if (isPending(value)) this.mailDue.putSync(dueKey(value), null);
      }
      this.meta.putSync('schemaVersion', 2);
    });
  }

  /**
   * Runs `fn` in one LMDB write transaction, committed and flushed to disk before this returns.
   * A thrown error aborts the transaction: nothing of it is written.
   */
  transact<T>(fn: (writer: StoreWriter) => T): T {
    if (this.inTxn) return fn(this);
    this.inTxn = true;
    this.configChanged = false;
    let applied = false;
    try {
      return this.root.transactionSync(() => {
        const result = fn(this);
        // Only a configuration change moves the number readers key their caches on: the token
        // activity flush (every second under Management API traffic), audit and mail writes would
        // otherwise make every eval worker recompile its flags and the API drop its memo each time.
        if (this.configChanged) this.meta.putSync('configSeq', this.configSeq() + 1);
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

  /**
   * Group commit: runs each function in its own child transaction inside one write transaction, so a
   * burst of commands shares one flush to disk. A function that throws rolls back only its own writes;
   * its error is returned in its slot. If the commit itself fails, this throws and nothing is written.
   */
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

  /** Drops this thread's read snapshot so the next read sees every committed write. */
  resetReadTxn(): void {
    this.root.resetReadTxn();
  }

  async close(): Promise<void> {
    await this.root.close();
  }

  // ---- reads -------------------------------------------------------------------------------

  /**
   * Moves with every committed transaction that wrote an org, user, membership, project, audience,
   * flag or token (of any process): a reader that saw the same number can keep what it derived from
   * those records. Audit entries, token activity and mail do not move it.
   */
  configSeq(): number {
    return (this.meta.get('configSeq') as number | undefined) ?? 0;
  }

  schemaVersion(): number {
    return (this.meta.get('schemaVersion') as number | undefined) ?? kSchemaVersion;
  }

  isDemoSeeded(): boolean {
    return this.meta.get('demoSeeded') !== undefined;
  }

  isEmpty(): boolean {
    return this.orgs.getKeysCount() === 0 && this.users.getKeysCount() === 0 && this.projects.getKeysCount() === 0;
  }

  getOrg(id: string): Org | undefined {
    return tooLong(id) ? undefined : this.orgs.get(id);
  }

  /** Oldest first, as every list the console prints. */
  listOrgs(): Org[] {
    return [...this.orgs.getRange().map(({ value }) => value)].sort(byCreation);
  }

  getUser(id: string): User | undefined {
    return tooLong(id) ? undefined : this.users.get(id);
  }

  /** Oldest first. */
  listUsers(): User[] {
    return [...this.users.getRange().map(({ value }) => value)].sort(byCreation);
  }

  findUserByEmail(email: string): User | undefined {
    const wanted = email.toLowerCase();
    for (const { value } of this.users.getRange()) if (value.email.toLowerCase() === wanted) return value;
    return undefined;
  }

  getRole(orgId: string, userId: string): Role | undefined {
    return tooLong(orgId) || tooLong(userId) ? undefined : this.members.get([orgId, userId]);
  }

  listMembers(orgId: string): Membership[] {
    return [...this.members.getRange({ start: [orgId], end: [orgId, kMaxRange] })].map(({ key, value }) => ({
      orgId,
      userId: key[1],
      role: value,
    }));
  }

  getProject(id: string): Project | undefined {
    return tooLong(id) ? undefined : this.projects.get(id);
  }

  /** Oldest first. */
  listProjects(): Project[] {
    return [...this.projects.getRange().map(({ value }) => value)].sort(byCreation);
  }

  getAudience(id: string): Audience | undefined {
    return tooLong(id) ? undefined : this.audiences.get(id);
  }

  listAudiences(projectId: string): Audience[] {
    return this.indexed(projectId, 'a', this.audiences);
  }

  getFlag(id: string): Flag | undefined {
    return tooLong(id) ? undefined : this.flags.get(id);
  }

  /** The project's flags, oldest first. */
  listFlags(projectId: string): Flag[] {
    return this.indexed(projectId, 'f', this.flags).sort(byCreation);
  }

  getToken(id: string): Token | undefined {
    return tooLong(id) ? undefined : this.tokens.get(id);
  }

  getTokenByHash(secretHash: string): Token | undefined {
    const id = this.tokenHashes.get(secretHash);
    return id === undefined ? undefined : this.tokens.get(id);
  }

  listTokens(projectId: string): Token[] {
    return this.indexed(projectId, 't', this.tokens).sort(byCreation);
  }

  /** Newest first. */
  listAudit(projectId: string, page: AuditPage): AuditEntry[] {
    if (tooLong(projectId)) return [];
    const start: [string, number] = [projectId, page.before === null ? Number.MAX_SAFE_INTEGER : page.before - 1];
    return [
      ...this.audit.getRange({ start, end: [projectId, -1], reverse: true, limit: page.limit }).map(({ value }) => value),
    ];
  }

  getActivity(tokenId: string): TokenActivity | undefined {
    return tooLong(tokenId) ? undefined : this.activity.get(tokenId);
  }

  listMail(): MailMessage[] {
    return [...this.mail.getRange().map(({ value }) => value)];
  }

  getMail(seq: number): MailMessage | undefined {
    return this.mail.get(seq);
  }

  listDueMail(now: number, limit: number): MailMessage[] {
    const out: MailMessage[] = [];
    for (const key of this.mailDue.getKeys({ end: [now, Number.MAX_SAFE_INTEGER], limit })) {
      const message = this.mail.get(key[1]);
      if (message !== undefined) out.push(message);
    }
    return out;
  }

  private indexed<V>(projectId: string, kind: string, source: Database<V, string>): V[] {
    if (tooLong(projectId)) return [];
    const out: V[] = [];
    for (const key of this.projectIndex.getKeys({ start: [projectId, kind], end: [projectId, kind, kMaxRange] })) {
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
    this.orgs.putSync(org.id, org);
  }

  putUser(user: User): void {
    this.assertConfigTxn();
    this.users.putSync(user.id, user);
  }

  putMember(member: Membership): void {
    this.assertConfigTxn();
    this.members.putSync([member.orgId, member.userId], member.role);
  }

  putProject(project: Project): void {
    this.assertConfigTxn();
    this.projects.putSync(project.id, project);
  }

  putAudience(audience: Audience): void {
    this.assertConfigTxn();
    this.audiences.putSync(audience.id, audience);
    this.projectIndex.putSync([audience.projectId, 'a', audience.id], null);
  }

  putFlag(flag: Flag): void {
    this.assertConfigTxn();
    this.flags.putSync(flag.id, flag);
    this.projectIndex.putSync([flag.projectId, 'f', flag.id], null);
  }

  deleteFlag(flag: Flag): void {
    this.assertConfigTxn();
    this.flags.removeSync(flag.id);
    this.projectIndex.removeSync([flag.projectId, 'f', flag.id]);
  }

  putToken(token: Token): void {
    this.assertConfigTxn();
    this.tokens.putSync(token.id, token);
    this.tokenHashes.putSync(token.secretHash, token.id);
    this.projectIndex.putSync([token.projectId, 't', token.id], null);
  }

  appendAudit(entry: Omit<AuditEntry, 'seq'>): AuditEntry {
    this.assertTxn();
    const full: AuditEntry = { seq: this.nextSeq('auditSeq'), ...entry };
    this.audit.putSync([full.projectId, full.seq], full);
    return full;
  }

  putActivity(activity: TokenActivity): void {
    this.assertTxn();
    this.activity.putSync(activity.tokenId, activity);
  }

  appendMail(message: Omit<MailMessage, 'seq'>): MailMessage {
    this.assertTxn();
    const full: MailMessage = { seq: this.nextSeq('mailSeq'), ...message };
    this.mail.putSync(full.seq, full);
    if (isPending(full)) this.mailDue.putSync(dueKey(full), null);
    return full;
  }

  putMail(message: MailMessage): void {
    this.assertTxn();
    const before = this.mail.get(message.seq);
    if (before !== undefined && isPending(before)) this.mailDue.removeSync(dueKey(before));
    this.mail.putSync(message.seq, message);
    if (isPending(message)) this.mailDue.putSync(dueKey(message), null);
  }

  markDemoSeeded(at: number): void {
    this.assertTxn();
    this.meta.putSync('demoSeeded', at);
  }

  private nextSeq(key: 'auditSeq' | 'mailSeq'): number {
    const next = ((this.meta.get(key) as number | undefined) ?? 0) + 1;
    this.meta.putSync(key, next);
    return next;
  }
}

/** Still to send: neither sent nor given up. */
function isPending(message: MailMessage): boolean {
  return message.sentAt === null && message.failedAt === null;
}

function dueKey(message: MailMessage): [number, number] {
  return [message.nextAttemptAt, message.seq];
}

function refuseNewerSchema(path: string, version: unknown): void {
  if (typeof version === 'number' && version > kSchemaVersion) {
    throw new StoreOpenError(
      `${path} was written by a newer Flagwire (schema ${version}; this version reads up to ${kSchemaVersion}); upgrade Flagwire or use another data directory`,
    );
  }
}

/**
 * lmdb-js's open() now and then fails at once with "No transaction to renew" (kriszyp/lmdb-js#201, seen
 * here once in three CI runs, from a console command opening the file beside another process): one
 * more try opens it; any other error, or a second failure, is reported.
 */
function openRoot(path: string, readOnly: boolean): RootDatabase {
  // overlappingSync off: a committed transactionSync is on disk when it returns, which is what
  // "answered only after the commit is durable" needs.
  const openIt = () => open({ path, maxDbs: 16, overlappingSync: false, readOnly });
  try {
    return openIt();
  } catch (err) {
    if (!/No transaction to renew/.test((err as Error).message)) throw err;
    return openIt();
  }
}

function byCreation(a: { createdAt: number; id: string }, b: { createdAt: number; id: string }): number {
  return a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** A data dir holding files that are not ours (or a damaged data file) is refused, never written over. */
function refuseForeignFiles(dataDir: string): void {
  if (!existsSync(dataDir)) return;
  const ours = new Set([kFileName, `${kFileName}-lock`]);
  const foreign = readdirSync(dataDir).filter((name) => !ours.has(name) && !name.startsWith('.'));
  if (foreign.length > 0) {
    throw new StoreOpenError(
      `data directory ${dataDir} holds files Flagwire did not write (${foreign.slice(0, 3).join(', ')}); use an empty or Flagwire-only directory`,
    );
  }
}
