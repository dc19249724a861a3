// The organisations a user belongs to, as the store finds them (listUserMemberships: the member kind's
// lookup by user, schema 20; before it the auth database's index, schema 16): moved by every membership
// added, changed and ended; a schema 19 data file is filed when opened for writing; a node's copy files
// the memberships it copies and applies.
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import type { Membership } from '../../src/model/accounts.js';
import { kKeyedIndexes, kSchemaVersion } from '../../src/store/layout.js';
import type { StoreWriter } from '../../src/store/interfaces.js';
import { runCommand } from '../../src/writer/thread/commands.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { asSchema19Layout, countRawKeys, Store } from '../helpers/store.js';
import { deleteMember, listUserMemberships, putMember } from '../../src/model/records/member-records.js';

const at = Date.UTC(2030, 0, 1);
/** Memberships as `orgId role` lines, sorted: the index lists them in no particular order. */
const lines = (memberships: readonly Pick<Membership, 'orgId' | 'role'>[]) =>
  memberships.map(({ orgId, role }) => `${orgId} ${role}`).sort();

/** Three organisations; Olive a viewer of the first and an admin of the third, Pat an editor of the second. */
function seed(w: StoreWriter) {
  const run = <N extends Parameters<typeof runCommand>[1]>(name: N, input: Parameters<typeof runCommand<N>>[2]) =>
    runCommand(w, name, input, at);
  const [a, b, c] = ['Acme', 'Beta', 'Cargo'].map((name) => run('orgCreate', { principal: kOperator, name }));
  const olive = run('userCreate', { email: 'olive@example.com' });
  const pat = run('userCreate', { email: 'pat@example.com' });
  run('orgAddMember', { principal: kOperator, orgId: a!.id, userId: olive.id, role: 'viewer' });
  run('orgAddMember', { principal: kOperator, orgId: c!.id, userId: olive.id, role: 'admin' });
  run('orgAddMember', { principal: kOperator, orgId: b!.id, userId: pat.id, role: 'editor' });
  return { a: a!.id, b: b!.id, c: c!.id, olive: olive.id, pat: pat.id };
}

/** Olive's memberships as seeded. */
const olivesTwo = (s: ReturnType<typeof seed>) => [`${s.a} viewer`, `${s.c} admin`].sort();

t.test("a user's organisations move with every membership added, changed and ended", async (t) => {
  const store = Store.open(tempDir(t, 'flagwire-memberships-'));
  t.teardown(() => store.close());
  const s = store.transact(seed);
  t.strictSame(lines(listUserMemberships(store, s.olive)), olivesTwo(s), "Olive's two, never Pat's");
  t.strictSame(lines(listUserMemberships(store, s.pat)), [`${s.b} editor`]);
  t.strictSame(listUserMemberships(store, 'usr_nobody'), [], 'a user of no organisation');
  t.strictSame(listUserMemberships(store, 'x'.repeat(600)), [], 'an id too long to be a key');

  store.transact((w) => putMember(w, { orgId: s.a, userId: s.olive, role: 'editor' }));
  store.transact((w) => deleteMember(w, { orgId: s.c, userId: s.olive }));
  t.strictSame(lines(listUserMemberships(store, s.olive)), [`${s.a} editor`], 'a role changed, a membership ended');
  t.throws(
    () =>
      store.transact((w) => {
        deleteMember(w, { orgId: s.a, userId: s.olive });
        throw new Error('rolled back');
      }),
    /rolled back/,
  );
  t.strictSame(lines(listUserMemberships(store, s.olive)), [`${s.a} editor`], 'a rolled back end moves nothing');
});

t.test('a schema 19 data file: its memberships, in a layout of their own, filed in their lookups when opened for writing', async (t) => {
  const dir = tempDir(t, 'flagwire-memberships-');
  const made = Store.open(dir);
  const s = made.transact(seed);
  await made.close();
  // As schema 19 left it: memberships in members, a user's organisations in auth.
  await asSchema19Layout(dir);
  t.equal(await countRawKeys(dir, 'auth', 'userOrg'), 3, 'the older layout indexed the three memberships');
  const store = Store.open(dir);
  t.equal(store.schemaVersion(), kSchemaVersion, 'migrated');
  t.strictSame(lines(listUserMemberships(store, s.olive)), olivesTwo(s), "Olive's two, through the lookup");
  t.strictSame(lines(listUserMemberships(store, s.pat)), [`${s.b} editor`]);
  await store.close();
  t.equal(await countRawKeys(dir, kKeyedIndexes, 'member'), 6, 'each membership filed by organisation and by user, once');
});

t.test("a node's copy indexes the memberships it copies and applies", async (t) => {
  const source = Store.open(tempDir(t, 'flagwire-memberships-'));
  t.teardown(() => source.close());
  const s = source.transact(seed);
  const copy = Store.open(tempDir(t, 'flagwire-memberships-'));
  t.teardown(() => copy.close());
  copy.replaceAll('db-1', 0, source.exportRecords());
  t.strictSame(lines(listUserMemberships(copy, s.pat)), [`${s.b} editor`], 'a full copy');
  const { changes } = source.rehearse([
    (w) => runCommand(w, 'orgAddMember', { principal: kOperator, orgId: s.c, userId: s.pat, role: 'viewer' }, at),
  ]);
  copy.applyRevisions([{ revision: 1, changes }]);
  t.strictSame(lines(listUserMemberships(copy, s.pat)), [`${s.b} editor`, `${s.c} viewer`].sort(), 'a membership applied');
});
