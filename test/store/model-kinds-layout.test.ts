// The kinds of src/model as simple kinds (src/model/records): a data file an older Flagwire wrote, before
// they were, reads the same. Organisations and projects kept their databases, keys and lookups; a
// project's audiences were entries in projectIndex ([projectId, 'a', id]) until schema 17, which files
// them in the audience kind's lookup instead; a project's tokens were entries there too ('t'), and a token
// by its secret's hash one in tokenHashes, until schema 18, which files them in the token kind's lookups
// and drops both databases; a user by e-mail was an entry in auth (['userEmail', address, id]) until
// schema 19, which files them in the user kind's lookup. Memberships, mail, credentials, sessions,
// invitations and the demo seed's mark kept layouts of their own (members, mail under numbers with
// mailDue, auth's tagged keys, meta) until schema 20, which moves each into its kind's database and
// lookups: a read-only open of an older file reads none of those, a migrated one every one.
import { join } from 'node:path';
import { type Key, open } from 'lmdb';
import t, { type Test } from 'tap';
import type { Org, User } from '../../src/model/accounts.js';
import type { Audience, Project } from '../../src/model/projects.js';
import type { Token, TokenActivity } from '../../src/model/tokens.js';
import {
  findOrgByName,
  findUserByEmail,
  getOrg,
  getUser,
  listOrgs,
  listUsers,
  putOrg,
  putUser,
} from '../../src/model/records/org-records.js';
import {
  getAudience,
  getProject,
  listAudiences,
  listOrgProjects,
  listPersonalProjects,
  putAudience,
  putProject,
} from '../../src/model/records/project-records.js';
import { getActivity, getToken, getTokenByHash, listTokens, putActivity, putToken } from '../../src/model/records/token-records.js';
import type { Invitation } from '../../src/model/invitations.js';
import { type MailMessage, newMail } from '../../src/model/mail.js';
import type { Session } from '../../src/model/sessions.js';
import { getInvitation, listEmailInvitations, listOrgInvitations, putInvitation } from '../../src/model/records/invitation-records.js';
import { appendMail, getMail, listDueMail, listMail, putMail } from '../../src/model/records/mail-records.js';
import { getRole, listMembers, listUserMemberships, putMember } from '../../src/model/records/member-records.js';
import { getCredential, getSession, listUserSessions, putCredential, putSession } from '../../src/model/records/session-records.js';
import { kFileName, kKeyedIndexes, kMaxDbs, kSchemaVersion } from '../../src/store/layout.js';
import { isDemoSeeded, markDemoSeeded } from '../../src/writer/thread/demo-records.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { asSchema19Layout, countRawKeys, forgetLookups, Store } from '../helpers/store.js';

const at = Date.UTC(2030, 0, 1);
const org: Org = { id: 'org_1', name: 'Acme', plan: 'teams', trialEndsAt: null, standing: 'good', createdAt: at };
const shop: Project = { id: 'prj_1', name: 'Shop', kind: 'single', orgId: org.id, ownerUserId: null, environments: [], createdAt: at };
const mine: Project = { id: 'prj_2', name: 'Mine', kind: 'single', orgId: null, ownerUserId: 'usr_1', environments: [], createdAt: at + 1 };
const olive: User = { id: 'usr_1', email: 'Olive@Example.com', name: 'Olive', createdAt: at };
const pat: User = { id: 'usr_2', email: 'pat@example.com', name: 'Pat', createdAt: at + 1 };
const audience = (id: string, projectId: string): Audience => ({ id, projectId, name: id, rules: [], updatedAt: at });
const audiences = [audience('aud_b', shop.id), audience('aud_a', shop.id), audience('aud_c', mine.id)];
const token = (id: string, projectId: string, createdAt: number): Token => ({
  id,
  projectId,
  name: id,
  permission: 'read',
  environments: [],
  expiresAt: 0,
  createdAt,
  createdBy: 'usr_1',
  revokedAt: null,
  secretHash: id.padEnd(64, '0'),
});
// Not in the order of their ids: a project's list is oldest first.
const tokens = [token('tok_b', shop.id, at), token('tok_a', shop.id, at + 1), token('tok_c', mine.id, at)];
const activity: TokenActivity = { tokenId: 'tok_a', lastUsedAt: at, recent: [], denials: [], lastDenialMailAt: null };
const session = (n: string, userId: string): Session => ({
  idHash: n.repeat(64),
  userId,
  csrfToken: 'c',
  createdAt: at,
  expiresAt: at + 9,
});
const sessions = [session('b', olive.id), session('a', olive.id), session('c', pat.id)];
const invitation = (id: string, email: string, createdAt: number): Invitation => ({
  id,
  orgId: org.id,
  email,
  role: 'viewer',
  invitedBy: olive.id,
  createdAt,
  expiresAt: at + 10,
});
// Not in the order of their ids: a list is oldest first.
const invitations = [invitation('inv_b', 'sam@example.com', at), invitation('inv_a', 'sam@example.com', at + 1)];
const letter = (to: string) => newMail({ at, to, orgId: org.id, subject: 's', text: 't' });

