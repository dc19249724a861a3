// The lookups a simple kind declares (KeyedKind.indexes), kept by the store in the transaction of every
// write: a record is found under the keys it is filed under now and under no other; a full copy of the
// system of record rebuilds them; a data file written before them (schema 13) is read whole by a
// read-only open and given them when opened for writing, and so is a file whose lookups differ from
// those the kinds declare now (a lookup added). Change requests are the kind that declares them.
import { join } from 'node:path';
import { open } from 'lmdb';
import t from 'tap';
import { kChangeRequestRecords, type ChangeRequest } from '../../src/approvals/records.js';
import { changeOf } from '../../src/store/changes.js';
import { kSchemaVersion } from '../../src/store/layout.js';
import { Store } from '../helpers/store.js';
import { tempDir } from '../helpers/scratch-dir.js';

const at = Date.UTC(2030, 0, 1);

function request(id: string, projectId: string, status: ChangeRequest['status']): ChangeRequest {
  return {
    id,
    projectId,
    status,
    environments: ['production'],
    summary: 'flag.patch f in production',
    author: { id: 'user:usr_1', name: 'Olive' },
    version: 1,
    createdAt: at,
    updatedAt: at,
    changes: [],
    base: [],
    audit: [],
    approvals: [],
    comments: [],
    decided: null,
  };
}

const ids = (requests: readonly ChangeRequest[]) => requests.map((r) => r.id);

t.test("a write moves a record between a lookup's keys, in its own transaction", async (t) => {
  const store = Store.open(tempDir(t, 'flagwire-lookups-'));
  t.teardown(() => store.close());
  store.transact((w) => {
    w.putKeyed(kChangeRequestRecords, request('chr_a', 'prj_1', 'pending'));
    w.putKeyed(kChangeRequestRecords, request('chr_b', 'prj_1', 'pending'));
    w.putKeyed(kChangeRequestRecords, request('chr_c', 'prj_2', 'pending'));
  });
  t.strictSame(ids(store.listKeyedBy(kChangeRequestRecords, 'pending', 'prj_1')), ['chr_a', 'chr_b'], "a project's pending requests");
  t.strictSame(ids(store.listKeyedBy(kChangeRequestRecords, 'pending', 'prj_2')), ['chr_c'], "never another project's");

  store.transact((w) => w.putKeyed(kChangeRequestRecords, request('chr_a', 'prj_1', 'applied')));
  t.strictSame(ids(store.listKeyedBy(kChangeRequestRecords, 'pending', 'prj_1')), ['chr_b'], 'applied: no longer pending');
  t.strictSame(ids(store.listKeyedBy(kChangeRequestRecords, 'project', 'prj_1')), ['chr_a', 'chr_b'], "still the project's");

  t.throws(
    () =>
      store.transact((w) => {
        w.putKeyed(kChangeRequestRecords, request('chr_b', 'prj_1', 'withdrawn'));
        throw new Error('rolled back');
      }),
    /rolled back/,
  );
  t.strictSame(ids(store.listKeyedBy(kChangeRequestRecords, 'pending', 'prj_1')), ['chr_b'], 'a rolled back write moves nothing');
  t.strictSame(store.listKeyedBy(kChangeRequestRecords, 'pending', 'prj_9'), [], 'a key nothing is filed under');
  t.throws(() => store.listKeyedBy(kChangeRequestRecords, 'nope', 'prj_1'), /declares no lookup nope/);
});

t.test('a full copy of the system of record replaces the lookups with those of what it copies', async (t) => {
  const store = Store.open(tempDir(t, 'flagwire-lookups-'));
  t.teardown(() => store.close());
  store.transact((w) => w.putKeyed(kChangeRequestRecords, request('chr_old', 'prj_1', 'pending')));
  store.replaceAll('source-1', 5, [changeOf(kChangeRequestRecords.name, request('chr_new', 'prj_1', 'pending'))]);
  t.strictSame(ids(store.listKeyedBy(kChangeRequestRecords, 'pending', 'prj_1')), ['chr_new'], 'the copy only');
});

t.test('a schema 13 data file: read whole by a read-only open, its lookups built when opened for writing', async (t) => {
  const dir = tempDir(t, 'flagwire-lookups-');
  const made = Store.open(dir);
  made.transact((w) => {
    w.putKeyed(kChangeRequestRecords, request('chr_a', 'prj_1', 'pending'));
    w.putKeyed(kChangeRequestRecords, request('chr_b', 'prj_1', 'rejected'));
    w.putKeyed(kChangeRequestRecords, request('chr_c', 'prj_2', 'pending'));
  });
  await made.close();
  // As schema 13 wrote it: no keyedIndexes database, no lookups named in meta.
  const raw = open({ path: join(dir, 'flagwire.mdb'), maxDbs: 32 });
  raw.openDB({ name: 'keyedIndexes' }).dropSync();
  const meta = raw.openDB({ name: 'meta' });
  meta.removeSync('keyedLookups');
  meta.putSync('schemaVersion', 13);
  await raw.close();

  const reader = Store.open(dir, { readOnly: true });
  t.equal(reader.schemaVersion(), 13, 'a read-only open reads it as it is');
  t.strictSame(ids(reader.listKeyedBy(kChangeRequestRecords, 'pending', 'prj_1')), ['chr_a'], 'found by reading every record');
  await reader.close();

  const store = Store.open(dir);
  t.teardown(() => store.close());
  t.equal(store.schemaVersion(), kSchemaVersion);
  t.strictSame(ids(store.listKeyedBy(kChangeRequestRecords, 'pending', 'prj_1')), ['chr_a'], 'the lookup built');
  t.strictSame(ids(store.listKeyedBy(kChangeRequestRecords, 'project', 'prj_1')), ['chr_a', 'chr_b']);
  t.strictSame(ids(store.listKeyedBy(kChangeRequestRecords, 'pending', 'prj_2')), ['chr_c']);
});

t.test('a lookup the file does not hold yet (declared since it was written) is built when it is opened for writing', async (t) => {
  const dir = tempDir(t, 'flagwire-lookups-');
  const made = Store.open(dir);
  made.transact((w) => {
    w.putKeyed(kChangeRequestRecords, request('chr_a', 'prj_1', 'pending'));
    w.putKeyed(kChangeRequestRecords, request('chr_b', 'prj_2', 'applied'));
  });
  await made.close();
  // As a Flagwire that declared only the project lookup left it: that lookup's entries, and its names.
  const raw = open({ path: join(dir, 'flagwire.mdb'), maxDbs: 32 });
  const lookups = raw.openDB<null, string[]>({ name: 'keyedIndexes' });
  for (const key of [...lookups.getKeys()]) if (key[1] !== 'project') lookups.removeSync(key);
  raw.openDB({ name: 'meta' }).putSync('keyedLookups', JSON.stringify([[kChangeRequestRecords.name, ['project']]]));
  await raw.close();

  const store = Store.open(dir);
  t.teardown(() => store.close());
  t.strictSame(ids(store.listKeyedBy(kChangeRequestRecords, 'status', 'pending')), ['chr_a'], 'the lookup added is built');
  t.strictSame(ids(store.listKeyedBy(kChangeRequestRecords, 'pending', 'prj_1')), ['chr_a']);
  t.strictSame(ids(store.listKeyedBy(kChangeRequestRecords, 'project', 'prj_2')), ['chr_b'], 'the one it held, kept');
});
