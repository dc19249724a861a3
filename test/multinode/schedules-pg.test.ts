// Scheduled changes on several nodes of one PostgreSQL (issue 27, item 4): every node runs a scheduler,
// and there is no lease; each due change is applied by a writer transaction that holds PostgreSQL's
// revision lock, brings the node's copy up to date and checks the change is still pending, so exactly
// one node applies it and the others find it done. Checked three ways: PostgreSQL's change log (one
// revision holds the change's `applied` record and its one flag.patch entry by plan:<id>), the audit
// read through the console and through every node, and the nodes' own logs (exactly one node says it
// applied each change). Then kill -9: of a node before the change falls due, and of the node first in
// line for the revision lock when both schedulers wait on it for the due change (an outside transaction
// holds the lock across the due time, so both queue; the killed node's backend gets the lock and dies
// with its client); the survivor applies it once, and the killed node, started again on its data dir,
// shows it applied and does not apply it again.
//
// Each node has its own clock. Changes are scheduled ten minutes ahead, so everything a step does before
// they fall due is done before (on a machine however busy), and then brought due by moving the clocks of
// the nodes that should run them (the test hook): when they fall due is the test's choice, never a race
// with the machine's load. The bounds below only catch a hang: nothing here measures speed.
import { setTimeout as sleep } from 'node:timers/promises';
import pgLib from 'pg';
import t from 'tap';
import type { AuditEntry } from '../../src/model/audit.js';
import type { ScheduledChange } from '../../src/release-plans/schedules.js';
import { cli, type TestContext } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { advanceClock, flushActivity, writerIdle } from '../helpers/test-hooks.js';
import { call } from '../helpers/http.js';
import { sharedPostgres } from '../helpers/postgres.js';
import type { TestServer } from '../helpers/server.js';
import { consoleCall, setPassword, signIn } from '../helpers/web-console.js';
import { kUnlimited } from '../reliability/support.js';
import { changeLog, seededDatabase, startNode, waitReady } from './support.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());

const kHangMs = 60_000;
/** How far ahead a change is scheduled: far past any step's time, however loaded the machine. */
const kLeadMs = 600_000;
/**
 * Info level: the scheduler logs each change it applied ("scheduled change applied"), warnings only
 * otherwise. The test hooks move the nodes' clocks and flush their token activity.
 */
const kNodeEnv = { ...kUnlimited, FLAGWIRE_LOG_LEVEL: 'info', FLAGWIRE_TEST_HOOKS: '1' };

/** Polls `probe` every 100 ms until it is true; fails only after kHangMs. */
async function eventually(probe: () => Promise<boolean>, what: string): Promise<void> {
  const start = performance.now();
  while (!(await probe())) {
    if (performance.now() - start > kHangMs) throw new Error(`${what} not seen within ${kHangMs} ms`);
    await sleep(100);
  }
}

interface Node {
  name: string;
  dir: string;
  server: TestServer;
}

/** Moves each node's clock just past `at` (Unix ms), so a change due then is due on it now. */
async function bringDue(nodes: Node[], at: number): Promise<void> {
  for (const node of nodes) {
    const now = await advanceClock(node.server, 0);
    if (now <= at) await advanceClock(node.server, Math.ceil((at - now) / 1000) + 1);
  }
}

/**
 * Node `name` on `url` and `dir` (its data dir, kept across a restart), ready; stopped at the test's end.
 * PGAPPNAME names its connections in pg_stat_activity, so a backend waiting for the lock tells its node.
 */
async function startNamed(t: TestContext, url: string, name: string, dir: string, env: Record<string, string> = {}): Promise<Node> {
  const server = await startNode(url, dir, { ...kNodeEnv, ...env, PGAPPNAME: name });
  t.teardown(async () => {
    await server.stop();
  });
  await waitReady(server, kHangMs);
  return { name, dir, server };
}

/** The schedule ids a node's log says it applied (on time or late), in order. */
function appliedIn(node: Node): string[] {
  const ids: string[] = [];
  // Whole lines only: the last piece may be a line still arriving on the pipe.
  for (const line of node.server.logs().split('\n').slice(0, -1)) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { msg?: string; scheduleId?: string };
    if (entry.msg?.startsWith('scheduled change applied') && entry.scheduleId !== undefined) ids.push(entry.scheduleId);
  }
  return ids;
}

/** The nodes whose log says they applied `id`. */
function appliers(nodes: readonly Node[], id: string): string[] {
  return nodes.flatMap((n) =>
    appliedIn(n)
      .filter((applied) => applied === id)
      .map(() => n.name),
  );
}

interface ScheduleTrail {
  /** Per schedule id: the revisions that wrote its record as applied, failed or cancelled. */
  done: Map<string, { revision: number; status: string }[]>;
  /** Per schedule id: the audit entries by plan:<id>, with their revision. */
  audited: Map<string, { revision: number; entry: AuditEntry }[]>;
}

