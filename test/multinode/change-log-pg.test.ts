// The change log on PostgreSQL nodes (src/store/change-log.ts): each node's copy logs every revision of
// the cluster as it applies it (its own writes and the other nodes'), with the change set PostgreSQL
// holds for it (its relayed changes: a record written again as its changed fields, whichever node
// wrote it), so a relay of any node is sent the cluster's revisions. The in-process half is
// test/store/change-log.test.ts.
import { kOperator } from '../../src/actor/audit-actor.js';
import { Packr } from 'msgpackr';
import t, { type Test } from 'tap';
import { kStoreLayout } from '../../src/capabilities.js';
import { runCommand } from '../../src/writer/thread/commands.js';
import type { Change } from '../../src/store/changes.js';
import type { StoreWriter } from '../../src/store/interfaces.js';
import { openForCli, type CliStore } from '../../src/store/open-store.js';
import { sharedPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { getFlag } from '../../src/flags/records/flag-store.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());

const now = Date.UTC(2030, 0, 1);
const packr = new Packr({ useRecords: false });

async function orgCreate(node: CliStore, name: string): Promise<void> {
  const [settled] = await node.writes.commit(() => [(w) => runCommand(w, 'orgCreate', { principal: kOperator, name, plan: 'teams' }, now)]);
  if (!settled!.ok) throw settled!.error;
}

/** Each node closed and opened again on its data dir (its copy catches up with PostgreSQL as it opens). */
async function reopened(t: Test, url: string, ...nodes: [CliStore, string][]): Promise<CliStore[]> {
  for (const [node] of nodes) await node.writes.close();
  const out: CliStore[] = [];
  for (const [, dir] of nodes) {
    const node = await openForCli(dir, kStoreLayout, url);
    t.teardown(() => node.writes.close());
    out.push(node);
  }
  return out;
}

t.test("a node's change log holds the cluster's revisions, its own and the other nodes', as PostgreSQL has them", async (t) => {
  const url = await pg.newDatabase();
  const database = url.split('/').pop()!;
  const dirA = tempDir(t);
  const dirB = tempDir(t);
  const a = await openForCli(dirA, kStoreLayout, url);
  const b = await openForCli(dirB, kStoreLayout, url);
  const start = a.store.revision();
  t.equal(b.store.revision(), start, 'both nodes start at the same revision');

  await orgCreate(a, 'From A');
  await orgCreate(b, 'From B');
  await orgCreate(a, 'From A again');
  // Reopened, each node's copy catches up with what the other wrote meanwhile.
  const [nodeA, nodeB] = await reopened(t, url, [a, dirA], [b, dirB]);
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

t.test("a large flag's small change is logged as what changed on every node, the writer's and the follower's", async (t) => {
  const url = await pg.newDatabase();
  const dirA = tempDir(t);
  const dirB = tempDir(t);
  const a = await openForCli(dirA, kStoreLayout, url);
  const b = await openForCli(dirB, kStoreLayout, url);
  const write = async <T>(node: CliStore, fn: (w: StoreWriter) => T): Promise<T> => {
    const [settled] = await node.writes.commit(() => [fn]);
    if (!settled!.ok) throw settled!.error;
    return settled!.value;
  };
  const org = await write(a, (w) => runCommand(w, 'orgCreate', { principal: kOperator, name: 'Acme', plan: 'teams' }, now));
  const project = await write(a, (w) =>
    runCommand(w, 'projectCreate', { principal: kOperator, orgId: org.id, name: 'Shop', kind: 'single' }, now),
  );
  const body = { name: 'big', enabled: true, variants: { big: 'x'.repeat(500_000), small: 'y' }, defaultVariant: 'big' };
  const flag = await write(a, (w) => runCommand(w, 'flagCreate', { projectId: project.id, body, principal: kOperator }, now));
  const start = a.store.revision();
  // Node B writes the change (its copy caught up inside the write); node A follows it from PostgreSQL.
  await write(b, (w) =>
    runCommand(w, 'flagPatch', { flagId: flag.id, env: null, patch: { trafficPercentage: 26 }, principal: kOperator }, now + 1000),
  );
  const [nodeA, nodeB] = await reopened(t, url, [a, dirA], [b, dirB]);

  const logged = nodeB.store.revisionsAfter(start);
  t.match(
    logged,
    [{ revision: start + 1, changes: [{ kind: 'patch', value: { kind: 'flag', key: flag.id } }] }],
    "the writer's log: the flag's changed fields",
  );
  t.strictSame(nodeA.store.revisionsAfter(start), logged, "the follower's log: the same");
  t.ok(JSON.stringify(logged).length < 1000, `${JSON.stringify(logged).length} characters for a 500 KB flag`);
  t.equal(
    Buffer.compare(packr.pack(getFlag(nodeA.store, flag.id)), packr.pack(getFlag(nodeB.store, flag.id))),
    0,
    'both hold the same flag, byte for byte',
  );
});
