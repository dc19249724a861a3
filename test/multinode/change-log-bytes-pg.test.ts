// PostgreSQL's change log (flagwire_changes) on two nodes (issue 55, item 3): a small PATCH of a large
// flag adds a revision whose bytes follow what changed (the flag's changed fields, src/store/record-patch.ts),
// which the other node applies to its copy and serves; the log is bounded by bytes as well as revisions
// (FLAGWIRE_CHANGE_LOG_BYTES, the newest revision always kept), and a node behind what is left gets a
// whole copy. Bytes are counted in PostgreSQL itself (octet_length of each stored entry), and the running
// total the writers keep (flagwire_meta.change_bytes, PostgreSQL schema 2) is checked against them: as
// the migration from schema 1 sets it, and as the revision bound (every 1000th commit) takes off.
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { kStoreLayout } from '../../src/capabilities.js';
import { runCommand } from '../../src/writer/thread/commands.js';
import { openForCli } from '../../src/store/open-store.js';
import { tempDir } from '../helpers/scratch-dir.js';
import type { TestContext } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { sharedPostgres } from '../helpers/postgres.js';
import type { TestServer } from '../helpers/server.js';
import { kUnlimited } from '../reliability/support.js';
import { pgRevisions, seededDatabase, startNode, startReadyNodes, waitReady } from './support.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());

/** The large variant: about 900 KB, within the 1 MiB body limit. */
const kLarge = 'x'.repeat(900_000);
/** A PATCH of one field. */
const kPatch = { trafficPercentage: 26 };

async function pgRevision(database: string): Promise<number> {
  return Number((await pg.admin<{ revision: string }>(database, 'SELECT revision FROM flagwire_meta')).rows[0]!.revision);
}

/** What flagwire_changes holds: its revisions, the oldest, and their bytes as stored. */
/**
 * The log's revisions and bytes, and the writers' running total of them, read in one statement (one
 * snapshot): a node's background write between two reads would otherwise count in one and not the other.
 */
async function logUsage(database: string): Promise<{ revisions: number; oldest: number; bytes: number; counted: number }> {
  const { rows } = await pg.admin<{ revisions: string; oldest: string; bytes: string; counted: string }>(
    database,
    'SELECT count(*) AS revisions, min(revision) AS oldest, coalesce(sum(octet_length(changes)), 0) AS bytes, ' +
      '(SELECT change_bytes FROM flagwire_meta) AS counted FROM flagwire_changes',
  );
  const r = rows[0]!;
  return { revisions: Number(r.revisions), oldest: Number(r.oldest), bytes: Number(r.bytes), counted: Number(r.counted) };
}

/** A seeded database and two ready nodes on it, with `env`; `api` calls one with the seeded write token. */
async function twoNodes(t: TestContext, env: Record<string, string>) {
  const { url, seeded } = await seededDatabase(t, pg);
  const [a, b] = (await startReadyNodes(t, url, 2, env)) as [TestServer, TestServer];
  const api = (node: TestServer, method: string, path: string, body?: unknown) =>
    call(node.baseUrl, method, path, { token: seeded.secret, body });
  return { url, database: new URL(url).pathname.slice(1), seeded, a, b, api };
}

/** Creates the large flag on `node`: its id and the revision that made it. */
async function createLarge(t: TestContext, api: Api, node: TestServer): Promise<{ flagId: string; createdAt: number }> {
  const body = { name: 'large', enabled: true, variants: { big: kLarge, small: 'y' }, defaultVariant: 'big' };
  const created = await api(node, 'POST', '/api/v1/flags', body);
  t.equal(created.status, 201, created.text.slice(0, 300));
  return { flagId: created.json.id as string, createdAt: Number(created.headers.get('flagwire-revision')) };
}

type Api = (node: TestServer, method: string, path: string, body?: unknown) => ReturnType<typeof call>;

