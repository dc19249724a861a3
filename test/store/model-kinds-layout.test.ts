// The kinds of src/model as simple kinds (src/model-records): a data file an older Flagwire wrote, before
// they were, reads the same. Organisations and projects kept their databases, keys and lookups; a
// project's audiences were entries in projectIndex ([projectId, 'a', id]) until schema 17, which files
// them in the audience kind's lookup instead.
import { join } from 'node:path';
import { type Key, open } from 'lmdb';
import t, { type Test } from 'tap';
import type { Org } from '../../src/model/accounts.js';
import type { Audience, Project } from '../../src/model/projects.js';
import { findOrgByName, getOrg, listOrgs, putOrg } from '../../src/model-records/org-records.js';
import {
  getAudience,
  getProject,
  listAudiences,
  listOrgProjects,
  listPersonalProjects,
  putAudience,
  putProject,
} from '../../src/model-records/project-records.js';
import { kFileName, kKeyedIndexes, kMaxDbs, kSchemaVersion } from '../../src/store/layout.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { countRawKeys, forgetLookups, Store } from '../helpers/store.js';

const at = Date.UTC(2030, 0, 1);
const org: Org = { id: 'org_1', name: 'Acme', plan: 'teams', trialEndsAt: null, standing: 'good', createdAt: at };
const shop: Project = { id: 'prj_1', name: 'Shop', kind: 'single', orgId: org.id, ownerUserId: null, environments: [], createdAt: at };
const mine: Project = { id: 'prj_2', name: 'Mine', kind: 'single', orgId: null, ownerUserId: 'usr_1', environments: [], createdAt: at + 1 };
const audience = (id: string, projectId: string): Audience => ({ id, projectId, name: id, rules: [], updatedAt: at });
const audiences = [audience('aud_b', shop.id), audience('aud_a', shop.id), audience('aud_c', mine.id)];

/** The project's audiences' ids, as listAudiences gives them. */
const ids = (list: readonly { id: string }[]) => list.map((a) => a.id);

/** Leaves the data file of `dir` (closed) as schema 16 did: audiences in projectIndex, not in their kind's lookup. */
async function asSchema16(dir: string): Promise<void> {
  // Whether the file named the lookup is beside the point: a schema 16 file named none of the audience kind's.
  await forgetLookups(dir, 'audience');
  const raw = open({ path: join(dir, kFileName), maxDbs: kMaxDbs });
  const index = raw.openDB<null, Key[]>({ name: 'projectIndex' });
  for (const a of audiences) index.putSync([a.projectId, 'a', a.id], null);
  raw.openDB<unknown, string>({ name: 'meta' }).putSync('schemaVersion', 16);
  await raw.close();
}

/** projectIndex's entries of audiences ('a') in the data file of `dir` (closed). */
async function audienceEntries(dir: string): Promise<number> {
  const raw = open({ path: join(dir, kFileName), maxDbs: kMaxDbs, readOnly: true });
  const count = [...raw.openDB<null, Key[]>({ name: 'projectIndex' }).getKeys()].filter((key) => key[1] === 'a').length;
  await raw.close();
  return count;
}

t.test('a schema 16 data file: read as it is read-only, its audiences filed anew when opened for writing', async (t) => {
  const dir = tempDir(t, 'flagwire-model-kinds-');
  const made = Store.open(dir);
  made.transact((w) => {
    putOrg(w, org);
    putProject(w, shop);
    putProject(w, mine);
    for (const a of audiences) putAudience(w, a);
  });
  await made.close();
  await asSchema16(dir);
  t.equal(await countRawKeys(dir, kKeyedIndexes, 'audience'), 0, 'no audience in the lookups, as schema 16 kept none');

  const reads = (store: Store, t: Test) => {
    t.strictSame(getOrg(store, org.id), org, 'the organisation');
    t.strictSame(ids(listOrgs(store)), [org.id]);
    t.equal(findOrgByName(store, ' ACME ')?.id, org.id, 'by its name');
    t.strictSame(getProject(store, shop.id), shop, 'a project');
    t.strictSame(ids(listOrgProjects(store, org.id)), [shop.id], "the organisation's projects");
    t.strictSame(ids(listPersonalProjects(store, 'usr_1')), [mine.id], "the user's personal ones");
    t.strictSame(getAudience(store, 'aud_a'), audiences[1], 'an audience');
    t.strictSame(ids(listAudiences(store, shop.id)), ['aud_a', 'aud_b'], "a project's audiences, in the order of their ids");
    t.strictSame(ids(listAudiences(store, mine.id)), ['aud_c'], "another project's");
  };

  const reader = Store.open(dir, { readOnly: true });
  t.equal(reader.schemaVersion(), 16, 'a read-only open reads the file as it is');
  t.test('read-only', async (t) => reads(reader, t));
  await reader.close();

  const store = Store.open(dir);
  t.equal(store.schemaVersion(), kSchemaVersion, 'migrated when opened for writing');
  t.test('migrated', async (t) => reads(store, t));
  store.transact((w) => putAudience(w, audience('aud_d', mine.id)));
  t.strictSame(ids(listAudiences(store, mine.id)), ['aud_c', 'aud_d'], 'an audience written after it is filed too');
  await store.close();
  t.equal(await audienceEntries(dir), 0, "projectIndex's audience entries are gone");
  t.equal(await countRawKeys(dir, kKeyedIndexes, 'audience'), 4, 'each audience filed once, in its kind lookup');
});

t.test("a node's copy files the audiences it copies and applies", async (t) => {
  const source = Store.open(tempDir(t, 'flagwire-model-kinds-'));
  t.teardown(() => source.close());
  source.transact((w) => {
    putOrg(w, org);
    putProject(w, shop);
    putAudience(w, audiences[0]!);
  });
  const copy = Store.open(tempDir(t, 'flagwire-model-kinds-'));
  t.teardown(() => copy.close());
  copy.replaceAll('db-1', 0, source.exportRecords());
  t.strictSame(ids(listAudiences(copy, shop.id)), ['aud_b'], 'a full copy');
  const { changes } = source.rehearse([(w) => putAudience(w, audiences[1]!)]);
  copy.applyRevisions([{ revision: 1, changes }]);
  t.strictSame(ids(listAudiences(copy, shop.id)), ['aud_a', 'aud_b'], 'an audience applied');
});
