// The LMDB store: every record kind survives a write, a close and a reopen unchanged (codecs and key
// layout), reads order and page as documented, the index of mail to send follows the outbox,
// transactions are all-or-nothing (transactEach per function), and a
// data dir written by a newer Flagwire or holding foreign files is refused.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import t from 'tap';
import type { Org, User } from '../../src/model/accounts.js';
import type { AuditAction } from '../../src/capabilities.js';
import type { NewAuditEntry } from '../../src/store/interfaces.js';
import type { Flag } from '../../src/model/flags.js';
import type { MailMessage } from '../../src/model/mail.js';
import type { Audience, Project } from '../../src/model/projects.js';
import type { Token, TokenActivity } from '../../src/model/tokens.js';
import { StoreOpenError } from '../../src/store/data-file.js';
import { kSchemaVersion } from '../../src/store/layout.js';
import { Store } from '../helpers/store.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { deleteFlag, getFlag, listFlags, putFlag } from '../../src/flags/records/flag-store.js';
import { getOrg, putOrg, listOrgs, findUserByEmail, getUser, putUser } from '../../src/model/records/org-records.js';
import { putProject, listProjects, getProject, listAudiences, getAudience, putAudience } from '../../src/model/records/project-records.js';
import { putToken, putActivity, listTokens, getTokenByHash, getActivity, getToken } from '../../src/model/records/token-records.js';
import { isEmptyStore } from '../../src/model/records/lookups.js';
import { appendMail, getMail, listDueMail, listMail, putMail } from '../../src/model/records/mail-records.js';
import { getRole, listMembers, putMember } from '../../src/model/records/member-records.js';
import { isDemoSeeded, markDemoSeeded } from '../../src/writer/thread/demo-records.js';

const at = Date.UTC(2030, 0, 1);

const org: Org = { id: 'org_1', name: 'Acme', plan: 'teams-trial', trialEndsAt: at + 1, standing: 'good', createdAt: at };
const org2: Org = { id: 'org_2', name: 'Beta', plan: 'free', trialEndsAt: null, standing: 'lapsed', createdAt: at };
const user: User = { id: 'usr_1', email: 'Olive@Acme.test', name: 'Olive', createdAt: at };
const project: Project = { id: 'prj_1', name: 'Shop', kind: 'single', orgId: 'org_1', ownerUserId: null, environments: [], createdAt: at };
const multi: Project = {
  id: 'prj_2',
  name: 'Platform',
  kind: 'multi',
  orgId: null,
  ownerUserId: 'usr_1',
  environments: ['staging', 'production'],
  createdAt: at,
};
const audience: Audience = {
  id: 'aud_1',
  projectId: 'prj_1',
  name: 'Beta',
  rules: [{ attribute: 'plan', values: ['beta', 'pro'] }],
  updatedAt: at,
};
const single: Flag = {
  id: 'flg_b',
  projectId: 'prj_1',
  name: 'checkout',
  description: 'Ünïcode ✓',
  tags: ['web'],
  cohorts: ['alice'],
  createdAt: at + 1,
  updatedAt: at + 2,
  kind: 'flag',
  state: { enabled: true, trafficPercentage: 50, audienceId: 'aud_1' },
};
const older: Flag = {
  id: 'flg_z',
  projectId: 'prj_1',
  name: 'banner',
  description: '',
  tags: [],
  cohorts: [],
  createdAt: at,
  updatedAt: at,
  kind: 'flag',
  state: { enabled: false, trafficPercentage: 0, audienceId: null },
};
const group: Flag = {
  id: 'flg_g',
  projectId: 'prj_2',
  name: 'search',
  description: '',
  tags: [],
  cohorts: ['wide'],
  createdAt: at,
  updatedAt: at,
  kind: 'groupflag',
  environments: {
    staging: { enabled: true, trafficPercentage: 100, audienceId: null, cohorts: null },
    production: { enabled: false, trafficPercentage: 10, audienceId: null, cohorts: ['qa'] },
  },
};
const token: Token = {
  id: 't'.repeat(20),
  projectId: 'prj_1',
  name: 'deploy',
  permission: 'write',
  environments: [],
  expiresAt: 0,
  createdAt: at,
  createdBy: 'usr_1',
  revokedAt: null,
  secretHash: 'ab'.repeat(32),
};
const activity: TokenActivity = {
  tokenId: token.id,
  lastUsedAt: at,
  lastDenialMailAt: null,
  recent: [{ at, method: 'GET', path: '/api/v1/flags', status: 200 }],
  denials: [{ at, reason: 'revoked', method: 'PATCH', path: '/api/v1/flags/x' }],
};
const mail: Omit<MailMessage, 'seq'> = {
  at,
  to: 'olive@acme.test',
  subject: 'Refused',
  text: 'Line 1\nLine 2',
  sentAt: null,
  attempts: 0,
  nextAttemptAt: at,
  lastError: null,
  failedAt: null,
};