/** The project's audiences' ids, as listAudiences gives them. */
const ids = (list: readonly { id: string }[]) => list.map((a) => a.id);

/**
 * Leaves the data file of `dir` (closed) as schema `version` did: the kinds schema 20 moved in their own
 * layouts; below 19, users by e-mail in auth; below 18, tokens in projectIndex and tokenHashes, not in
 * their kind's lookups; at 16, audiences in projectIndex too, not in theirs.
 */
async function asSchema(dir: string, version: 16 | 17 | 18 | 19): Promise<void> {
  await asSchema19Layout(dir);
  if (version === 19) return;
  // Whether the file named the lookups is beside the point: such a file named none of these kinds'.
  await forgetLookups(dir, 'user');
  const raw = open({ path: join(dir, kFileName), maxDbs: kMaxDbs });
  const auth = raw.openDB<null, Key[]>({ name: 'auth' });
  for (const u of [olive, pat]) auth.putSync(['userEmail', u.email.toLowerCase(), u.id], null);
  raw.openDB<unknown, string>({ name: 'meta' }).putSync('schemaVersion', version);
  await raw.close();
  if (version === 18) return;
  await forgetLookups(dir, 'token');
  if (version === 16) await forgetLookups(dir, 'audience');
  const older = open({ path: join(dir, kFileName), maxDbs: kMaxDbs });
  const index = older.openDB<null, Key[]>({ name: 'projectIndex' });
  const hashes = older.openDB<string, string>({ name: 'tokenHashes' });
  for (const k of tokens) {
    index.putSync([k.projectId, 't', k.id], null);
    hashes.putSync(k.secretHash, k.id);
  }
  if (version === 16) for (const a of audiences) index.putSync([a.projectId, 'a', a.id], null);
  await older.close();
}

/** The databases of the data file of `dir` (closed). */
async function databases(dir: string): Promise<string[]> {
  const raw = open({ path: join(dir, kFileName), maxDbs: kMaxDbs, readOnly: true });
  const names = [...raw.getKeys()].map(String);
  await raw.close();
  return names;
}

/** Writes every kind's records into a new data file in `dir`, and closes it. */
async function made(dir: string): Promise<void> {
  const store = Store.open(dir);
  store.transact((w) => {
    putOrg(w, org);
    putUser(w, olive);
    putUser(w, pat);
    putProject(w, shop);
    putProject(w, mine);
    for (const a of audiences) putAudience(w, a);
    for (const k of tokens) putToken(w, k);
    putActivity(w, activity);
    putMember(w, { orgId: org.id, userId: pat.id, role: 'viewer' });
    putMember(w, { orgId: org.id, userId: olive.id, role: 'owner' });
    const [sent, , failed] = [letter('a@example.com'), letter('b@example.com'), letter('c@example.com')].map((m) => appendMail(w, m));
    putMail(w, { ...sent!, sentAt: at + 1, attempts: 1 });
    putMail(w, { ...failed!, failedAt: at + 2, attempts: 12 });
    putCredential(w, { userId: olive.id, passwordHash: 'scrypt$h', updatedAt: at });
    for (const one of sessions) putSession(w, one);
    for (const one of invitations) putInvitation(w, one);
    markDemoSeeded(w, at);
  });
  await store.close();
}

