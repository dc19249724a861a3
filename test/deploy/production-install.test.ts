// A production install (scripts/install-production.sh; docs/deployment.md: A production install), as a
// platform engineer makes one: the built server with its production dependencies alone, and without the
// optional ones. It serves the demo, evaluates, runs PostgreSQL's migrations, and refuses a Parquet export
// by the name of the package it left out; no compiler, bundler or test tool is installed.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { call } from '../helpers/http.js';
import { sharedPostgres } from '../helpers/postgres.js';
import { scratchDir } from '../helpers/scratch-dir.js';
import { startTestServer } from '../helpers/server.js';
import { waitReady } from '../multinode/support.js';

const kScript = fileURLToPath(new URL('../../../scripts/install-production.sh', import.meta.url));

/** Runs the install into a new folder; its output, or a failure with it. */
async function install(args: string[]): Promise<{ dest: string; output: string }> {
  const dest = join(scratchDir('flagwire-prod-'), 'flagwire');
  const child = spawn(kScript, [dest, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`install-production.sh exited ${code}\n${output}`);
  return { dest, output };
}

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());

// The bound only catches a hang: npm ci of the production dependencies (from npm's cache when warm).
t.setTimeout(600_000);
const { dest, output } = await install(['--omit-optional']);
const bin = join(dest, 'dist/src/cli/flagwire.cjs');

t.test('installs the server and its production dependencies alone', async (t) => {
  t.match(output, /installed in .+: \S+ \(\S+ of dependencies\)/, 'says the size');
  const packages = new Set(readdirSync(join(dest, 'node_modules')));
  for (const name of ['lmdb', 'uWebSockets.js', 'msgpackr', 'pg', 'piscina']) t.ok(packages.has(name), `${name} installed`);
  for (const tool of ['typescript', 'tap', 'esbuild', '@biomejs', 'autocannon', 'oidc-provider']) t.notOk(packages.has(tool), `no ${tool}`);
  t.notOk(existsSync(join(dest, 'node_modules/@duckdb')), 'the optional DuckDB left out');
  t.notOk(existsSync(join(dest, 'dist/test')), 'no tests');
  t.ok(existsSync(join(dest, 'node_modules/.bin/flagwire')), 'npx flagwire finds the bin');
});

t.test('serves the demo, evaluates, and refuses Parquet by the missing package', async (t) => {
  const server = await startTestServer({ cli: bin, demo: true });
  t.teardown(() => server.stop());
  const health = await call(server.baseUrl, 'GET', '/health');
  t.equal(health.status, 200);
  const evaluation = /curl -s "http:\/\/127\.0\.0\.1:\d+(\/v1\/flags\/flg_\w+\?targetingKey=user-42)"/.exec(server.output())?.[1];
  t.ok(evaluation, 'the demo prints an evaluation');
  const answer = await call(server.baseUrl, 'GET', evaluation!);
  t.equal(answer.status, 200, 'evaluated');
  t.type(answer.json.enabled, 'boolean', `an answer: ${answer.text}`);

  const token = /demo-[\w-]+\s+write\s+(fw_\w+)/.exec(server.output())?.[1];
  const parquet = await call(server.baseUrl, 'GET', '/api/v1/events/export?format=parquet', { token });
  t.equal(parquet.status, 400);
  t.match(parquet.json.detail, /optional package @duckdb\/node-api/, 'names the package');
  const jsonl = await call(server.baseUrl, 'GET', '/api/v1/events/export', { token });
  t.equal(jsonl.status, 200, 'JSON lines still export');
  t.equal(await server.stop(), 0, 'stops cleanly');
});

t.test('runs PostgreSQL migrations on a new database and serves from it', async (t) => {
  const url = await pg.newDatabase();
  const server = await startTestServer({ cli: bin, env: { FLAGWIRE_DATABASE_URL: url } });
  t.teardown(() => server.stop());
  await waitReady(server);
  const { rows } = await pg.admin<{ n: number }>(
    url.split('/').pop()!,
    "SELECT count(*)::int AS n FROM pg_tables WHERE tablename LIKE 'flagwire_%'",
  );
  t.ok(rows[0]!.n > 0, 'the schema is made');
  t.equal(await server.stop(), 0);
});
