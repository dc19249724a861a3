// Lookups with keys of several parts (KeyedKind.indexes): entries ordered part by part, read by ranges
// (after a position, through a bound, reversed, limited), weighed and tallied per first part, moved by
// every write and deletion in its transaction; and read the same from records alone when the file does
// not hold the lookup (a read-only open of an older file). A kind declared here, as a capability would.
import { join } from 'node:path';
import { open } from 'lmdb';
import t from 'tap';
import type { LookupRange } from '../../src/store/interfaces.js';
import { LmdbStore } from '../../src/store/lmdb-store.js';
import { keyedRecords } from '../../src/store/record-kinds.js';
import { storeLayout } from '../../src/store/store-layout.js';
import { tempDir } from '../helpers/scratch-dir.js';

interface Thing {
  id: string;
  owner: string;
  at: number;
  size: number;
  due: number | null;
}

const kThings = keyedRecords<Thing>()({
  name: 'thing',
  database: 'things',
  relayed: false,
  key: (thing) => thing.id,
  deletedAs: 'thingDeleted',
  indexes: {
    byOwner: { keysOf: (thing) => [[thing.owner, thing.at]], weigh: (thing) => thing.size, tallied: true },
    due: { keysOf: (thing) => (thing.due === null ? [] : [[thing.due]]) },
  },
});

const layout = storeLayout([{ name: 'things-test', databases: ['things'], records: [kThings] }]);

const thing = (id: string, owner: string, at: number, size = 1, due: number | null = null): Thing => ({ id, owner, at, size, due });
const ids = (things: readonly Thing[]) => things.map((x) => x.id);

t.test('entries are ordered by their parts, then by record key, and read by ranges', async (t) => {
  const store = LmdbStore.open(tempDir(t, 'flagwire-ranges-'), { layout });
  t.teardown(() => store.close());
  store.transact((w) => {
    for (const x of [thing('b', 'o1', 20), thing('a', 'o1', 20), thing('c', 'o1', 5), thing('d', 'o1', 300), thing('e', 'o2', 1)])
      w.putKeyed(kThings, x);
  });
  const list = (range?: LookupRange) => ids(store.listKeyedBy(kThings, 'byOwner', 'o1', range));
  t.strictSame(list(), ['c', 'a', 'b', 'd'], 'by time (a number, not its text), then by key; never another owner');
  t.strictSame(list({ reverse: true }), ['d', 'b', 'a', 'c'], 'reversed');
  t.strictSame(list({ limit: 2 }), ['c', 'a']);
  t.strictSame(list({ after: [20, 'a'] }), ['b', 'd'], 'after a position: not the entry at it');
  t.strictSame(list({ after: [20, 'b'], reverse: true }), ['a', 'c'], 'after a position, reversed');
  t.strictSame(list({ through: [20] }), ['c', 'a', 'b'], 'through a bound: every entry at it');
  t.strictSame(list({ offset: 1, limit: 2 }), ['a', 'b']);
  t.strictSame(list({ past: [20] }), ['d'], 'past every entry whose parts start with these');
  t.strictSame(ids(store.listKeyedBy(kThings, 'byOwner', [], { past: ['o1'], limit: 1 })), ['e'], "the next group's first entry");
  t.strictSame(ids(store.listKeyedBy(kThings, 'byOwner', ['o1', 20])), ['a', 'b'], 'under more of the parts');
  t.strictSame(
    store.lookupEntries(kThings, 'byOwner', 'o1', { limit: 1 }),
    [{ at: [5, 'c'], key: 'c', weight: 1 }],
    'an entry: its position, its record, its weight',
  );
  t.strictSame(store.listKeyedBy(kThings, 'byOwner', 'x'.repeat(600)), [], 'a key too long to file finds nothing');
  t.throws(() => store.listKeyedBy(kThings, 'byOwner', 'o1', { reverse: true, through: [1] }), /reversed range/);
});