function audit(projectId: string, action: AuditAction): NewAuditEntry {
  return {
    at,
    projectId,
    actor: 'console',
    actorName: 'console',
    action,
    flagId: 'flg_b',
    env: null,
    changes: { name: { before: 'a', after: 'b' } },
  };
}

t.test('every record kind round-trips through a close and reopen', async (t) => {
  const dir = tempDir(t, 'flagwire-store-');
  const store = Store.open(dir);
  t.ok(isEmptyStore(store));
  t.equal(store.schemaVersion(), kSchemaVersion);
  const seqBefore = store.configSeq();
  const written = store.transact((w) => {
    putOrg(w, org);
    putOrg(w, org2);
    putUser(w, user);
    putMember(w, { orgId: 'org_1', userId: 'usr_1', role: 'admin' });
    putMember(w, { orgId: 'org_2', userId: 'usr_1', role: 'viewer' });
    putProject(w, project);
    putProject(w, multi);
    putAudience(w, audience);
    putFlag(w, single);
    putFlag(w, older);
    putFlag(w, group);
    putToken(w, token);
    putActivity(w, activity);
    const a1 = w.appendAudit(audit('prj_1', 'flag.create'));
    const a2 = w.appendAudit(audit('prj_2', 'flag.patch'));
    const a3 = w.appendAudit(audit('prj_1', 'flag.rename'));
    const m1 = appendMail(w, mail);
    const m2 = appendMail(w, { ...mail, to: 'x@y.test' });
    putMail(w, { ...m1, sentAt: at + 5, attempts: 1 });
    markDemoSeeded(w, at);
    return { a1, a2, a3, m1, m2 };
  });
  t.strictSame([written.a1.seq, written.a2.seq, written.a3.seq], [1, 2, 3], 'audit sequence numbers count across projects');
  t.strictSame([written.m1.seq, written.m2.seq], [1, 2]);
  t.equal(store.configSeq(), seqBefore + 1, 'one transaction, one commit');
  await store.close();

  const again = Store.open(dir);
  t.teardown(() => again.close());
  t.notOk(isEmptyStore(again));
  t.ok(isDemoSeeded(again));
  t.strictSame(getOrg(again, 'org_1'), org);
  t.strictSame(listOrgs(again), [org, org2]);
  t.strictSame(getUser(again, 'usr_1'), user);
  t.strictSame(findUserByEmail(again, 'olive@acme.TEST'), user, 'e-mail lookup ignores case');
  t.equal(findUserByEmail(again, 'nobody@acme.test'), undefined);
  t.equal(findUserByEmail(again, 'olive@acme.tes'), undefined, 'a prefix of an address is not it');
  t.equal(findUserByEmail(again, `${'x'.repeat(3000)}@acme.test`), undefined, "an address longer than any key is nobody's, not an error");
  t.equal(getRole(again, 'org_1', 'usr_1'), 'admin');
  t.equal(getRole(again, 'org_1', 'usr_2'), undefined);
  t.strictSame(listMembers(again, 'org_2'), [{ orgId: 'org_2', userId: 'usr_1', role: 'viewer' }]);
  t.strictSame(getProject(again, 'prj_2'), multi);
  t.strictSame(listProjects(again), [project, multi]);
  t.strictSame(getAudience(again, 'aud_1'), audience);
  t.strictSame(listAudiences(again, 'prj_1'), [audience]);
  t.strictSame(listAudiences(again, 'prj_2'), []);
  t.strictSame(getFlag(again, 'flg_g'), group, 'a group flag keeps null (inherit) and override cohorts apart');
  t.strictSame(listFlags(again, 'prj_1'), [older, single], 'oldest first');
  t.strictSame(getToken(again, token.id), token);
  t.strictSame(getTokenByHash(again, token.secretHash), token);
  t.equal(getTokenByHash(again, 'cd'.repeat(32)), undefined);
  t.strictSame(listTokens(again, 'prj_1'), [token]);
  t.strictSame(listTokens(again, 'prj_2'), []);
  t.strictSame(getActivity(again, token.id), activity);
  t.equal(getActivity(again, 'nope'), undefined);
  t.strictSame(again.listAudit('prj_1', { limit: 10, before: null }), [written.a3, written.a1], 'newest first, one project only');
  t.strictSame(again.listAudit('prj_1', { limit: 1, before: null }), [written.a3]);
  t.strictSame(again.listAudit('prj_1', { limit: 10, before: 3 }), [written.a1], 'before pages back');
  t.strictSame(again.listAudit('prj_2', { limit: 10, before: null }), [written.a2]);
  t.strictSame(listMail(again), [{ ...written.m1, sentAt: at + 5, attempts: 1 }, written.m2]);
});