/** What PostgreSQL's change log holds of scheduled changes: every revision since the database began. */
async function scheduleTrail(database: string): Promise<ScheduleTrail> {
  const trail: ScheduleTrail = { done: new Map(), audited: new Map() };
  const push = <V>(map: Map<string, V[]>, key: string, value: V) => map.set(key, [...(map.get(key) ?? []), value]);
  for (const { revision, change } of await changeLog(pg, database)) {
    if (change.kind === 'schedule' && change.value.status !== 'pending') {
      push(trail.done, change.value.id, { revision, status: change.value.status });
    }
    if (change.kind === 'audit' && change.value.actor.startsWith('plan:')) {
      push(trail.audited, change.value.actor.slice('plan:'.length), { revision, entry: change.value });
    }
  }
  return trail;
}

/** The trail says `id` was applied exactly once: one revision wrote it applied, with its one flag.patch. */
function appliedOnce(t: TestContext, trail: ScheduleTrail, id: string): void {
  const done = trail.done.get(id) ?? [];
  t.same(
    done.map((d) => d.status),
    ['applied'],
    `${id}: one record of it done in PostgreSQL's change log, applied`,
  );
  const audited = trail.audited.get(id) ?? [];
  t.same(
    audited.map((a) => a.entry.action),
    ['flag.patch'],
    `${id}: one audit entry by plan:${id}, a flag.patch`,
  );
  t.equal(audited[0]?.revision, done[0]?.revision, `${id}: the patch and the record in one revision`);
}

async function pgRevision(database: string): Promise<number> {
  return Number((await pg.admin<{ revision: string }>(database, 'SELECT revision FROM flagwire_meta')).rows[0]!.revision);
}

async function replicaRevision(node: Node): Promise<number> {
  return (await call(node.server.baseUrl, 'GET', '/ready')).json?.replica?.revision ?? -1;
}