t.test('a small PATCH of a large flag adds what changed to the log; the other node serves the patched flag', async (t) => {
  const { database, a, b, api } = await twoNodes(t, kUnlimited);
  const { flagId, createdAt } = await createLarge(t, api, a);
  const made = (await pgRevisions(pg, database)).find((r) => r.revision === createdAt)!;
  t.ok(made.bytes > kLarge.length, `the create's revision holds the flag whole (${made.bytes} bytes)`);

  const before = await pgRevision(database);
  const patched = await api(a, 'PATCH', `/api/v1/flags/${flagId}`, kPatch);
  t.equal(patched.status, 200, patched.text.slice(0, 300));
  const after = Number(patched.headers.get('flagwire-revision'));
  t.ok(after > before, `the PATCH made revision ${after}`);

  // Every revision since, the PATCH's and any bookkeeping a node flushed meanwhile (token activity).
  const since = (await pgRevisions(pg, database)).filter((r) => r.revision > before);
  const own = since.find((r) => r.revision === after)!;
  const { rows } = await pg.admin<{ changes: Buffer }>(database, 'SELECT changes FROM flagwire_changes WHERE revision = $1', [after]);
  t.equal(own.bytes, rows[0]!.changes.length);
  t.ok(own.bytes < 2048, `the PATCH's revision is ${own.bytes} bytes for a PATCH of one field of a ${kLarge.length}-byte flag`);
  // The bookkeeping flushed beside it is a few hundred bytes a revision: nothing since holds the flag.
  const added = since.reduce((sum, r) => sum + r.bytes, 0);
  t.ok(added < 64 * 1024, `the log gained ${added} bytes in all, in ${since.length} revisions`);
  // The flag, applied from the log's changed fields to its version before, is the flag as A answers it.
  const flag = own.changes.find((c) => c.kind === 'flag')?.value;
  t.match(
    flag,
    { id: flagId, state: { trafficPercentage: 26, typed: { variants: { big: kLarge, small: 'y' } } } },
    "the PATCH's revision, applied, is the patched flag",
  );

  // B follows the revision from the log and serves the flag as A does, its large variant intact.
  const onA = await api(a, 'GET', `/api/v1/flags/${flagId}`);
  const onB = await pollUntil(
    'B serves the patched flag',
    () => api(b, 'GET', `/api/v1/flags/${flagId}`),
    (r) => r.status === 200 && r.json.trafficPercentage === 26,
  );
  t.strictSame(onB.json, onA.json, 'B serves the flag exactly as A does');
  t.match(onB.json, { trafficPercentage: 26, variants: { big: kLarge } });
  const evaluated = await call(b.baseUrl, 'GET', `/v1/flags/${flagId}?targetingKey=k1`);
  t.equal(evaluated.status, 200, evaluated.text.slice(0, 300));
});

t.test('the log is bounded by bytes; a node behind what is left gets a whole copy', async (t) => {
  // A bound below one large flag: its create's revision is kept only while it is the newest. The
  // tokens' activity is written once a minute, not each second: that write's revision, landing between
  // the create and the check (at load it did), would be the newest, and the create's dropped.
  const kBound = 200_000;
  const env = { ...kUnlimited, FLAGWIRE_CHANGE_LOG_BYTES: String(kBound), FLAGWIRE_TEST_ACTIVITY_FLUSH_MS: '60000' };
  const { url, database, a, b, api } = await twoNodes(t, env);

  const behind = (await waitReady(b)).replica.revision as number;
  t.equal(await b.stop(), 0, 'B stopped');
  const { flagId, createdAt } = await createLarge(t, api, a);
  const whole = await logUsage(database);
  t.ok(whole.bytes > kBound, `the newest revision is kept whatever its size (${whole.bytes} bytes)`);
  t.equal(whole.oldest, createdAt, 'and alone: every older revision was dropped to make room');
  for (const trafficPercentage of [10, 20, 30])
    t.equal((await api(a, 'PATCH', `/api/v1/flags/${flagId}`, { trafficPercentage })).status, 200);

  const usage = await logUsage(database);
  t.ok(usage.bytes <= kBound, `the log holds ${usage.bytes} bytes in ${usage.revisions} revisions, within ${kBound}`);
  t.ok(usage.oldest > createdAt, "the large create's revision is gone from the log");
  t.equal(usage.counted, usage.bytes, "the writers' running total is the log's bytes");
  t.ok(usage.oldest > behind + 1, `B, at revision ${behind}, cannot follow a log that starts at ${usage.oldest}`);

  // B starts again on its data dir: the log no longer reaches its next revision, so it copies the whole database.
  const again = await startNode(url, b.dataDir, env);
  t.teardown(() => again.stop());
  const ready = await waitReady(again);
  t.ok(ready.replica.revision > createdAt, `B is at revision ${ready.replica.revision}, past the create's`);
  const onA = await api(a, 'GET', `/api/v1/flags/${flagId}`);
  const onB = await pollUntil(
    'B serves the flag of the last PATCH',
    () => api(again, 'GET', `/api/v1/flags/${flagId}`),
    (r) => r.status === 200 && r.json.trafficPercentage === 30,
  );
  t.strictSame(onB.json, onA.json, 'B serves the large flag as A does');
});

