// Flags as code on two nodes of one PostgreSQL: a file applied through node A's Management API is one
// transaction, so one revision of PostgreSQL holding every flag it creates or changes and their audit
// entries; node B serves them all once its copy reaches that revision; and B, whose writer brings its
// copy to the locked revision before it runs a command, refuses an apply planned before A's (409).
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import type { Change } from '../../src/store/changes.js';
import { call, scrapeMetrics } from '../helpers/http.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { sharedPostgres } from '../helpers/postgres.js';
import type { TestServer } from '../helpers/server.js';
import { pgRevisions, seedInProcess, startNode, waitReady, type PgRevision } from './support.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());

// Generous bounds that only catch a hang: a loaded 2-core machine may take seconds where a quiet one
// takes milliseconds, and nothing here measures speed.
const kHangMs = 60_000;

/** Polls `probe` every 25 ms until it is true; fails only after kHangMs. */
async function eventually(probe: () => Promise<boolean>, what: string): Promise<void> {
  const start = performance.now();
  while (!(await probe())) {
    if (performance.now() - start > kHangMs) throw new Error(`${what} not seen within ${kHangMs} ms`);
    await sleep(25);
  }
}

/** Two nodes on `url`, each on its own empty data dir; stopped, then their dirs removed, at the test's end. */
async function startTwoNodes(t: Parameters<typeof tempDir>[0], url: string): Promise<[TestServer, TestServer]> {
  const dirs = [tempDir(t, 'flagwire-node-'), tempDir(t, 'flagwire-node-')];
  const nodes = await Promise.all(dirs.map((dir) => startNode(url, dir)));
  // Registered after the dirs: teardowns run last first, so the nodes stop before their dirs go.
  t.teardown(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
  });
  await Promise.all(nodes.map((n) => waitReady(n, kHangMs)));
  return nodes as [TestServer, TestServer];
}

/** Records written beside every request (token activity, flag usage): not part of any apply. */
const kBookkeeping = new Set(['activity', 'usage']);

/** The revisions of PostgreSQL after `after`, each with the change set it committed (each record whole: pgRevisions). */
async function revisionsAfter(database: string, after: number): Promise<PgRevision[]> {
  return (await pgRevisions(pg, database)).filter((r) => r.revision > after);
}

async function pgRevision(database: string): Promise<number> {
  return Number((await pg.admin<{ revision: string }>(database, 'SELECT revision FROM flagwire_meta')).rows[0]!.revision);
}

/** The Evaluation API's answer on `node` for one key; null while the node does not know the flag. */
async function served(node: TestServer, flagId: string): Promise<boolean | null> {
  const r = await call(node.baseUrl, 'GET', `/v1/flags/${flagId}?targetingKey=k1`);
  if (r.status === 404) return null;
  if (r.status !== 200) throw new Error(`evaluate ${r.status} ${r.text}`);
  return r.json.enabled as boolean;
}

async function replicaRevision(node: TestServer): Promise<number> {
  const r = await call(node.baseUrl, 'GET', '/ready');
  return r.json.replica.revision as number;
}

