// Black-box: a Flagwire server streams 100,000 audit entries to Debian's rsyslog (TCP, RFC 5424, octet
// counting) and to a JSON-lines file, across restarts of each (docs/audit-stream.md). The entries are
// written into the data dir before the server starts (the stream reads the store, whatever wrote it),
// and more by PATCHes through the Management API while rsyslog hangs. Then:
//   - rsyslog restarts mid-stream;
//   - rsyslog hangs (SIGSTOP): every PATCH is still answered, and the file sink still gets its entries;
//   - Flagwire stops and starts again, and rsyslog is killed with what it had not read and started again;
//   - rsyslog ends up with every entry: none lost, duplicates only of what was in flight (counted,
//     each dropped by its id), and the file with every entry exactly once;
//   - after a clean stop of both ends, a restart sends nothing twice.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { auditBacklog } from '../helpers/audit-backlog.js';
import { call } from '../helpers/http.js';
import { freePort } from '../helpers/free-port.js';
import { TestRsyslog } from '../helpers/rsyslog.js';
import { scratchDir } from '../helpers/scratch-dir.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const kCount = 100_000;
const kPatches = 20;

const { dir, ids, secrets, entries } = await auditBacklog(kCount);
/** Every entry by the end: the backlog (buildWorld's and ours) and the PATCHes'. */
const total = entries + kPatches;

const rsyslog = TestRsyslog.create(await freePort());
const auditFile = join(scratchDir('flagwire-audit-file-'), 'audit.jsonl');
const env = { FLAGWIRE_AUDIT_SYSLOG: `tcp://127.0.0.1:${rsyslog.port}`, FLAGWIRE_AUDIT_FILE: auditFile };
let server: TestServer | null = null;
t.teardown(async () => {
  await server?.stop();
  await rsyslog.stop();
});

/** The sequence numbers rsyslog wrote, one per message received (a duplicate appears twice). */
const received = () => rsyslog.lines().map((l) => Number(/ seq="(\d+)"/.exec(l)?.[1] ?? Number.NaN));
const filed = () =>
  readFileSync(auditFile, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { seq: number }).seq);

// The bound only catches a hang: a whole backlog re-sent after both ends restart, on a loaded 2-core
// machine, once took over 120 s.
async function until(what: string, check: () => boolean, ms = 300_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not in ${ms / 1000} s: ${what} (${new Set(received()).size} distinct entries received)`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const oneToN = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

t.test('a hung receiver slows no write; restarts of both ends lose nothing', async (t) => {
  await rsyslog.start();
  server = await startTestServer({ dataDir: dir, env });
  // rsyslog restarted mid-stream.
  await until('a tenth received', () => received().length >= kCount / 10);
  await rsyslog.stop();
  const atRestart = received().length;
  t.ok(atRestart < kCount, `rsyslog restarted mid-stream, at ${atRestart} received`);
  await rsyslog.start();
  await until('half received', () => new Set(received()).size >= kCount / 2);

  // rsyslog hangs: writes are answered, the file sink goes on.
  rsyslog.pause();
  let slowest = 0;
  for (let i = 0; i < kPatches; i++) {
    const began = performance.now();
    const r = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.flag}`, { token: secrets.write, body: { trafficPercentage: i } });
    slowest = Math.max(slowest, performance.now() - began);
    t.equal(r.status, 200, 'answered while rsyslog hangs');
  }
  t.comment(`slowest PATCH while rsyslog hung: ${slowest.toFixed(0)} ms`);
  await until('the file sink has every entry while rsyslog hangs', () => filed().length >= total);
  t.strictSame(filed(), oneToN(total), 'the file: every entry once, in order');

  // Flagwire stops while rsyslog hangs, so what it sent is unconfirmed; rsyslog dies with it unread.
  t.equal(await server.stop(), 0);
  server = null;
  await rsyslog.stop();
  await rsyslog.start();
  server = await startTestServer({ dataDir: dir, env });
  await until('rsyslog has every entry', () => new Set(received()).size === total);
  const all = received();
  t.strictSame(
    [...new Set(all)].sort((a, b) => a - b),
    oneToN(total),
    'rsyslog: none lost',
  );
  t.ok(
    all.every((s) => Number.isSafeInteger(s)),
    'every message has its id',
  );
  t.comment(`${all.length - total} of ${total} received twice (dropped by their ids)`);

  // Both ends stop cleanly: a restart sends only what is new.
  t.equal(await server.stop(), 0);
  server = null;
  await rsyslog.stop();
  await rsyslog.start();
  const before = received().length;
  server = await startTestServer({ dataDir: dir, env });
  const r = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.flag}`, { token: secrets.write, body: { trafficPercentage: 99 } });
  t.equal(r.status, 200);
  await until('the new entry', () => received().includes(total + 1));
  await new Promise((r) => setTimeout(r, 1000));
  t.strictSame(received().slice(before), [total + 1], 'after clean stops, nothing sent twice');
  t.strictSame(filed(), oneToN(total + 1), 'the file: still every entry once');
});
