// Nodes on one PostgreSQL: a private cluster (test/helpers/postgres.ts), nodes started as users run
// them (`serve --database URL --data DIR`), and the console with --database.
import { setTimeout as sleep } from 'node:timers/promises';
import { Packr } from 'msgpackr';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { kStoreLayout } from '../../src/capabilities.js';
import { flagCreate } from '../../src/flags/flag-commands.js';
import { orgAddMember, orgCreate, userCreate } from '../../src/orgs/org-commands.js';
import { projectCreate } from '../../src/projects/project-commands.js';
import { changeOf, type Change, type LoggedChange } from '../../src/store/changes.js';
import type { StoreWriter } from '../../src/store/interfaces.js';
import { openForCli } from '../../src/store/open-store.js';
import { patchedRecord } from '../../src/store/record-patch.js';
import { tokenCreate } from '../../src/tokens/token-commands.js';
import { call } from '../helpers/http.js';
import { cli, ok, type TestContext } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import type { TestDatabases } from '../helpers/postgres.js';
import { startTestServer, tempDataDir, type TestServer } from '../helpers/server.js';

// Change sets are stored as msgpack (src/store/pg/pg-system.ts): read back the same way.
const packr = new Packr({ useRecords: false });

/** A revision of PostgreSQL's change log: its changes as a node applies them, and its entry's bytes as stored. */
export interface PgRevision {
  revision: number;
  changes: Change[];
  bytes: number;
}

/**
 * Every revision of PostgreSQL's change log in `database`, oldest first, each change whole: a record
 * written again, which the log keeps as its changed fields (src/store/record-patch.ts), is given as the
 * record a node's copy holds once it has applied them to the version before, the log's own earlier
 * revisions being that version. Throws when the log does not reach back to that version.
 */
export async function pgRevisions(pg: TestDatabases, database: string): Promise<PgRevision[]> {
  const { rows } = await pg.admin<{ revision: string; changes: Buffer }>(
    database,
    'SELECT revision, changes FROM flagwire_changes ORDER BY revision',
  );
  const records = new Map<string, unknown>();
  const at = (kind: string, key: string) => `${kind}\u0000${key}`;
  return rows.map((row) => {
    const changes = (packr.unpack(row.changes) as LoggedChange[]).map((logged): Change => {
      if (logged.kind === 'patch') {
        const { kind, key } = logged.value;
        if (!records.has(at(kind, key)))
          throw new Error(`revision ${row.revision} changes ${kind} ${key}, which the log never wrote whole`);
        const value = patchedRecord(records.get(at(kind, key)), logged.value);
        records.set(at(kind, key), value);
        return changeOf(kind, value);
      }
      const { put, remove } = kStoreLayout.changes.get(logged.kind)!.records(logged.value);
      for (const r of remove) records.delete(at(r.kind, r.key));
      if (put !== null) records.set(at(put.kind, put.key), logged.value);
      return logged;
    });
    return { revision: Number(row.revision), changes, bytes: row.changes.length };
  });
}

/** Every change of PostgreSQL's change log in `database` (each whole: pgRevisions), with its revision, oldest first. */
export async function changeLog(pg: TestDatabases, database: string): Promise<{ revision: number; change: Change }[]> {
  return (await pgRevisions(pg, database)).flatMap(({ revision, changes }) => changes.map((change) => ({ revision, change })));
}

export async function startNode(databaseUrl: string, dataDir = tempDataDir(), env: Record<string, string> = {}): Promise<TestServer> {
  return startTestServer({ dataDir, env: { FLAGWIRE_DATABASE_URL: databaseUrl, ...env } });
}

/** `count` nodes on `databaseUrl`, each on an empty data dir, ready; stopped at the test's end. */
export async function startReadyNodes(
  t: TestContext,
  databaseUrl: string,
  count: number,
  env: Record<string, string> = {},
): Promise<TestServer[]> {
  const nodes = await Promise.all(Array.from({ length: count }, () => startNode(databaseUrl, tempDataDir(), env)));
  t.teardown(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
  });
  await Promise.all(nodes.map((n) => waitReady(n)));
  return nodes;
}

/** Waits until GET /ready answers 200 (the node's copy has caught up). */
export async function waitReady(node: TestServer, ms = 60_000): Promise<any> {
  const until = Date.now() + ms;
  for (;;) {
    const r = await call(node.baseUrl, 'GET', '/ready');
    if (r.status === 200) return r.json;
    if (Date.now() > until) throw new Error(`node not ready in ${ms} ms: ${r.text}`);
    await sleep(50);
  }
}

/**
 * Polls `probe` until it returns true; returns the milliseconds it took (the bound only catches a hang).
 * Every 10 ms: a probe is a request to a node or PostgreSQL, and polled every 2 ms they kept the test
 * process and the node busy for as long as a wait lasted (the times are reported, never asserted on).
 */
export async function until(probe: () => Promise<boolean>, ms = 60_000, what = 'condition'): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (await probe()) return performance.now() - start;
    if (performance.now() - start > ms) throw new Error(`${what} not seen within ${ms} ms`);
    await sleep(10);
  }
}

export interface Seeded {
  orgId: string;
  ownerId: string;
  projectId: string;
  flagId: string;
  tokenId: string;
  secret: string;
}

