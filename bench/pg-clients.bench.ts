// PostgreSQL client libraries side by side (issue 17): node-postgres (`pg`, the dependency
// src/store/pg/ is built on) against postgres.js (npm `postgres`), on the statements Flagwire sends:
//   writer-1  the writer's transaction (pg-system.ts WriteTransaction): BEGIN; SELECT revision ... FOR
//             UPDATE; upsert of the records through unnest(); INSERT of the change set; UPDATE of the
//             revision; pg_notify; COMMIT. One connection, one transaction at a time, as the writer.
//   writer-4  the same from 4 clients with a connection each (4 nodes racing for the revision lock).
//   read-50   the follower's read of the change log: the last 50 revisions, one connection.
// Each variant runs for --seconds, alternating (pg, postgres.js, pg, postgres.js), after a 1 s warm-up,
// so a change in the machine's load falls on both; the ratio is the figure, not the absolute rates.
// Two extra variants say where a difference comes from: pg with named (prepared) statements, which
// postgres.js uses by default, and postgres.js pipelining the transaction's writes (not our shape).
//
// Run: npm run build && PGJS_PATH=/path/to/node_modules/postgres/src/index.js node dist/bench/pg-clients.bench.js [--seconds N]
// postgres.js is not a dependency: install it with `npm i --no-save postgres` (then PGJS_PATH is not
// needed) or anywhere else and point PGJS_PATH at its src/index.js. It starts a private PostgreSQL
// cluster (test/helpers/postgres.ts: fsync off, so commits cost no disk flush and the client's share shows).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Packr } from 'msgpackr';
import pg from 'pg';
import { kStoreLayout } from '../src/capabilities.js';
import { migrate } from '../src/store/pg/migrate.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { percentile } from './stats.js';

const seconds = Number(process.argv[process.argv.indexOf('--seconds') + 1]) || 8;
const kRounds = 2;
const kWarmupMs = 1000;
const kRacers = 4;
const kReadRows = 50;
/** pg-system.ts's catch-up batch: the LIMIT of the follower's query. */
const kCatchUpBatch = 1000;
const packr = new Packr({ useRecords: false });

/** The part of postgres.js's API used here (it is not a dependency, so its types are not installed). */
interface PgJsSql {
  <T = Record<string, unknown>>(strings: TemplateStringsArray, ...values: unknown[]): Promise<T[]>;
  /** The callback's queries run in one transaction; returning an array of them pipelines them. */
  begin<R>(fn: (tx: PgJsSql) => R | Promise<R>): Promise<unknown>;
  /** An array parameter typed by its first element (a Buffer[] is bytea[]; a bare Buffer[] would be sent as bytea). */
  array(values: unknown[]): unknown;
  end(options?: { timeout?: number }): Promise<void>;
}
type PgJs = (url: string, options: Record<string, unknown>) => PgJsSql;

async function loadPgJs(): Promise<{ postgres: PgJs; version: string }> {
  const spec = process.env.PGJS_PATH;
  let entry: string;
  try {
    entry = spec ? pathToFileURL(spec).href : import.meta.resolve('postgres');
    const mod = (await import(entry)) as { default: PgJs };
    // Its version: the nearest package.json above the entry (src/index.js).
    let dir = dirname(fileURLToPath(entry));
    while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
    const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string };
    return { postgres: mod.default, version };
  } catch (err) {
    console.error(
      `postgres.js cannot be loaded (${(err as Error).message.split('\n')[0]}).\n` +
        'Install it without saving it as a dependency: npm i --no-save postgres\n' +
        'or install it elsewhere (mkdir /tmp/pgjs && cd /tmp/pgjs && npm init -y && npm i postgres) and set\n' +
        'PGJS_PATH=/tmp/pgjs/node_modules/postgres/src/index.js',
    );
    process.exit(2);
  }
}

// ---- The change set: one flag record (~300 bytes of msgpack) and its audit entry, as a PATCH writes.