t.test('several nodes: every scheduled change applied exactly once, in due order', async (t) => {
  const { url, seeded } = await seededDatabase(t, pg);
  const database = new URL(url).pathname.slice(1);
  const db = ['--database', url];
  t.equal((await setPassword(tempDir(t), seeded.ownerId, 'reads the audit', db)).code, 0);
  const dirs = ['node-a', 'node-b', 'node-c'].map(() => tempDir(t, 'flagwire-node-'));
  const nodes = await Promise.all(['node-a', 'node-b', 'node-c'].map((name, i) => startNamed(t, url, name, dirs[i]!)));
  const api = (node: Node, method: string, path: string, body?: unknown) =>
    call(node.server.baseUrl, method, path, { token: seeded.secret, body });

  // Three more flags, off, one created on each node.
  const others: string[] = [];
  for (const [i, node] of nodes.entries()) {
    const r = await api(node, 'POST', '/api/v1/flags', { name: `banner-${i}`, enabled: false, trafficPercentage: 100 });
    t.equal(r.status, 201, r.text);
    others.push(r.json.id);
  }

  // Eight changes due within 70 ms of each other, ten minutes ahead, scheduled round the nodes: five
  // successive percentages of checkout (10 ms apart, so their due order is theirs), one switch-on each
  // of the others.
  const kPercents = [20, 40, 60, 80, 100];
  const at = Date.now() + kLeadMs;
  const wanted = [
    ...kPercents.map((p, i) => ({
      flagId: seeded.flagId,
      at: at + i * 10,
      patch: i === 0 ? { enabled: true, trafficPercentage: p } : { trafficPercentage: p },
    })),
    ...others.map((flagId, i) => ({ flagId, at: at + 50 + i * 10, patch: { enabled: true } })),
  ];
  const ids: string[] = [];
  for (const [i, w] of wanted.entries()) {
    const node = nodes[i % nodes.length]!;
    const r = await api(node, 'POST', `/api/v1/flags/${w.flagId}/schedules`, { at: w.at, patch: w.patch });
    t.equal(r.status, 201, `scheduled on ${node.name}: ${r.text}`);
    t.equal(r.json.status, 'pending');
    ids.push(r.json.id);
  }
  t.ok(Date.now() < at, 'every change was scheduled before the first fell due');
  // All of them due on every node at once: each scheduler races the others for every change.
  await bringDue(nodes, at + 70);

  // Every node's list shows them all done; then the same list on every node.
  const listOn = async (node: Node) => (await api(node, 'GET', '/api/v1/schedules')).json.schedules as ScheduledChange[];
  for (const node of nodes) {
    await eventually(
      async () => (await listOn(node)).filter((s) => ids.includes(s.id) && s.status !== 'pending').length === ids.length,
      `every change done on ${node.name}`,
    );
  }
  const lists = await Promise.all(nodes.map(listOn));
  for (const [i, list] of lists.entries()) t.strictSame(list, lists[0], `${nodes[i]!.name} lists the same changes`);
  const byId = new Map(lists[0]!.map((s) => [s.id, s]));
  for (const id of ids) {
    const s = byId.get(id)!;
    t.match(s, { status: 'applied', outcome: 'changed' }, `${id} applied, and it changed the flag`);
    t.ok(s.doneAt! >= s.at, `${id} applied once due`);
  }
  t.comment(`applied at most ${Math.max(...ids.map((id) => byId.get(id)!.doneAt! - byId.get(id)!.at))} ms after falling due`);

  // Every node serves the final state (its copy has every change, since the lists above show them done).
  for (const node of nodes) {
    const checkout = await api(node, 'GET', `/api/v1/flags/${seeded.flagId}`);
    t.match(checkout.json, { enabled: true, trafficPercentage: 100 }, `checkout's last change on ${node.name}`);
    for (const id of [seeded.flagId, ...others]) {
      const served = await call(node.server.baseUrl, 'GET', `/v1/flags/${id}?targetingKey=k1`);
      t.equal(served.json?.enabled, true, `${id} served on by ${node.name}`);
    }
  }

  // PostgreSQL's change log: each change applied exactly once, nothing failed or cancelled.
  const trail = await scheduleTrail(database);
  for (const id of ids) appliedOnce(t, trail, id);
  t.same([...trail.done.keys()].sort(), [...ids].sort(), 'no other scheduled change done');
  t.same([...trail.audited.keys()].sort(), [...ids].sort(), 'no other entry by a plan');

  // The audit, read through the console from PostgreSQL and through every node's web console: the same
  // entries, one flag.patch per change, and checkout's percentages in their due order.
  const planEntries = (entries: AuditEntry[]) => entries.filter((e) => e.actor.startsWith('plan:'));
  const audit = await cli(tempDir(t), ['audit', seeded.projectId, '--limit', '200', ...db], { inProcess: true });
  t.equal(audit.code, 0, audit.stderr);
  const fromPg = planEntries(audit.json.entries);
  t.same(fromPg.map((e) => e.actor).sort(), ids.map((id) => `plan:${id}`).sort(), 'the audit has one entry by each change');
  t.same(
    fromPg.map((e) => e.action),
    Array(ids.length).fill('flag.patch'),
    'each a flag.patch',
  );
  const checkoutOrder = fromPg
    .filter((e) => e.flagId === seeded.flagId)
    .sort((x, y) => x.seq - y.seq)
    .map((e) => e.changes.trafficPercentage?.after);
  t.same(checkoutOrder, kPercents, "checkout's percentages applied in their due order");
  for (const node of nodes) {
    const session = await signIn(node.server.baseUrl, 'owner@acme.test', 'reads the audit');
    const r = await consoleCall(node.server.baseUrl, session, 'GET', `projects/${seeded.projectId}/audit?limit=200`);
    t.equal(r.status, 200);
    t.strictSame(planEntries(r.json.entries), fromPg, `${node.name}'s audit shows the same entries`);
  }

  // And the nodes' own account: each change applied by exactly one node.
  for (const id of ids) t.equal(appliers(nodes, id).length, 1, `${id}: one node says it applied it (${appliers(nodes, id).join(', ')})`);
  t.comment(`applied by: ${nodes.map((n) => `${n.name} ${appliedIn(n).length}`).join(', ')}`);
  for (const node of nodes) t.notMatch(node.server.logs(), /scheduled change failed/, `nothing failed on ${node.name}`);
});