t.test('a tally moves with every write and deletion, and not with a rolled back one', async (t) => {
  const store = LmdbStore.open(tempDir(t, 'flagwire-ranges-'), { layout });
  t.teardown(() => store.close());
  store.transact((w) => {
    w.putKeyed(kThings, thing('a', 'o1', 1, 10));
    w.putKeyed(kThings, thing('b', 'o1', 2, 5));
    w.putKeyed(kThings, thing('c', 'o2', 3, 7));
  });
  t.strictSame(store.tallyOf(kThings, 'byOwner', 'o1'), { count: 2, weight: 15 });
  store.transact((w) => w.putKeyed(kThings, thing('a', 'o1', 1, 12)));
  t.strictSame(store.tallyOf(kThings, 'byOwner', 'o1'), { count: 2, weight: 17 }, 'a weight changed in place');
  store.transact((w) => w.putKeyed(kThings, thing('b', 'o2', 2, 5)));
  t.strictSame(store.tallyOf(kThings, 'byOwner', 'o1'), { count: 1, weight: 12 }, 'moved to another owner');
  t.strictSame(store.tallyOf(kThings, 'byOwner', 'o2'), { count: 2, weight: 12 });
  store.transact((w) => w.deleteKeyed(kThings, thing('c', 'o2', 999, 999)));
  t.strictSame(store.tallyOf(kThings, 'byOwner', 'o2'), { count: 1, weight: 5 }, "a deletion takes the stored record's entries");
  t.equal(store.getKeyed(kThings, 'c'), undefined, 'deleted');
  t.strictSame(ids(store.listKeyedBy(kThings, 'byOwner', 'o2')), ['b']);
  store.transact((w) => w.deleteKeyed(kThings, thing('c', 'o2', 3, 7)));
  t.strictSame(store.tallyOf(kThings, 'byOwner', 'o2'), { count: 1, weight: 5 }, 'deleting what is not there does nothing');
  t.throws(() =>
    store.transact((w) => {
      w.putKeyed(kThings, thing('d', 'o1', 4, 100));
      throw new Error('rolled back');
    }),
  );
  t.strictSame(store.tallyOf(kThings, 'byOwner', 'o1'), { count: 1, weight: 12 }, 'a rolled back write moves nothing');
  store.transact((w) => w.deleteKeyed(kThings, thing('a', 'o1', 1, 12)));
  t.strictSame(store.tallyOf(kThings, 'byOwner', 'o1'), { count: 0, weight: 0 }, 'empty');
  t.throws(() => store.tallyOf(kThings, 'due', 'x'), /keeps no tally/);
});

t.test('a file that does not hold the lookups is read from its records, with the same answers', async (t) => {
  const dir = tempDir(t, 'flagwire-ranges-');
  const made = LmdbStore.open(dir, { layout });
  // Random things, seeded: owners, times, sizes, due times (or none), some written twice, some deleted.
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  made.transact((w) => {
    for (let i = 0; i < 300; i++) {
      const x = thing(`t${random(120)}`, `o${random(4)}`, random(50), random(100), random(3) === 0 ? null : random(40));
      if (random(10) === 0) w.deleteKeyed(kThings, x);
      else w.putKeyed(kThings, x);
    }
  });
  const ranges: LookupRange[] = [
    {},
    { reverse: true },
    { limit: 5 },
    { after: [25, 't50'] },
    { after: [25, 't50'], reverse: true },
    { through: [10] },
    { offset: 3, limit: 4 },
  ];
  const answers = (store: LmdbStore) => ({
    byOwner: ['o0', 'o1', 'o2', 'o3', 'o9'].flatMap((owner) =>
      ranges.map((range) => store.lookupEntries(kThings, 'byOwner', owner, range)),
    ),
    due: ranges.map((range) => ids(store.listKeyedBy(kThings, 'due', [], range))),
    tallies: ['o0', 'o1', 'o2', 'o3'].map((owner) => store.tallyOf(kThings, 'byOwner', owner)),
  });
  const kept = answers(made);
  await made.close();
  t.ok(
    kept.byOwner.some((entries) => entries.length > 3),
    'the lookups hold something to compare',
  );

  const raw = open({ path: join(dir, 'flagwire.mdb'), maxDbs: 32 });
  raw.openDB({ name: 'meta' }).removeSync('keyedLookups');
  await raw.close();
  const reader = LmdbStore.open(dir, { readOnly: true, layout });
  t.strictSame(answers(reader), kept, 'read from the records alone');
  await reader.close();

  const store = LmdbStore.open(dir, { layout });
  t.teardown(() => store.close());
  t.strictSame(answers(store), kept, 'built anew when opened for writing');
});