let auditSeq = 0;
function changeSet(flagKey: string, n: number): { kinds: string[]; keys: string[]; values: Buffer[]; changes: Buffer } {
  const now = Date.now();
  const flag = {
    id: flagKey,
    projectId: 'prj_4f9c2a71d0b84e3a',
    kind: 'flag',
    name: 'checkout-redesign',
    description: 'New checkout flow with the one-page address form and saved payment methods; rolled out by cohort.',
    tags: ['checkout', 'web', 'q4'],
    cohorts: ['beta-testers', 'staff'],
    createdAt: 1_763_800_000_000,
    updatedAt: now,
    state: { enabled: true, trafficPercentage: n % 101, audienceId: 'aud_91c0d2e4b7a3' },
  };
  const audit = {
    seq: ++auditSeq,
    at: now,
    projectId: flag.projectId,
    actor: 'tok_7d1e9b20c4',
    actorName: 'deploy bot',
    action: 'flag.update',
    flagId: flagKey,
    env: null,
    changes: { trafficPercentage: { before: (n + 100) % 101, after: n % 101 } },
  };
  const flagBytes = packr.pack(flag);
  const auditBytes = packr.pack(audit);
  return {
    kinds: ['flag', 'audit'],
    keys: [flagKey, String(audit.seq)],
    values: [flagBytes, auditBytes],
    changes: packr.pack([
      { kind: 'flag', value: flag },
      { kind: 'audit', value: audit },
    ]),
  };
}

// ---- The statements, as pg-system.ts sends them.

const kSelectRevision = 'SELECT revision FROM flagwire_meta FOR UPDATE';
const kUpsert = `INSERT INTO flagwire_records (kind, key, value) SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[])
           ON CONFLICT (kind, key) DO UPDATE SET value = EXCLUDED.value`;
const kInsertChanges = 'INSERT INTO flagwire_changes (revision, write_id, changes) VALUES ($1, $2, $3)';
const kUpdateRevision = 'UPDATE flagwire_meta SET revision = $1';
const kNotify = `SELECT pg_notify('flagwire_revision', $1 || ':' || floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)`;
const kReadChanges = 'SELECT revision, changes FROM flagwire_changes WHERE revision > $1 AND revision <= $2 ORDER BY revision LIMIT $3';

/** One client of one library: a write transaction and the follower's read. */
interface Client {
  write(flagKey: string, n: number): Promise<void>;
  read(after: number, upTo: number): Promise<{ revision: number; changes: Buffer }[]>;
  close(): Promise<void>;
}

/** pg as pg-system.ts uses it: a pool, a client checked out per transaction. `named`: prepared statements. */
function pgClient(url: string, named: boolean): Client {
  const pool = new pg.Pool({ connectionString: url, max: 1, keepAlive: true });
  const q = (name: string, text: string, values?: unknown[]) => (named ? { name, text, values } : { text, values });
  return {
    async write(flagKey, n) {
      const set = changeSet(flagKey, n);
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const { rows } = await client.query<{ revision: string }>(q('rev', kSelectRevision));
        const revision = Number(rows[0]!.revision) + 1;
        await client.query(q('upsert', kUpsert, [set.kinds, set.keys, set.values]));
        await client.query(q('changes', kInsertChanges, [revision, 'bench-write-id', set.changes]));
        await client.query(q('meta', kUpdateRevision, [revision]));
        await client.query(q('notify', kNotify, [String(revision)]));
        await client.query('COMMIT');
        client.release();
      } catch (err) {
        client.release(err as Error);
        throw err;
      }
    },
    async read(after, upTo) {
      const { rows } = await pool.query<{ revision: string; changes: Buffer }>(q('read', kReadChanges, [after, upTo, kCatchUpBatch]));
      return rows.map((r) => ({ revision: Number(r.revision), changes: r.changes }));
    },
    close: () => pool.end(),
  };
}