/** Every read of the kinds, as a store of either layout answers it. */
function reads(store: Store, t: Test): void {
  t.strictSame(getOrg(store, org.id), org, 'the organisation');
  t.strictSame(ids(listOrgs(store)), [org.id]);
  t.equal(findOrgByName(store, ' ACME ')?.id, org.id, 'by its name');
  t.strictSame(getUser(store, pat.id), pat, 'a user');
  t.strictSame(ids(listUsers(store)), [olive.id, pat.id], 'every user, oldest first');
  t.equal(findUserByEmail(store, 'olive@EXAMPLE.com')?.id, olive.id, 'a user by e-mail, without case');
  t.equal(findUserByEmail(store, 'olive@example.co'), undefined, "a prefix of an address is nobody's");
  t.strictSame(getProject(store, shop.id), shop, 'a project');
  t.strictSame(ids(listOrgProjects(store, org.id)), [shop.id], "the organisation's projects");
  t.strictSame(ids(listPersonalProjects(store, 'usr_1')), [mine.id], "the user's personal ones");
  t.strictSame(getAudience(store, 'aud_a'), audiences[1], 'an audience');
  t.strictSame(ids(listAudiences(store, shop.id)), ['aud_a', 'aud_b'], "a project's audiences, in the order of their ids");
  t.strictSame(ids(listAudiences(store, mine.id)), ['aud_c'], "another project's");
  t.strictSame(getToken(store, 'tok_a'), tokens[1], 'a token');
  t.equal(getTokenByHash(store, tokens[2]!.secretHash)?.id, 'tok_c', 'a token by its secret');
  t.equal(getTokenByHash(store, 'ff'.repeat(32)), undefined, 'no token by a secret of none');
  t.strictSame(ids(listTokens(store, shop.id)), ['tok_b', 'tok_a'], "a project's tokens, oldest first");
  t.strictSame(getActivity(store, 'tok_a'), activity, "a token's activity");
}

/** Every read of the kinds schema 20 moved into the keyed layout, as a migrated store answers it. */
function movedReads(store: Store, t: Test): void {
  t.equal(getRole(store, org.id, olive.id), 'owner', 'a role');
  t.equal(getRole(store, org.id, 'usr_9'), undefined, 'no role of a stranger');
  t.strictSame(
    listMembers(store, org.id).map((m) => `${m.userId} ${m.role}`),
    [`${olive.id} owner`, `${pat.id} viewer`],
    "the organisation's members, by user",
  );
  t.strictSame(listUserMemberships(store, pat.id), [{ orgId: org.id, userId: pat.id, role: 'viewer' }], "a user's organisations");
  t.strictSame(
    listMail(store).map((m: MailMessage) => m.seq),
    [1, 2, 3],
    'every message, oldest first',
  );
  t.match(getMail(store, 1), { to: 'a@example.com', sentAt: at + 1 }, 'a message by its number');
  t.strictSame(
    listDueMail(store, at, 10).map((m) => m.seq),
    [2],
    'only the message still to send is due',
  );
  t.strictSame(listDueMail(store, at - 1, 10), [], 'and not before its time');
  t.strictSame(getCredential(store, olive.id), { userId: olive.id, passwordHash: 'scrypt$h', updatedAt: at }, 'a password');
  t.strictSame(getSession(store, sessions[2]!.idHash), sessions[2], 'a session');
  t.strictSame(
    listUserSessions(store, olive.id).map((one) => one.idHash[0]),
    ['a', 'b'],
    "a user's sessions",
  );
  t.strictSame(getInvitation(store, 'inv_a'), invitations[1], 'an invitation');
  t.strictSame(ids(listOrgInvitations(store, org.id)), ['inv_b', 'inv_a'], "an organisation's invitations, oldest first");
  t.strictSame(ids(listEmailInvitations(store, 'SAM@example.com')), ['inv_b', 'inv_a'], 'by address, without case');
  t.ok(isDemoSeeded(store), "the demo seed's mark");
}