t.test('updates replace, deletes remove, and indexes follow', async (t) => {
  const dir = tempDir(t, 'flagwire-store-');
  const store = Store.open(dir);
  t.teardown(() => store.close());
  store.transact((w) => {
    putProject(w, project);
    putFlag(w, single);
    putFlag(w, older);
    putToken(w, token);
  });
  store.transact((w) => {
    putFlag(w, { ...single, name: 'renamed' });
    deleteFlag(w, older);
    putToken(w, { ...token, revokedAt: at });
  });
  t.strictSame(
    listFlags(store, 'prj_1').map((f) => f.name),
    ['renamed'],
  );
  t.equal(getFlag(store, older.id), undefined);
  t.equal(getTokenByHash(store, token.secretHash)?.revokedAt, at);
  t.equal(listTokens(store, 'prj_1').length, 1, 'a token put twice is listed once');
});

t.test('writes only inside transact; a throwing transaction writes nothing', async (t) => {
  const dir = tempDir(t, 'flagwire-store-');
  const store = Store.open(dir);
  t.teardown(() => store.close());
  t.throws(() => putOrg(store, org), /store writes must run inside Store\.transact/);
  const seq = store.configSeq();
  t.throws(
    () =>
      store.transact((w) => {
        putOrg(w, org);
        w.appendAudit(audit('prj_1', 'flag.delete'));
        throw new Error('boom');
      }),
    /boom/,
  );
  t.equal(getOrg(store, 'org_1'), undefined);
  t.strictSame(store.listAudit('prj_1', { limit: 10, before: null }), []);
  t.equal(store.configSeq(), seq, 'no commit');
  const entry = store.transact((w) => w.appendAudit(audit('prj_1', 'flag.describe')));
  t.equal(entry.seq, 1, 'the aborted audit entry did not use up a sequence number');
});

t.test('configSeq moves only with configuration: audit, activity and mail writes leave it', async (t) => {
  const dir = tempDir(t, 'flagwire-store-');
  const store = Store.open(dir);
  t.teardown(() => store.close());
  store.transact((w) => putOrg(w, org));
  const seq = store.configSeq();
  store.transact((w) => {
    putActivity(w, activity);
    w.appendAudit(audit('prj_1', 'flag.tags'));
    putMail(w, { ...appendMail(w, mail), sentAt: at, attempts: 1 });
  });
  t.equal(store.configSeq(), seq, 'eval and API caches stay valid across an activity flush');
  store.transact((w) => putFlag(w, single));
  t.equal(store.configSeq(), seq + 1, 'a flag write moves it');
  store.transact((w) => deleteFlag(w, single));
  t.equal(store.configSeq(), seq + 2, 'a flag delete moves it');
  store.transact((w) => putToken(w, token));
  t.equal(store.configSeq(), seq + 3, 'a token write (revocation) moves it');
});