/**
 * An organisation, its owner, a project with a flag and a write token, made by the console with
 * --database, each command run in this process (cli's inProcess): six console processes cost more CPU
 * than a node's start.
 */
export async function seedWithConsole(t: TestContext, databaseUrl: string): Promise<Seeded> {
  const dir = tempDir(t);
  const db = ['--database', databaseUrl];
  const run = (args: string[]) => ok(t, dir, [...args, ...db], { inProcess: true });
  const org = await run(['org', 'create', '--name', 'Acme', '--plan', 'teams']);
  const user = await run(['user', 'create', '--email', 'owner@acme.test']);
  await run(['org', 'add-member', org.id, user.id, '--role', 'owner']);
  const project = await run(['project', 'create', '--name', 'Shop', '--org', org.id]);
  const flag = await run(['flag', 'create', project.id, '--name', 'checkout']);
  const token = await run(['token', 'create', project.id, '--as', user.id, '--name', 'ci', '--permission', 'write']);
  return { orgId: org.id, ownerId: user.id, projectId: project.id, flagId: flag.id, tokenId: token.id, secret: token.secret };
}

/** Per cluster, its database holding the console's seed, made once and copied for each seeded database. */
const seedTemplates = new WeakMap<TestDatabases, Promise<{ database: string; seeded: Seeded }>>();

/**
 * A new database of `databases` holding the console's seed, and the seed: a copy of one seeded database
 * per cluster (PostgreSQL copies a template database's files; the seed's database has no session open
 * once it is written). The seed's six console processes took 6-7 s of a test's 11-15 s at a load of
 * 15, and were the same for every test; the one seed left is written in this process (seedInProcess).
 */
export async function seededDatabase(t: TestContext, databases: TestDatabases): Promise<{ url: string; seeded: Seeded }> {
  let template = seedTemplates.get(databases);
  if (template === undefined) {
    template = databases
      .newDatabase()
      .then(async (url) => ({ database: new URL(url).pathname.slice(1), seeded: await seedInProcess(t, url) }));
    seedTemplates.set(databases, template);
  }
  const { database, seeded } = await template;
  return { url: await databases.newDatabase(database), seeded };
}

/**
 * Runs `write` in one transaction of the console's path to the store on `databaseUrl` (the path its
 * commands write through), in this process, and answers what it returned. Setup that a test does not
 * test: a console process per command (--database keeps them out of the test process) costs more CPU
 * than a node's start; the console's own runs are proven by seedWithConsole and test/cli.
 */
export async function writeInProcess<T>(t: TestContext, databaseUrl: string, write: (w: StoreWriter) => T): Promise<T> {
  const store = await openForCli(tempDir(t), kStoreLayout, databaseUrl);
  try {
    const [settled] = await store.writes.commit(() => [write]);
    if (!settled!.ok) throw settled!.error;
    return settled!.value;
  } finally {
    await store.writes.close();
  }
}

/**
 * seedWithConsole's seed written in this process (writeInProcess): the same commands, in one
 * transaction, for a file whose seed is setup only and made once (six console processes cost more CPU
 * than a node's start).
 */
export function seedInProcess(t: TestContext, databaseUrl: string): Promise<Seeded> {
  return writeInProcess(t, databaseUrl, (w) => {
    const now = Date.now();
    const org = orgCreate(w, { name: 'Acme', plan: 'teams', principal: kOperator }, now);
    const user = userCreate(w, { email: 'owner@acme.test' }, now);
    orgAddMember(w, { orgId: org.id, userId: user.id, role: 'owner', principal: kOperator }, now);
    return projectInTransaction(w, { orgId: org.id, ownerId: user.id }, 'Shop');
  });
}

/** A project `name` of the organisation, with a flag `checkout` and a write token of its owner, as seedWithConsole's last three commands make them. */
export function projectInTransaction(w: StoreWriter, { orgId, ownerId }: Pick<Seeded, 'orgId' | 'ownerId'>, name: string): Seeded {
  const now = Date.now();
  const project = projectCreate(w, { name, orgId, principal: kOperator }, now);
  const flag = flagCreate(w, { projectId: project.id, body: { name: 'checkout' }, principal: principalOf(undefined) }, now);
  const token = tokenCreate(w, { projectId: project.id, principal: principalOf(ownerId), name: 'ci', permission: 'write' }, now);
  return { orgId, ownerId, projectId: project.id, flagId: flag.id, tokenId: token.id, secret: token.secret };
}

/**
 * `flagwire token create` in the seeded project as its owner, by the console with --database in this
 * process (cli's inProcess), beside any other run: its run, not checked.
 */
export function createTokenWithConsole(
  t: TestContext,
  databaseUrl: string,
  seeded: Seeded,
  name: string,
  permission: 'read' | 'write',
): ReturnType<typeof cli> {
  const args = ['token', 'create', seeded.projectId, '--as', seeded.ownerId, '--name', name, '--permission', permission];
  return cli(tempDir(t), [...args, '--database', databaseUrl], { inProcess: true });
}

/** Evaluates the flag on `node` for one key: its `enabled`. */
export async function evaluate(node: TestServer, flagId: string): Promise<boolean> {
  const r = await call(node.baseUrl, 'GET', `/v1/flags/${flagId}?targetingKey=k1`);
  if (r.status !== 200) throw new Error(`evaluate ${r.status} ${r.text}`);
  return r.json.enabled as boolean;
}

export { cli };
