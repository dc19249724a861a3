// A kind of record declared in one place, by a capability that exists only in tests
// (test/helpers/widgets.ts), goes through PostgreSQL as every real kind does: migrate-to-postgres copies
// it into the database, a node's empty data dir gets it in its full copy, and a write of it on one node
// reaches another through the change log. Its LMDB half is test/store/store-layout.test.ts.
import { Packr } from 'msgpackr';
import t from 'tap';
import { kStoreLayout } from '../../src/capabilities.js';
import { LmdbStore } from '../../src/store/lmdb-store.js';
import { migrateToPostgres, openForCli } from '../../src/store/open-store.js';
import { runCommand } from '../../src/writer/thread/commands.js';
import { sharedPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { exportStore } from '../helpers/store-export.js';
import { kWidgetDraftRecords, kWidgetLayout, kWidgetRecords, type Widget } from '../helpers/widgets.js';
import { kOperator } from '../../src/actor/audit-actor.js';
import { deleteFlag, putFlag } from '../../src/flags/records/flag-store.js';
import type { Flag } from '../../src/model/flags.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());

const now = Date.UTC(2030, 0, 1);

t.test('a kind declared once is migrated, fully copied and replicated through PostgreSQL', async (t) => {
  const url = await pg.newDatabase();
  const database = url.split('/').pop()!;
  const sourceDir = tempDir(t);
  const source = LmdbStore.open(sourceDir, { layout: kWidgetLayout });
  const org = source.transact((w) => runCommand(w, 'orgCreate', { principal: kOperator, name: 'Acme', plan: 'teams' }, now));
  const widget: Widget = { id: 'w1', orgId: org.id, size: 3 };
  source.transact((w) => {
    w.putKeyed(kWidgetRecords, widget);
    w.putKeyed(kWidgetDraftRecords, { id: 'd1', orgId: org.id, size: 1 });
  });
  await source.close();

  const migrated = await migrateToPostgres(sourceDir, kWidgetLayout, url);
  const { rows } = await pg.admin<{ kind: string; key: string }>(database, 'SELECT kind, key FROM flagwire_records ORDER BY kind, key');
  t.strictSame(
    rows.filter((r) => r.kind.startsWith('widget')),
    [{ kind: 'widget', key: 'w1' }],
    'migrate-to-postgres copies the exported kind, under its key, and not the one that is not exported',
  );
  t.ok(
    rows.some((r) => r.kind === 'org' && r.key === org.id),
    'beside the real kinds',
  );
  t.equal(migrated.records, rows.length, 'every record it exported is in the database');

  // A node's empty data dir is a full copy of the database.
  const nodeDir = tempDir(t);
  const node = await openForCli(nodeDir, kWidgetLayout, url);
  await node.writes.close();
  t.strictSame((await exportStore(nodeDir)).widgets, [['w1', widget]], "a full copy into an empty data dir holds the kind's records");

  // A write of it through the source's write path (PostgreSQL, then its copy) reaches the node through the change log.
  const writer = await openForCli(sourceDir, kWidgetLayout, url);
  const second: Widget = { id: 'w2', orgId: org.id, size: 5 };
  const [settled] = await writer.writes.commit(() => [(w) => w.putKeyed(kWidgetRecords, second)]);
  t.ok(settled!.ok, 'committed');
  await writer.writes.close();
  const again = await openForCli(nodeDir, kWidgetLayout, url);
  await again.writes.close();
  t.strictSame(
    (await exportStore(nodeDir)).widgets!.map(([key]) => key),
    ['w1', 'w2'],
    "the node's copy, brought up to date from the change log, holds the new record",
  );

  // The real layout does not know the kind: a node started with it calls the file a newer Flagwire's (its
  // meta names the widgets' databases).
  await t.rejects(openForCli(nodeDir, kStoreLayout, url), { name: 'StoreOpenError', message: /written by a newer Flagwire/ });
});

t.test(
  "a kind's lookups and its lifecycle go through PostgreSQL: a flag deleted on one node takes its widgets on every node",
  async (t) => {
    const url = await pg.newDatabase();
    const database = url.split('/').pop()!;
    const sourceDir = tempDir(t);
    const source = LmdbStore.open(sourceDir, { layout: kWidgetLayout });
    const org = source.transact((w) => runCommand(w, 'orgCreate', { principal: kOperator, name: 'Acme', plan: 'teams' }, now));
    const flag: Flag = {
      id: 'flg_w',
      projectId: 'prj_w',
      name: 'with-widgets',
      description: '',
      tags: [],
      cohorts: [],
      createdAt: now,
      updatedAt: now,
      kind: 'flag',
      state: { enabled: false, trafficPercentage: 0, audienceId: null },
    };
    source.transact((w) => {
      putFlag(w, flag);
      w.putKeyed(kWidgetRecords, { id: 'w1', orgId: org.id, size: 1, flagId: flag.id });
      w.putKeyed(kWidgetRecords, { id: 'w2', orgId: org.id, size: 2 });
    });
    await source.close();
    await migrateToPostgres(sourceDir, kWidgetLayout, url);

    const nodeDir = tempDir(t);
    await (await openForCli(nodeDir, kWidgetLayout, url)).writes.close();
    const read = async (dir: string) => {
      const store = LmdbStore.open(dir, { readOnly: true, layout: kWidgetLayout });
      try {
        return {
          byOrg: store.listKeyedBy(kWidgetRecords, 'org', org.id).map((w) => w.id),
          byFlag: store.listKeyedBy(kWidgetRecords, 'flag', flag.id).map((w) => w.id),
        };
      } finally {
        await store.close();
      }
    };
    t.strictSame(await read(nodeDir), { byOrg: ['w1', 'w2'], byFlag: ['w1'] }, "a full copy files the kind's records in its lookups");

    const writer = await openForCli(sourceDir, kWidgetLayout, url);
    const [settled] = await writer.writes.commit(() => [(w) => deleteFlag(w, flag)]);
    t.ok(settled!.ok, 'the flag deleted');
    await writer.writes.close();
    const { rows } = await pg.admin<{ kind: string; key: string }>(
      database,
      "SELECT kind, key FROM flagwire_records WHERE kind IN ('flag', 'widget') ORDER BY key",
    );
    t.strictSame(
      rows,
      [{ kind: 'widget', key: 'w2' }],
      "PostgreSQL's current records: the flag and the widget hanging off it are gone, the other widget kept",
    );
    const [last] = (await pg.admin<{ changes: Buffer }>(database, 'SELECT changes FROM flagwire_changes ORDER BY revision DESC LIMIT 1'))
      .rows;
    t.strictSame(
      (new Packr({ useRecords: false }).unpack(last!.changes) as { kind: string }[]).map((change) => change.kind),
      ['widgetDeleted', 'flagDeleted'],
      'its revision: the widget deleted, then the flag it hangs off (what every node applies in order)',
    );

    await (await openForCli(nodeDir, kWidgetLayout, url)).writes.close();
    t.strictSame(
      await read(nodeDir),
      { byOrg: ['w2'], byFlag: [] },
      "the node's copy, brought up to date from the change log, lost the widget with its flag",
    );
  },
);
