// The store's lists are derived from the record kinds the store and the capabilities declare
// (src/store/store-layout.ts): the databases a store opens, each declared by exactly one owner; what a
// full copy clears and copies; what an export reads; the change kinds. A kind declared by a capability
// that exists only here (registered as the real list is, by storeLayout over the capabilities) is
// recorded, copied, exported and cleared with no other change: adding a kind in one place is enough.
// Its PostgreSQL half (migrate-to-postgres, a full copy and the change log) is
// test/multinode/record-kinds-pg.test.ts.
import t from 'tap';
import { kCapabilityList, kRecordOwners, kStoreLayout } from '../../src/capabilities.js';
import { defineCapability } from '../../src/capability/capability.js';
import { StoreOpenError } from '../../src/store/data-file.js';
import { LmdbStore } from '../../src/store/lmdb-store.js';
import { keyedRecords } from '../../src/store/record-kinds.js';
import { kFlagRecords } from '../../src/flags/records/flag-store.js';
import { kStoreRecordOwner, storeLayout, type RecordOwner } from '../../src/store/store-layout.js';
import { runCommand } from '../../src/writer/thread/commands.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { exportStore } from '../helpers/store-export.js';
import { kWidgetDraftRecords, kWidgetLayout, kWidgetRecords, type Widget } from '../helpers/widgets.js';
import { kOperator } from '../../src/actor/audit-actor.js';
import { listOrgs } from '../../src/model/records/org-records.js';

const now = Date.UTC(2030, 0, 1);

t.test('every database the store opens is declared by exactly one owner, and holds a declared kind', async (t) => {
  const owners: readonly RecordOwner[] = [kStoreRecordOwner, ...kRecordOwners];
  const declared = owners.flatMap((owner) => owner.databases ?? []);
  const dir = tempDir(t);
  await LmdbStore.open(dir, { layout: kStoreLayout }).close();
  const opened = Object.keys(await exportStore(dir)).sort();
  t.strictSame(opened, [...kStoreLayout.databases].sort(), 'a new file holds the databases of the layout');
  t.strictSame([...declared].sort(), opened, 'each of them declared once, by the store, a capability or the demo seed');
  for (const name of opened)
    t.equal(kStoreLayout.owners.get(name), owners.find((o) => o.databases?.includes(name))?.name, `${name}: one owner`);
  const held = new Set(kStoreLayout.kinds.flatMap((kind) => [kind.database, ...kind.derived]));
  t.strictSame(
    opened.filter((name) => !held.has(name)),
    ['meta'],
    "each holds the records, or derived entries, of a declared kind, but the store's own meta (its counters and change log)",
  );
  t.strictSame(
    kStoreLayout.copied,
    kStoreLayout.databases.filter((name) => name !== 'meta'),
    'a full copy clears all but meta (which holds the change log: replaceAll clears it itself)',
  );
});

t.test('a layout that contradicts itself is refused when it is built', async (t) => {
  const widgets = defineCapability({ name: 'widgets', databases: ['widgets'], records: [kWidgetRecords] });
  t.throws(() => storeLayout([...kCapabilityList, widgets, { name: 'again', databases: ['widgets'] }]), {
    message: 'database widgets is declared by widgets and by again',
  });
  t.throws(() => storeLayout([...kCapabilityList, { name: 'lost', records: [kWidgetRecords] }]), {
    message: 'record kind widget is kept in database widgets, which no one declares',
  });
  t.throws(() => storeLayout([...kCapabilityList, { name: 'empty', databases: ['nothing'] }]), {
    message: 'databases nothing are declared but hold no kind of record',
  });
  t.throws(() => storeLayout([...kCapabilityList, { name: 'twice', records: [kFlagRecords] }]), {
    message: 'change kind flag is declared twice',
  });
  const many = Array.from({ length: 20 }, (_, i) => `db${i}`);
  t.throws(
    () =>
      storeLayout([
        ...kCapabilityList,
        {
          name: 'many',
          databases: many,
          records: many.map((d) => keyedRecords<Widget>()({ name: d, database: d, relayed: false, key: (w) => w.id })),
        },
      ]),
    { message: /databases are declared; an environment opens at most 48/ },
  );
});