t.test('a file applied on one node is one revision of PostgreSQL, served by the other', async (t) => {
  const url = await pg.newDatabase();
  const database = new URL(url).pathname.slice(1);
  const seeded = await seedInProcess(t, url);
  const [a, b] = await startTwoNodes(t, url);
  const token = seeded.secret;
  const api = (node: TestServer, method: string, path: string, body?: unknown) => call(node.baseUrl, method, path, { token, body });

  const exported = await api(a, 'GET', '/api/v1/export');
  t.equal(exported.status, 200, exported.text);
  const file = exported.json;
  const kNew = ['apply-1', 'apply-2', 'apply-3', 'apply-4', 'apply-5'];
  for (const [i, name] of kNew.entries()) file.flags[name] = { enabled: true, trafficPercentage: 100, cohorts: [`c-${i}`] };
  file.flags.checkout = { ...file.flags.checkout, enabled: true, trafficPercentage: 100 };

  const planned = await api(a, 'POST', '/api/v1/plan', file);
  t.equal(planned.status, 200, planned.text);
  t.equal(planned.json.changes.length, kNew.length + 1, 'five creates and one update planned');
  const plannedAt = planned.json.revision as number;

  const before = await pgRevision(database);
  const applied = await api(a, 'POST', `/api/v1/apply?ifRevision=${plannedAt}`, file);
  t.equal(applied.status, 200, applied.text);
  t.equal(applied.json.changed, true);
  t.strictSame(applied.json.changes, planned.json.changes, 'A applied what it planned');
  const appliedAt = applied.json.revision as number;
  t.ok(appliedAt > plannedAt);

  // Read-your-writes on A: every flag is served by the node that answered the apply.
  const ids = new Map<string, string>();
  for (const name of [...kNew, 'checkout']) {
    const listed = await api(a, 'GET', `/api/v1/flags?name=${name}`);
    const id = listed.json.flags[0]?.id as string;
    t.ok(id, `${name} on A`);
    ids.set(name, id);
    t.equal(await served(a, id), true, `${name} served on A at once`);
  }

  // The apply is exactly one revision of PostgreSQL: every other revision since holds only the
  // activity and usage records the requests themselves leave (flushed by each node on its own timer).
  const revisions = await revisionsAfter(database, before);
  const applies = revisions.filter((r) => r.changes.some((c) => !kBookkeeping.has(c.kind)));
  t.equal(applies.length, 1, `one revision for the apply (revisions since: ${revisions.map((r) => r.revision).join(', ')})`);
  const revision = applies[0]!;
  const flags = revision.changes.filter((c) => c.kind === 'flag').map((c) => (c as Extract<Change, { kind: 'flag' }>).value);
  t.strictSame(flags.map((f) => f.name).sort(), [...kNew, 'checkout'].sort(), 'every flag of the file in that one revision, once');
  const entries = revision.changes.filter((c) => c.kind === 'audit').map((c) => (c as Extract<Change, { kind: 'audit' }>).value);
  t.equal(entries.length, kNew.length + 1, 'with their audit entries');
  t.same(
    entries.map((e) => e.actor),
    Array(entries.length).fill(`token:${seeded.tokenId}`),
    'audited as the token',
  );
  t.equal(Math.max(...entries.map((e) => e.seq)), appliedAt, "the project revision apply answered is that revision's last entry");
  // The writer commits what is queued together as one transaction (group commit, src/writer/thread/actor.ts):
  // a node's activity or usage flush queued beside the apply may share its revision. Nothing else may.
  t.same(
    revision.changes.filter((c) => !['flag', 'audit'].includes(c.kind) && !kBookkeeping.has(c.kind)).map((c) => c.kind),
    [],
    'and nothing else but bookkeeping a group commit may carry',
  );
  // A's /ready shows what its follower published, which learns of A's own commit from the NOTIFY a
  // moment after the writer answered (the copy itself has the revision: A serves it above).
  await eventually(async () => (await replicaRevision(a)) >= revision.revision, "the apply's revision in A's /ready");

  // B: once its /ready reports the apply's revision, it serves every flag of it (the follower
  // publishes a revision after its copy has it; each evaluation reads the copy's latest snapshot).
  await eventually(async () => (await replicaRevision(b)) >= revision.revision, "the apply's revision in B's /ready");
  for (const [name, id] of ids) t.equal(await served(b, id), true, `${name} served on B`);
  await eventually(
    async () => ((await scrapeMetrics(b.baseUrl)).get('flagwire_replica_revision') ?? 0) >= revision.revision,
    "the apply's revision in B's flagwire_replica_revision",
  );
  t.pass("B's metric reaches the apply's revision");
  const onB = await api(b, 'POST', '/api/v1/plan', file);
  t.match(onB.json, { changed: false, changes: [], revision: appliedAt }, 'B plans the file as applied, at the same revision');

  // B, given the revision A's plan was made at: stale, so 409 and nothing applied.
  const later = structuredClone(file);
  later.flags.checkout.trafficPercentage = 40;
  const pgBefore = await pgRevision(database);
  const stale = await api(b, 'POST', `/api/v1/apply?ifRevision=${plannedAt}`, later);
  t.equal(stale.status, 409, stale.text);
  t.equal(stale.json.error, 'Revision conflict');
  t.match(stale.json.detail, `since revision ${plannedAt} (it is at revision ${appliedAt}); nothing was applied`);
  const since = await revisionsAfter(database, pgBefore);
  t.same(
    since.filter((r) => r.changes.some((c) => !kBookkeeping.has(c.kind))).map((r) => r.revision),
    [],
    'no revision of PostgreSQL for the refused apply',
  );
  const checkoutId = ids.get('checkout')!;
  for (const node of [a, b]) {
    const r = await api(node, 'GET', `/api/v1/flags/${checkoutId}`);
    t.equal(r.json.trafficPercentage, 100, `checkout unchanged on ${node === a ? 'A' : 'B'}`);
  }

  // With the revision A's apply left, B applies, and A serves it.
  const current = await api(b, 'POST', `/api/v1/apply?ifRevision=${appliedAt}`, later);
  t.equal(current.status, 200, current.text);
  t.match(current.json, {
    changed: true,
    changes: [{ op: 'update', name: 'checkout', fields: [{ path: 'trafficPercentage', before: 100, after: 40 }] }],
  });
  const bApplies = (await revisionsAfter(database, pgBefore)).filter((r) => r.changes.some((c) => !kBookkeeping.has(c.kind)));
  t.equal(bApplies.length, 1, "B's apply is one revision too");
  // Polls /ready, not the Management API, whose per-IP rate limit a tight poll would reach.
  await eventually(async () => (await replicaRevision(a)) >= bApplies[0]!.revision, "B's apply in A's copy");
  t.equal((await api(a, 'GET', `/api/v1/flags/${checkoutId}`)).json.trafficPercentage, 40, "A shows B's apply");
});