/** postgres.js as its README writes it: sql.begin, tagged templates (prepared by default). */
function pgJsClient(postgres: PgJs, url: string, pipelined: boolean): Client {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  return {
    async write(flagKey, n) {
      const set = changeSet(flagKey, n);
      await sql.begin(async (tx) => {
        const rows = await tx<{ revision: string }>`SELECT revision FROM flagwire_meta FOR UPDATE`;
        const revision = Number(rows[0]!.revision) + 1;
        const writes = [
          () => tx`INSERT INTO flagwire_records (kind, key, value) SELECT * FROM unnest(${sql.array(set.kinds)}::text[], ${sql.array(set.keys)}::text[], ${sql.array(set.values)}::bytea[])
           ON CONFLICT (kind, key) DO UPDATE SET value = EXCLUDED.value`,
          () => tx`INSERT INTO flagwire_changes (revision, write_id, changes) VALUES (${revision}, ${'bench-write-id'}, ${set.changes})`,
          () => tx`UPDATE flagwire_meta SET revision = ${revision}`,
          () =>
            tx`SELECT pg_notify('flagwire_revision', ${String(revision)} || ':' || floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)`,
        ];
        // Pipelined: all four sent at once, their answers awaited together.
        if (pipelined) return Promise.all(writes.map((query) => query()));
        // One statement after another, as WriteTransaction.commit awaits each.
        for (const query of writes) await query();
        return undefined;
      });
    },
    async read(after, upTo) {
      const rows = await sql<{
        revision: string;
        changes: Buffer;
      }>`SELECT revision, changes FROM flagwire_changes WHERE revision > ${after} AND revision <= ${upTo} ORDER BY revision LIMIT ${kCatchUpBatch}`;
      return rows.map((r) => ({ revision: Number(r.revision), changes: r.changes }));
    },
    close: () => sql.end({ timeout: 5 }),
  };
}

// ---- Running a variant for a fixed time.

interface Sample {
  count: number;
  ms: number;
  latencies: number[];
}

