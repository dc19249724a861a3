// What a small PATCH of a large flag writes (issue 55, item 3), side by side in one run for each build
// named: a node serving the demo (`serve --demo`, embedded LMDB), a flag with a 900 KB variant, 20
// webhooks whose receiver answers every delivery 500 (so every delivery stays pending and is retried),
// then PATCHes of 26 bytes ({"trafficPercentage":NN}), one after another. Per build: the bytes the change
// log gained per PATCH (read from the data file: the log's entries, each as stored), the data file's
// growth per PATCH, and the PATCH's latency (median, p90), while the deliveries fail behind it.
// Each build is a checkout with dist/ built (the CLI at dist/src/cli/cli.js); the log is read with this
// checkout's lmdb and msgpackr, so either build's entries are measured alike (an entry of schema 12 and
// before is a change set, msgpack-packed here to size it; of schema 13 its stored bytes).
// With --postgres, each node is a PostgreSQL node (`serve --demo --database URL`, a database of its own on
// a private cluster: test/helpers/postgres.ts) and the log measured is PostgreSQL's, flagwire_changes,
// which every node of a cluster reads: the bytes its revisions gained per PATCH, each entry as stored
// (octet_length), and the PATCH's latency; the data file is then a copy, so its growth is not shown.
// Run: npm run build && node dist/bench/change-log.bench.js BASE_CHECKOUT NEW_CHECKOUT [patches, default 30] [--postgres]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { Packr } from 'msgpackr';
import { startPostgres, type TestPostgres } from '../test/helpers/postgres.js';
import { machineInfo } from './environment.js';

const kPostgres = process.argv.includes('--postgres');
const [base, next, patches] = process.argv.slice(2).filter((arg) => arg !== '--postgres');
if (base === undefined || next === undefined)
  throw new Error('usage: change-log.bench.js BASE_CHECKOUT NEW_CHECKOUT [patches] [--postgres]');
const kPatches = Number(patches ?? 30);
/** The private PostgreSQL cluster of --postgres. */
const cluster: TestPostgres | null = kPostgres ? await startPostgres() : null;
const kHooks = 20;
const packr = new Packr({ useRecords: false });

/** The receiver every webhook sends to: it answers 500, so each delivery fails and is retried. */
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(500).end('no'));
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

interface Node {
  proc: ChildProcess;
  baseUrl: string;
  token: string;
  dir: string;
  /** Its PostgreSQL database (--postgres), or null for an embedded node. */
  database: string | null;
}