t.test('transactEach rolls back only the function that throws', async (t) => {
  const dir = tempDir(t, 'flagwire-store-');
  const store = Store.open(dir);
  t.teardown(() => store.close());
  const seq = store.configSeq();
  const failure = new Error('second fails');
  const results = store.transactEach<string | number>([
    (w) => {
      putOrg(w, org);
      return 'a';
    },
    (w) => {
      putOrg(w, org2);
      w.appendAudit(audit('prj_1', 'flag.delete'));
      throw failure;
    },
    (w) => {
      putUser(w, user);
      return w.appendAudit(audit('prj_1', 'flag.describe')).seq;
    },
  ]);
  t.strictSame(results, [
    { ok: true, value: 'a' },
    { ok: false, error: failure },
    { ok: true, value: 1 },
  ]);
  t.strictSame(getOrg(store, 'org_1'), org);
  t.equal(getOrg(store, 'org_2'), undefined, "the failing function's writes are gone");
  t.strictSame(getUser(store, 'usr_1'), user, "the later function's writes stay");
  t.strictSame(
    store.listAudit('prj_1', { limit: 10, before: null }).map((e) => e.action),
    ['flag.describe'],
  );
  t.equal(store.configSeq(), seq + 1, 'one commit for the batch');
});

t.test('a data file written by a newer Flagwire is refused with a clear message', async (t) => {
  const dir = tempDir(t, 'flagwire-store-');
  await Store.open(dir).close();
  const raw = open({ path: join(dir, 'flagwire.mdb'), maxDbs: 16 });
  raw.openDB({ name: 'meta' }).putSync('schemaVersion', kSchemaVersion + 1);
  await raw.close();
  t.throws(
    () => Store.open(dir),
    new StoreOpenError(
      `${join(dir, 'flagwire.mdb')} was written by a newer Flagwire (schema ${kSchemaVersion + 1}; this version reads up to ${kSchemaVersion}); upgrade Flagwire or use another data directory`,
    ),
  );
  t.throws(() => Store.open(dir, { readOnly: true }), StoreOpenError, 'read-only opens are refused too');

  const raw2 = open({ path: join(dir, 'flagwire.mdb'), maxDbs: 16 });
  raw2.openDB({ name: 'meta' }).putSync('schemaVersion', 'one');
  await raw2.close();
  t.throws(() => Store.open(dir), { name: 'StoreOpenError', message: /is not a Flagwire data file \(no valid schema version\)/ });

  const raw3 = open({ path: join(dir, 'flagwire.mdb'), maxDbs: 16 });
  raw3.openDB({ name: 'meta' }).putSync('schemaVersion', kSchemaVersion);
  await raw3.close();
  const store = Store.open(dir);
  t.equal(store.schemaVersion(), kSchemaVersion, 'the current version opens');
  await store.close();

  // A newer version that added a database: called newer, not "another application".
  const raw4 = open({ path: join(dir, 'flagwire.mdb'), maxDbs: 16 });
  raw4.openDB({ name: 'meta' }).putSync('schemaVersion', kSchemaVersion + 1);
  raw4.openDB({ name: 'futureIndex' }).putSync('k', 1);
  await raw4.close();
  t.throws(() => Store.open(dir), { name: 'StoreOpenError', message: /was written by a newer Flagwire/ });
});

t.test("a database the file's Flagwire declared and this one does not know: a newer Flagwire's, at the same schema version", async (t) => {
  const dir = tempDir(t, 'flagwire-store-');
  await Store.open(dir).close();
  const raw = open({ path: join(dir, 'flagwire.mdb'), maxDbs: 64 });
  const meta = raw.openDB<unknown, string>({ name: 'meta' });
  t.ok((meta.get('databases') as string[]).includes('flags'), "meta names the layout's databases");
  meta.putSync('databases', [...(meta.get('databases') as string[]), 'gadgets']);
  raw.openDB({ name: 'gadgets' }).putSync('g1', 1);
  await raw.close();
  t.throws(() => Store.open(dir), {
    name: 'StoreOpenError',
    message: `${join(dir, 'flagwire.mdb')} was written by a newer Flagwire (it holds the database "gadgets", which this version does not know); upgrade Flagwire or use another data directory`,
  });
  t.throws(
    () => Store.open(dir, { readOnly: true }),
    { name: 'StoreOpenError', message: /was written by a newer Flagwire/ },
    'read-only too',
  );

  // A database no Flagwire declared in it: another application's, as before.
  const raw2 = open({ path: join(dir, 'flagwire.mdb'), maxDbs: 64 });
  const meta2 = raw2.openDB<unknown, string>({ name: 'meta' });
  meta2.putSync(
    'databases',
    (meta2.get('databases') as string[]).filter((name) => name !== 'gadgets'),
  );
  await raw2.close();
  t.throws(() => Store.open(dir), { name: 'StoreOpenError', message: /is an LMDB file of another application \(it holds "gadgets"\)/ });
});