for (const version of [16, 17, 18, 19] as const)
  t.test(`a schema ${version} data file: read as it is read-only, its records filed anew when opened for writing`, async (t) => {
    const dir = tempDir(t, 'flagwire-model-kinds-');
    await made(dir);
    await asSchema(dir, version);
    t.equal(
      await countRawKeys(dir, kKeyedIndexes, 'user'),
      version === 19 ? 2 : 0,
      version === 19 ? 'users in their lookup, as schema 19 filed them' : 'no user in the lookups, as the file kept none',
    );
    t.equal(await countRawKeys(dir, kKeyedIndexes, 'member'), 0, 'no membership in the lookups, as the file kept none');

    const reader = Store.open(dir, { readOnly: true });
    t.equal(reader.schemaVersion(), version, 'a read-only open reads the file as it is');
    t.test('read-only', async (t) => reads(reader, t));
    t.equal(getRole(reader, org.id, olive.id), undefined, 'but none of the records schema 20 moved');
    await reader.close();

    const store = Store.open(dir);
    t.equal(store.schemaVersion(), kSchemaVersion, 'migrated when opened for writing');
    t.test('migrated', async (t) => {
      reads(store, t);
      movedReads(store, t);
    });
    const next = store.transact((w) => {
      putAudience(w, audience('aud_d', mine.id));
      putToken(w, token('tok_d', mine.id, at + 2));
      return appendMail(w, letter('d@example.com'));
    });
    t.equal(next.seq, 4, "a message appended after it numbers after the file's");
    t.strictSame(
      listDueMail(store, at, 10).map((m) => m.seq),
      [2, 4],
      'and is due with the one still to send',
    );
    t.strictSame(ids(listAudiences(store, mine.id)), ['aud_c', 'aud_d'], 'an audience written after it is filed too');
    t.strictSame(ids(listTokens(store, mine.id)), ['tok_c', 'tok_d'], 'and a token');
    await store.close();
    const names = await databases(dir);
    t.notOk(names.includes('projectIndex') || names.includes('tokenHashes'), 'projectIndex and tokenHashes are dropped');
    t.notOk(names.includes('members') || names.includes('auth') || names.includes('mailDue'), 'members, auth and mailDue are dropped');
    t.equal(await countRawKeys(dir, kKeyedIndexes, 'audience'), 4, 'each audience filed once, in its kind lookup');
    t.equal(await countRawKeys(dir, kKeyedIndexes, 'token'), 8, 'each token filed by project and by hash');
    t.equal(await countRawKeys(dir, kKeyedIndexes, 'user'), 2, 'each user filed by e-mail');
    t.equal(await countRawKeys(dir, kKeyedIndexes, 'member'), 4, 'each membership filed by organisation and by user');
    t.equal(await countRawKeys(dir, kKeyedIndexes, 'session'), 3, 'each session by its user');
    t.equal(await countRawKeys(dir, kKeyedIndexes, 'invitation'), 4, 'each invitation by organisation and by address');
    t.equal(await countRawKeys(dir, kKeyedIndexes, 'mail'), 2, 'the two messages still to send, by when they are due');
  });

t.test("a node's copy files the records it copies and applies", async (t) => {
  const source = Store.open(tempDir(t, 'flagwire-model-kinds-'));
  t.teardown(() => source.close());
  source.transact((w) => {
    putOrg(w, org);
    putProject(w, shop);
    putAudience(w, audiences[0]!);
    putToken(w, tokens[0]!);
    putMember(w, { orgId: org.id, userId: olive.id, role: 'owner' });
    appendMail(w, letter('a@example.com'));
    putSession(w, sessions[0]!);
  });
  const copy = Store.open(tempDir(t, 'flagwire-model-kinds-'));
  t.teardown(() => copy.close());
  copy.replaceAll('db-1', 0, source.exportRecords());
  t.strictSame(ids(listAudiences(copy, shop.id)), ['aud_b'], 'a full copy');
  t.equal(getTokenByHash(copy, tokens[0]!.secretHash)?.id, 'tok_b', "a token's, by its secret");
  t.strictSame(listUserMemberships(copy, olive.id), [{ orgId: org.id, userId: olive.id, role: 'owner' }], 'a membership, by its user');
  t.strictSame(
    listDueMail(copy, at, 10).map((m) => m.seq),
    [1],
    'a message, by when it is due',
  );
  t.strictSame(listUserSessions(copy, olive.id), [sessions[0]], 'a session, by its user');
  const { changes } = source.rehearse([
    (w) => {
      putAudience(w, audiences[1]!);
      putToken(w, tokens[1]!);
      putMember(w, { orgId: org.id, userId: pat.id, role: 'viewer' });
      appendMail(w, letter('b@example.com'));
    },
  ]);
  copy.applyRevisions([{ revision: 1, changes }]);
  t.strictSame(
    listMembers(copy, org.id).map((m) => m.userId),
    [olive.id, pat.id],
    'a membership applied',
  );
  t.strictSame(
    listDueMail(copy, at, 10).map((m) => m.seq),
    [1, 2],
    'a message applied',
  );
  t.equal(copy.transact((w) => appendMail(w, letter('c@example.com'))).seq, 3, "the copy's next message numbers after those applied");
  t.strictSame(ids(listAudiences(copy, shop.id)), ['aud_a', 'aud_b'], 'an audience applied');
  t.strictSame(ids(listTokens(copy, shop.id)), ['tok_b', 'tok_a'], 'a token applied');
});
