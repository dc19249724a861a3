// The change log on PostgreSQL nodes (src/store/change-log.ts): each node's copy logs every revision of
// the cluster as it applies it (its own writes and the other nodes'), with the change set PostgreSQL
// holds for it, so a relay of any node is sent the cluster's revisions. The in-process half is
// test/store/change-log.test.ts.
import { Packr } from 'msgpackr';
import t from 'tap';
import { kStoreLayout } from '../../src/capabilities.js';
import { runCommand } from '../../src/command-runner/commands.js';
import type { Change } from '../../src/store/changes.js';
import { openForConsole, type ConsoleStore } from '../../src/store/open-store.js';
import { startPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/scratch-dir.js';

const pg = await startPostgres();
t.teardown(() => pg.destroy());

const now = Date.UTC(2030, 0, 1);
const packr = new Packr({ useRecords: false });

async function orgCreate(node: ConsoleStore, name: string): Promise<void> {
  const [settled] = await node.writes.commit(() => [(w) => runCommand(w, 'orgCreate', { name, plan: 'teams' }, now)]);
  if (!settled!.ok) throw settled!.error;
}

t.test("a node's change log holds the cluster's revisions, its own and the other nodes', as PostgreSQL has them", async (t) => {
  const url = await pg.newDatabase();
  const database = url.split('/').pop()!;
  const dirA = tempDir(t);
  const dirB = tempDir(t);
  const a = await openForConsole(dirA, kStoreLayout, url);
  const b = await openForConsole(dirB, kStoreLayout, url);
  const start = a.store.revision();
  t.equal(b.store.revision(), start, 'both nodes start at the same revision');

  await orgCreate(a, 'From A');
  await orgCreate(b, 'From B');
  await orgCreate(a, 'From A again');
  await a.writes.close();
  await b.writes.close();

  // Reopened, each node's copy catches up with what the other wrote meanwhile.
  const nodeA = await openForConsole(dirA, kStoreLayout, url);
  const nodeB = await openForConsole(dirB, kStoreLayout, url);
  t.teardown(() => nodeA.writes.close());
  t.teardown(() => nodeB.writes.close());
  const { rows } = await pg.admin<{ revision: string; changes: Buffer }>(
    database,
    'SELECT revision, changes FROM flagwire_changes WHERE revision > $1 ORDER BY revision',
    [start],
  );
  const cluster = rows.map((r) => ({ revision: Number(r.revision), changes: packr.unpack(r.changes) as Change[] }));
  t.equal(cluster.length, 3, "PostgreSQL's three revisions");
  t.strictSame(nodeA.store.revisionsAfter(start), cluster, "node A's log: each revision with PostgreSQL's change set");
  t.strictSame(nodeB.store.revisionsAfter(start), cluster, "node B's log: the same");
  t.strictSame(
    cluster.map((r) => r.changes.filter((c) => c.kind === 'org').map((c) => (c.value as { name: string }).name)),
    [['From A'], ['From B'], ['From A again']],
    'the writes of both nodes, in commit order',
  );
  t.equal(nodeA.store.source(), nodeB.store.source(), 'both name the database as their source');
});
