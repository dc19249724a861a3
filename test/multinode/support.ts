// Nodes on one PostgreSQL: a private cluster (test/helpers/postgres.ts), nodes started as users run
// them (`serve --database URL --data DIR`), and the console with --database.
import { setTimeout as sleep } from 'node:timers/promises';
import { Packr } from 'msgpackr';
import type { Change } from '../../src/store/changes.js';
import { call } from '../helpers/http.js';
import { cli, ok, type TestContext } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import type { TestPostgres } from '../helpers/postgres.js';
import { startTestServer, tempDataDir, type TestServer } from '../helpers/server.js';

// Change sets are stored as msgpack (src/store/pg/pg-system.ts): read back the same way.
const packr = new Packr({ useRecords: false });

/** Every change of PostgreSQL's change log in `database`, with its revision, oldest first. */
export async function changeLog(pg: TestPostgres, database: string): Promise<{ revision: number; change: Change }[]> {
  const { rows } = await pg.admin<{ revision: string; changes: Buffer }>(
    database,
    'SELECT revision, changes FROM flagwire_changes ORDER BY revision',
  );
  return rows.flatMap((row) => (packr.unpack(row.changes) as Change[]).map((change) => ({ revision: Number(row.revision), change })));
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

/** Polls `probe` until it returns true; returns the milliseconds it took (the bound only catches a hang). */
export async function until(probe: () => Promise<boolean>, ms = 60_000, what = 'condition'): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (await probe()) return performance.now() - start;
    if (performance.now() - start > ms) throw new Error(`${what} not seen within ${ms} ms`);
    await sleep(2);
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

/** An organisation, its owner, a project with a flag and a write token, made by the console with --database. */
export async function seedWithConsole(t: TestContext, databaseUrl: string): Promise<Seeded> {
  const dir = tempDir(t);
  const db = ['--database', databaseUrl];
  const org = await ok(t, dir, ['org', 'create', '--name', 'Acme', '--plan', 'teams', ...db]);
  const user = await ok(t, dir, ['user', 'create', '--email', 'owner@acme.test', ...db]);
  await ok(t, dir, ['org', 'add-member', org.id, user.id, '--role', 'owner', ...db]);
  const project = await ok(t, dir, ['project', 'create', '--name', 'Shop', '--org', org.id, ...db]);
  const flag = await ok(t, dir, ['flag', 'create', project.id, '--name', 'checkout', ...db]);
  const token = await ok(t, dir, ['token', 'create', project.id, '--as', user.id, '--name', 'ci', '--permission', 'write', ...db]);
  return { orgId: org.id, ownerId: user.id, projectId: project.id, flagId: flag.id, tokenId: token.id, secret: token.secret };
}

/** `flagwire token create` in the seeded project as its owner, by the console with --database: its run, not checked. */
export function createTokenWithConsole(
  t: TestContext,
  databaseUrl: string,
  seeded: Seeded,
  name: string,
  permission: 'read' | 'write',
): ReturnType<typeof cli> {
  const args = ['token', 'create', seeded.projectId, '--as', seeded.ownerId, '--name', name, '--permission', permission];
  return cli(tempDir(t), [...args, '--database', databaseUrl]);
}

/** Evaluates the flag on `node` for one key: its `enabled`. */
export async function evaluate(node: TestServer, flagId: string): Promise<boolean> {
  const r = await call(node.baseUrl, 'GET', `/v1/flags/${flagId}?targetingKey=k1`);
  if (r.status !== 200) throw new Error(`evaluate ${r.status} ${r.text}`);
  return r.json.enabled as boolean;
}

export { cli };