t.test("a database of schema 1 is migrated: its log's bytes counted, then kept counted", async (t) => {
  const { url, seeded } = await seededDatabase(t, pg);
  const database = new URL(url).pathname.slice(1);
  // Back to schema 1: no byte count, and migration 2 not applied.
  await pg.admin(database, 'ALTER TABLE flagwire_meta DROP COLUMN change_bytes');
  await pg.admin(database, 'DELETE FROM flagwire_migrations WHERE version = 2');
  const [a, b] = (await startReadyNodes(t, url, 2, kUnlimited)) as [TestServer, TestServer];
  const usage = await logUsage(database);
  t.ok(usage.bytes > 0);
  t.equal(usage.counted, usage.bytes, "the migration counted the log's bytes");
  const patched = await call(a.baseUrl, 'PATCH', `/api/v1/flags/${seeded.flagId}`, { token: seeded.secret, body: kPatch });
  t.equal(patched.status, 200, patched.text);
  const onB = await pollUntil(
    'B serves the patched flag',
    () => call(b.baseUrl, 'GET', `/api/v1/flags/${seeded.flagId}`, { token: seeded.secret }),
    (r) => r.status === 200 && r.json.trafficPercentage === 26,
  );
  t.strictSame(onB.json, (await call(a.baseUrl, 'GET', `/api/v1/flags/${seeded.flagId}`, { token: seeded.secret })).json);
  const after = await logUsage(database);
  t.equal(after.counted, after.bytes, 'and goes on counting them');
});

t.test('every 1000th revision drops those past the last 100,000, their bytes taken off the count', async (t) => {
  const url = await pg.newDatabase();
  const database = new URL(url).pathname.slice(1);
  const node = await openForCli(tempDir(t), kStoreLayout, url);
  t.teardown(() => node.writes.close());
  const orgCreate = async (name: string) => {
    const [settled] = await node.writes.commit(() => [(w) => runCommand(w, 'orgCreate', { principal: kOperator, name, plan: 'teams' }, 0)]);
    if (!settled!.ok) throw settled!.error;
  };
  await orgCreate('First');
  await orgCreate('Second');
  t.strictSame((await logUsage(database)).revisions, 2);
  // As if 199,996 more revisions had been committed and their entries dropped: the log holds 1 and 2.
  await pg.admin(database, 'UPDATE flagwire_meta SET revision = 199998');
  await orgCreate('At 199,999');
  t.equal((await logUsage(database)).revisions, 3, 'a commit between the thousands drops nothing');
  await orgCreate('At 200,000');
  const usage = await logUsage(database);
  t.strictSame([usage.revisions, usage.oldest], [2, 199_999], 'the 200,000th drops revisions 100,000 and before');
  t.equal(usage.counted, usage.bytes, 'and takes their bytes off the count');
});