async function startNode(checkout: string, port: number): Promise<Node> {
  const dir = mkdtempSync(join(tmpdir(), 'flagwire-changelog-bench-'));
  const url = cluster === null ? null : await cluster.newDatabase();
  const proc = spawn(
    process.execPath,
    [
      join(checkout, 'dist/src/cli/cli.js'),
      'serve',
      '--demo',
      '--port',
      String(port),
      '--data',
      join(dir, 'data'),
      ...(url === null ? [] : ['--database', url]),
    ],
    {
      env: {
        ...process.env,
        FLAGWIRE_LOG_LEVEL: 'warn',
        FLAGWIRE_RATE_LIMIT: '1000000000',
        FLAGWIRE_SYNC_PORT: '0',
        FLAGWIRE_WEBHOOK_ALLOW: '127.0.0.1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  proc.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  proc.stderr!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  for (let i = 0; i < 600 && !/listening/.test(out); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  const token = /demo-write\s+write\s+(\S+)/.exec(out)?.[1];
  if (token === undefined) throw new Error(`${checkout}: no demo write token in its output:\n${out}`);
  return { proc, baseUrl: `http://127.0.0.1:${port}`, token, dir, database: url === null ? null : new URL(url).pathname.slice(1) };
}

async function api(node: Node, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const r = await fetch(`${node.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${node.token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${text.slice(0, 300)}`);
  return { status: r.status, json: JSON.parse(text) };
}

/** The change log's bytes, read from the data file as each build stores its entries. */
function logBytes(dataDir: string): { revisions: number; bytes: number } {
  const root = open({ path: join(dataDir, 'flagwire.mdb'), readOnly: true, maxDbs: 32 });
  try {
    const meta = root.openDB({ name: 'meta' });
    let revisions = 0;
    let bytes = 0;
    for (const { value } of meta.getRange({ start: ['changeLog', 0], end: ['changeLog', Number.MAX_SAFE_INTEGER] })) {
      revisions++;
      bytes += value instanceof Uint8Array ? value.length : packr.pack(value).length;
    }
    return { revisions, bytes };
  } finally {
    void root.close();
  }
}

/** PostgreSQL's change log (flagwire_changes), each entry's bytes as stored. */
async function pgLogBytes(database: string): Promise<{ revisions: number; bytes: number }> {
  const { rows } = await cluster!.admin<{ revisions: string; bytes: string }>(
    database,
    'SELECT count(*) AS revisions, coalesce(sum(octet_length(changes)), 0) AS bytes FROM flagwire_changes',
  );
  return { revisions: Number(rows[0]!.revisions), bytes: Number(rows[0]!.bytes) };
}

/** The log this run measures: PostgreSQL's (--postgres) or the data file's. */
function logOf(node: Node): Promise<{ revisions: number; bytes: number }> {
  return node.database === null ? Promise.resolve(logBytes(join(node.dir, 'data'))) : pgLogBytes(node.database);
}

const quantile = (values: readonly number[], q: number) => [...values].sort((a, b) => a - b)[Math.floor(q * (values.length - 1))]!;
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(3);

async function measure(label: string, checkout: string, port: number, hooks: number) {
  const node = await startNode(checkout, port);
  try {
    const flag = await api(node, 'POST', '/api/v1/flags', {
      name: 'large',
      enabled: true,
      variants: { big: 'x'.repeat(900_000), small: 'y' },
      defaultVariant: 'big',
    });
    for (let i = 0; i < hooks; i++) await api(node, 'POST', '/api/v1/webhooks', { url: `${receiverUrl}?${i}`, events: ['flag'] });
    const patch = async (n: number) => {
      const t0 = performance.now();
      await api(node, 'PATCH', `/api/v1/flags/${flag.json.id as string}`, { trafficPercentage: 10 + (n % 80) });
      return performance.now() - t0;
    };
    for (let i = 0; i < 3; i++) await patch(i); // warm: the first deliveries fail and are rescheduled
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const dataFile = join(node.dir, 'data', 'flagwire.mdb');
    const [fileBefore, logBefore] = [statSync(dataFile).size, await logOf(node)];
    const latencies: number[] = [];
    for (let i = 0; i < kPatches; i++) latencies.push(await patch(i + 3));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const [fileAfter, logAfter] = [statSync(dataFile).size, await logOf(node)];
    return {
      label: `${label}, ${hooks} webhooks`,
      logPerPatch: (logAfter.bytes - logBefore.bytes) / kPatches,
      logRevisions: logAfter.revisions,
      filePerPatch: (fileAfter - fileBefore) / kPatches,
      p50: quantile(latencies, 0.5),
      p90: quantile(latencies, 0.9),
    };
  } finally {
    node.proc.kill('SIGTERM');
    await new Promise((resolve) => node.proc.once('exit', resolve));
    rmSync(node.dir, { recursive: true, force: true });
  }
}

console.log(new Date().toISOString(), machineInfo(), `load average ${loadavg()[0]!.toFixed(1)}`);
console.log(
  `${kPatches} PATCHes of 26 bytes to a flag with a 900 KB variant, with ${kHooks} webhooks answering 500 and with none, ${
    kPostgres ? "PostgreSQL node: PostgreSQL's change log (flagwire_changes)" : 'embedded node'
  }`,
);
const rows = [
  await measure('before', base, 18411, kHooks),
  await measure('after', next, 18412, kHooks),
  await measure('before', base, 18413, 0),
  await measure('after', next, 18414, 0),
];
console.log(`| build | change log per PATCH | ${kPostgres ? 'revisions in the log' : 'data file per PATCH'} | PATCH p50 | PATCH p90 |`);
console.log('|---|---|---|---|---|');
for (const r of rows)
  console.log(
    `| ${r.label} | ${r.logPerPatch.toFixed(0)} B (${mib(r.logPerPatch)} MiB) | ${kPostgres ? r.logRevisions : `${mib(r.filePerPatch)} MiB`} | ${r.p50.toFixed(0)} ms | ${r.p90.toFixed(0)} ms |`,
  );
receiver.close();
await cluster?.destroy();