t.test('a kind declared once, by a capability of its own, is recorded, exported, copied and cleared', async (t) => {
  const sourceDir = tempDir(t);
  const source = LmdbStore.open(sourceDir, { layout: kWidgetLayout });
  t.teardown(() => source.close());
  const org = source.transact((w) => runCommand(w, 'orgCreate', { principal: kOperator, name: 'Acme', plan: 'teams' }, now));
  const widget: Widget = { id: 'w1', orgId: org.id, size: 3 };
  const { changes } = source.rehearse([(w) => w.putKeyed(kWidgetRecords, widget)]);
  t.strictSame(changes, [{ kind: 'widget', value: widget }], 'a write of it is a change of its kind');
  source.transact((w) => {
    w.putKeyed(kWidgetRecords, widget);
    w.putKeyed(kWidgetRecords, { id: 'w2', orgId: org.id, size: 5 });
  });

  const exported = source.exportRecords();
  t.strictSame(
    exported.filter((c) => (c.kind as string) === 'widget').map((c) => c.value),
    [widget, { id: 'w2', orgId: org.id, size: 5 }],
    'the export reads its records',
  );
  t.ok(
    exported.some((c) => c.kind === 'org'),
    'beside every other kind',
  );

  const copyDir = tempDir(t);
  const copy = LmdbStore.open(copyDir, { layout: kWidgetLayout });
  t.teardown(() => copy.close());
  copy.applyRevisions([{ revision: 1, changes }]);
  t.strictSame((await exportStore(copyDir)).widgets, [['w1', widget]], 'a change set applied to a copy writes it');

  copy.replaceAll('source', 2, exported);
  const full = await exportStore(copyDir);
  t.strictSame(
    full.widgets!.map(([key]) => key),
    ['w1', 'w2'],
    'a full copy copies it',
  );
  t.strictSame(
    full.orgs!.map(([key]) => key),
    [org.id],
  );

  copy.replaceAll('empty', 1, []);
  const cleared = await exportStore(copyDir);
  t.strictSame(
    kWidgetLayout.databases.filter((name) => name !== 'meta' && cleared[name]!.length > 0),
    [],
    'a full copy of an empty source leaves every database empty, its own included',
  );
});

t.test("a kind not exported stays out of migrate-to-postgres's export, and is still a change and copied", async (t) => {
  const dir = tempDir(t);
  const store = LmdbStore.open(dir, { layout: kWidgetLayout });
  t.teardown(() => store.close());
  const draft: Widget = { id: 'd1', orgId: 'o', size: 1 };
  const { changes } = store.rehearse([(w) => w.putKeyed(kWidgetDraftRecords, draft)]);
  t.strictSame(changes, [{ kind: 'widgetDraft', value: draft }]);
  store.transact((w) => w.putKeyed(kWidgetDraftRecords, draft));
  t.strictSame(
    store.exportRecords().filter((c) => (c.kind as string).startsWith('widget')),
    [],
    'not exported',
  );
  store.replaceAll('source', 1, changes);
  t.strictSame((await exportStore(dir)).widgetDrafts, [['d1', draft]], 'a full copy holding it writes it');
});

t.test('the layout is what a store opens and calls its own', async (t) => {
  const dir = tempDir(t);
  await LmdbStore.open(dir, { layout: kWidgetLayout }).close();
  t.throws(
    () => LmdbStore.open(dir, { layout: kStoreLayout }),
    StoreOpenError,
    "a layout without the kind's database calls the file foreign",
  );
  const reader = LmdbStore.open(dir, { readOnly: true });
  t.teardown(() => reader.close());
  t.equal(listOrgs(reader).length, 0, 'a read-only open without a layout reads the databases the file holds');
});

t.test('what a relay is sent: the kinds evaluation, OFREP, snapshots, flag sets and token checks read, stated by each kind', async (t) => {
  for (const kind of kStoreLayout.kinds) t.type(kind.relayed, 'boolean', `${kind.name} states whether it is relayed`);
  t.strictSame(
    kStoreLayout.relayed.map((kind) => kind.name).sort(),
    ['audience', 'clientKey', 'flag', 'fragments', 'org', 'project', 'relayKey', 'token'],
    'the relayed kinds; users, sessions, mail, webhooks, audit and node work stay home',
  );
  t.strictSame(
    [...kStoreLayout.relayedChanges].sort(),
    ['audience', 'clientKey', 'flag', 'flagDeleted', 'fragments', 'org', 'project', 'relayKey', 'token'],
    "their change kinds, a relayed kind's deletion included",
  );
  t.strictSame(
    kWidgetLayout.relayed.filter((kind) => kind.name.startsWith('widget')).map((kind) => kind.name),
    ['widget'],
    "a capability's kind is relayed as it states, with no list beside it",
  );
});