t.test('the index of mail to send: a poll reads only due messages, a result moves one record', async (t) => {
  const dir = tempDir(t, 'flagwire-store-');
  const store = Store.open(dir);
  t.teardown(() => store.close());
  const [sent, later, due, failing] = store.transact((w) => [
    appendMail(w, mail),
    appendMail(w, { ...mail, to: 'later@acme.test', nextAttemptAt: at + 60_000 }),
    appendMail(w, { ...mail, to: 'due@acme.test', nextAttemptAt: at + 10 }),
    appendMail(w, { ...mail, to: 'failing@acme.test' }),
  ]);
  t.strictSame(
    listDueMail(store, at + 10, 10).map((m) => m.to),
    ['olive@acme.test', 'failing@acme.test', 'due@acme.test'],
    'earliest due first, the later one not yet',
  );
  t.strictSame(
    listDueMail(store, at + 10, 2).map((m) => m.seq),
    [sent!.seq, failing!.seq],
    'at most `limit`',
  );
  store.transact((w) => {
    putMail(w, { ...sent!, sentAt: at + 1, attempts: 1 });
    putMail(w, { ...failing!, attempts: 1, lastError: 'busy', nextAttemptAt: at + 30_000 });
  });
  t.strictSame(
    listDueMail(store, at + 10, 10).map((m) => m.seq),
    [due!.seq],
    'sent and retried-later messages leave the due list',
  );
  t.strictSame(
    listDueMail(store, at + 60_000, 10).map((m) => m.seq),
    [due!.seq, failing!.seq, later!.seq],
    'a retry is due at its new time',
  );
  store.transact((w) => putMail(w, { ...failing!, attempts: 12, lastError: 'busy', nextAttemptAt: at + 60_000, failedAt: at + 30_000 }));
  t.strictSame(
    listDueMail(store, Number.MAX_SAFE_INTEGER, 10).map((m) => m.seq),
    [due!.seq, later!.seq],
    'a message given up is never due again',
  );
  t.equal(listMail(store).length, 4, 'the outbox still lists every message');
  t.strictSame(getMail(store, failing!.seq), {
    ...failing!,
    attempts: 12,
    lastError: 'busy',
    nextAttemptAt: at + 60_000,
    failedAt: at + 30_000,
  });
  t.equal(getMail(store, 99), undefined);
});

t.test('a data dir with files Flagwire did not write is refused, never written over', async (t) => {
  const dir = tempDir(t, 'flagwire-store-');
  writeFileSync(join(dir, 'notes.txt'), 'mine');
  mkdirSync(join(dir, 'backups'));
  t.throws(() => Store.open(dir), {
    name: 'StoreOpenError',
    message:
      /^data directory .* holds files Flagwire did not write \((backups, notes\.txt|notes\.txt, backups)\); use an empty or Flagwire-only directory$/,
  });
  t.strictSame(readdirSync(dir).sort(), ['backups', 'notes.txt'], 'nothing was created');

  const dotted = tempDir(t, 'flagwire-store-');
  writeFileSync(join(dotted, '.keep'), '');
  const store = Store.open(dotted);
  t.ok(isEmptyStore(store), 'hidden files (such as .keep) are allowed');
  await store.close();
});

t.test('a read-only open sees committed data', async (t) => {
  const dir = tempDir(t, 'flagwire-store-');
  const writer = Store.open(dir);
  writer.transact((w) => putOrg(w, org));
  await writer.close();
  const reader = Store.open(dir, { readOnly: true });
  t.teardown(() => reader.close());
  t.strictSame(getOrg(reader, 'org_1'), org);
});