t.test('kill -9 of a node: the other applies the change, once', async (t) => {
  const { url, seeded } = await seededDatabase(t, pg);
  const database = new URL(url).pathname.slice(1);
  const db = ['--database', url];
  // Writes wait for the held lock below far longer than they would time out by default.
  const env = { FLAGWIRE_WRITE_TIMEOUT_MS: '120000' };
  const dirs = { 'node-a': tempDir(t, 'flagwire-node-'), 'node-b': tempDir(t, 'flagwire-node-') };
  let a = await startNamed(t, url, 'node-a', dirs['node-a'], env);
  const b = await startNamed(t, url, 'node-b', dirs['node-b'], env);
  /** Every node run so far, killed or not: their logs together say who applied what. */
  const runs: Node[] = [a, b];
  const flagOn = async (node: Node) =>
    (await call(node.server.baseUrl, 'GET', `/api/v1/flags/${seeded.flagId}`, { token: seeded.secret })).json;
  const scheduleOn = async (node: Node, id: string) =>
    ((await call(node.server.baseUrl, 'GET', '/api/v1/schedules', { token: seeded.secret })).json.schedules as ScheduledChange[]).find(
      (s) => s.id === id,
    );
  /** A change scheduled by the console on PostgreSQL (no node's writer involved), due `aheadMs` from now. */
  const schedule = async (patch: Record<string, unknown>, aheadMs: number) => {
    const due = Date.now() + aheadMs;
    const r = await cli(
      tempDir(t),
      ['flag', 'schedule', seeded.flagId, '--at', new Date(due).toISOString(), '--patch', JSON.stringify(patch), ...db],
      { inProcess: true },
    );
    t.equal(r.code, 0, r.stderr);
    return r.json as ScheduledChange;
  };
  const kill = async (node: Node) => {
    const exited = new Promise((resolve) => node.server.proc.once('exit', resolve));
    node.server.proc.kill('SIGKILL');
    await exited;
  };

  // 1. A is killed before the change falls due: B applies it.
  const first = await schedule({ enabled: true }, kLeadMs);
  await kill(a);
  t.ok(Date.now() < first.at, 'A was killed before the change fell due');
  await bringDue([b], first.at);
  await eventually(async () => (await scheduleOn(b, first.id))?.status === 'applied', 'the change applied, on B');
  t.equal((await flagOn(b)).enabled, true, 'B serves it');
  // A again, on the data dir it was killed on: its copy catches up, and the change is done there too.
  a = await startNamed(t, url, 'node-a', dirs['node-a'], env);
  runs.push(a);
  t.match(await scheduleOn(a, first.id), { status: 'applied', outcome: 'changed' }, 'A, started again, shows it applied');
  t.equal((await flagOn(a)).enabled, true, 'and serves it');
  appliedOnce(t, await scheduleTrail(database), first.id);
  t.same(appliers(runs, first.id), ['node-b'], 'B says it applied it, and nobody else');

  // 2. Both schedulers wait for the revision lock with the change due; the node first in line is killed.
  // B's clock is ten minutes on from the first change: twice the lead keeps this one ahead of it too.
  const second = await schedule({ trafficPercentage: 30 }, 2 * kLeadMs);
  const scheduledAt = await pgRevision(database);
  for (const node of [a, b]) await eventually(async () => (await replicaRevision(node)) >= scheduledAt, `the change on ${node.name}`);
  // Nothing else may wait for the lock: the token activity of the requests above is written now and the
  // writers left idle (nothing below calls with a token or evaluates a flag, so nothing more is queued).
  for (const node of [a, b]) {
    await flushActivity(node.server);
    await writerIdle(node.server);
  }
  const holder = new pgLib.Client({ connectionString: url });
  await holder.connect();
  t.teardown(() => holder.end().catch(() => undefined));
  await holder.query('BEGIN');
  await holder.query('SELECT revision FROM flagwire_meta FOR UPDATE');
  t.ok(Date.now() < second.at, 'the lock was taken before the change fell due');
  await bringDue([a, b], second.at);
  const waiters = async () =>
    (
      await pg.admin<{ application_name: string; wait_event: string }>(
        database,
        "SELECT application_name, wait_event FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' ORDER BY application_name",
      )
    ).rows;
  await eventually(async () => (await waiters()).length === 2, "both nodes' writers waiting for the revision lock");
  const waiting = await waiters();
  t.same(
    waiting.map((w) => w.application_name),
    ['node-a', 'node-b'],
    'one writer of each node waits',
  );
  // The first waiter waits for the holder's transaction; the next waits for the row's lock, which the first holds.
  const inLine = waiting.filter((w) => w.wait_event === 'transactionid');
  t.equal(inLine.length, 1, `one node first in line (${JSON.stringify(waiting)})`);
  const [victim, survivor] = inLine[0]?.application_name === 'node-a' ? [a, b] : [b, a];
  t.comment(`killing ${victim.name}, first in line for the lock; ${survivor.name} survives`);
  await kill(victim);
  await holder.query('ROLLBACK');
  await eventually(async () => (await scheduleOn(survivor, second.id))?.status === 'applied', `the change applied, on ${survivor.name}`);
  t.equal((await flagOn(survivor)).trafficPercentage, 30, `${survivor.name} serves it`);
  const again = await startNamed(t, url, victim.name, victim.dir, env);
  runs.push(again);
  t.match(await scheduleOn(again, second.id), { status: 'applied', outcome: 'changed' }, `${victim.name}, started again, shows it applied`);
  t.equal((await flagOn(again)).trafficPercentage, 30, 'and serves it');

  const trail = await scheduleTrail(database);
  for (const id of [first.id, second.id]) appliedOnce(t, trail, id);
  t.same(appliers(runs, second.id), [survivor.name], `${survivor.name} says it applied it, and nobody else`);
  for (const node of runs) t.notMatch(node.server.logs(), /scheduled change failed/, `nothing failed on ${node.name}`);
});