async function runFor(ms: number, workers: number, op: (worker: number, i: number) => Promise<void>): Promise<Sample> {
  const latencies: number[] = [];
  let stop = false;
  const start = performance.now();
  const timer = setTimeout(() => (stop = true), ms);
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const t0 = performance.now();
        await op(w, i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  clearTimeout(timer);
  return { count: latencies.length, ms: performance.now() - start, latencies };
}

interface Variant {
  name: string;
  op: (worker: number, i: number) => Promise<void>;
}

/** Each variant warmed up, then run kRounds times in turn; the pooled figures and each round's rate. */
async function compare(title: string, workers: number, variants: Variant[]): Promise<Map<string, Sample & { rounds: number[] }>> {
  for (const v of variants) await runFor(kWarmupMs, workers, v.op);
  const out = new Map(variants.map((v) => [v.name, { count: 0, ms: 0, latencies: [] as number[], rounds: [] as number[] }]));
  for (let round = 0; round < kRounds; round++) {
    for (const v of variants) {
      const s = await runFor(seconds * 1000, workers, v.op);
      const acc = out.get(v.name)!;
      acc.count += s.count;
      acc.ms += s.ms;
      acc.latencies.push(...s.latencies);
      acc.rounds.push(s.count / (s.ms / 1000));
    }
  }
  const base = out.get(variants[0]!.name)!;
  const baseRate = base.count / (base.ms / 1000);
  console.log(`\n${title} (${workers} connection${workers > 1 ? 's' : ''}, ${kRounds} × ${seconds} s each, alternating)`);
  console.log('| variant | per s | p50 ms | p99 ms | per s by round | rate vs pg |');
  console.log('|---|---:|---:|---:|---|---:|');
  for (const [name, s] of out) {
    const sorted = s.latencies.sort((a, b) => a - b);
    const rate = s.count / (s.ms / 1000);
    console.log(
      `| ${name} | ${rate.toFixed(0)} | ${percentile(sorted, 50).toFixed(2)} | ${percentile(sorted, 99).toFixed(2)} | ${s.rounds.map((r) => r.toFixed(0)).join(', ')} | ${(rate / baseRate).toFixed(2)} |`,
    );
  }
  return out;
}

// ---- The run.

const { postgres, version: pgJsVersion } = await loadPgJs();
const pgVersion = (createRequire(import.meta.url)('pg/package.json') as { version: string }).version;
const loadAtStart = loadavg();
const cluster = await startPostgres();
const url = await cluster.newDatabase();
const clients: Client[] = [];
const setup = new pg.Client({ connectionString: url });
try {
  await setup.connect();
  await migrate(setup, kStoreLayout.migrations);
  const {
    rows: [server],
  } = await setup.query<{ server_version: string }>('SHOW server_version');

  const pgPlain = pgClient(url, false);
  const pgNamed = pgClient(url, true);
  const pgJs = pgJsClient(postgres, url, false);
  const pgJsPipelined = pgJsClient(postgres, url, true);
  const pgRacers = Array.from({ length: kRacers }, () => pgClient(url, false));
  const pgJsRacers = Array.from({ length: kRacers }, () => pgJsClient(postgres, url, false));
  clients.push(pgPlain, pgNamed, pgJs, pgJsPipelined, ...pgRacers, ...pgJsRacers);

  // Each library's bytes come back as written: the flag record through pg, the change set through each.
  for (const [name, c] of [
    ['pg', pgPlain],
    ['pg named', pgNamed],
    ['postgres.js', pgJs],
    ['postgres.js pipelined', pgJsPipelined],
  ] as const) {
    const key = `flag_check_${name}`;
    await c.write(key, 7);
    const { rows } = await setup.query<{ value: Buffer; revision: string }>(
      "SELECT r.value, m.revision FROM flagwire_records r, flagwire_meta m WHERE r.kind = 'flag' AND r.key = $1",
      [key],
    );
    const written = packr.unpack(rows[0]!.value) as { id: string; state: { trafficPercentage: number } };
    const revision = Number(rows[0]!.revision);
    const [back] = await c.read(revision - 1, revision);
    const changes = packr.unpack(back!.changes) as { value: { id: string } }[];
    if (written.id !== key || written.state.trafficPercentage !== 7 || back!.revision !== revision || changes[0]!.value.id !== key) {
      throw new Error(`${name}: what it wrote does not read back`);
    }
  }
  const sample = changeSet('flag_size', 0);
  console.log(`pg ${pgVersion}, postgres.js ${pgJsVersion}, PostgreSQL ${server!.server_version}, Node ${process.version}`);
  console.log(`load average at start: ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}`);
  console.log(
    `change set: flag record ${sample.values[0]!.length} B + audit record ${sample.values[1]!.length} B of msgpack; change log row ${sample.changes.length} B`,
  );

  await compare("writer-1: the writer's transaction", 1, [
    { name: 'pg', op: (_, i) => pgPlain.write('flag_1', i) },
    { name: 'postgres.js', op: (_, i) => pgJs.write('flag_2', i) },
    { name: 'pg, named statements', op: (_, i) => pgNamed.write('flag_3', i) },
    { name: 'postgres.js, writes pipelined', op: (_, i) => pgJsPipelined.write('flag_4', i) },
  ]);
  await compare("writer-4: the writer's transaction from 4 racing clients", kRacers, [
    { name: 'pg', op: (w, i) => pgRacers[w]!.write(`flag_r${w}`, i) },
    { name: 'postgres.js', op: (w, i) => pgJsRacers[w]!.write(`flag_r${w}`, i) },
  ]);
  const {
    rows: [meta],
  } = await setup.query<{ revision: string }>('SELECT revision FROM flagwire_meta');
  const upTo = Number(meta!.revision);
  const readOp = (c: Client) => async () => {
    if ((await c.read(upTo - kReadRows, upTo)).length !== kReadRows) throw new Error('short read');
  };
  await compare(`read-50: the follower's read of the last ${kReadRows} revisions (of ${upTo})`, 1, [
    { name: 'pg', op: readOp(pgPlain) },
    { name: 'postgres.js', op: readOp(pgJs) },
    { name: 'pg, named statements', op: readOp(pgNamed) },
  ]);
  console.log(
    `\nload average at end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
} finally {
  await Promise.all([setup.end(), ...clients.map((c) => c.close())]);
  await sleep(100);
  await cluster.destroy();
}
