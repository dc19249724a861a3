// A write that waits for a write lock held by another process (issue 13, item 4). A real console
// command (`flag tags`, with FLAGWIRE_TEST_CONSOLE_HOLD=1) is held inside its write transaction,
// holding LMDB's write lock, while the server runs with a 3 s write timeout. Checked: a PATCH gets
// 503 Storage busy with Retry-After once its bound passes, not when the lock comes free; /ready stays
// 200 and reports the writer busy (so does /metrics); evaluation and API reads keep answering; once
// the console lets go, the refused PATCH was never applied (value and audit log unchanged, after the
// writer's queue is drained) while the console's own change is committed; and the next PATCH gets its
// 200 and is on disk.
import { spawn } from 'node:child_process';
import t from 'tap';
import { freshRead } from '../helpers/fresh-read.js';
import { call, scrapeMetrics } from '../helpers/http.js';
import { plainNode } from '../helpers/plain-process.js';
import { kCli, startTestServer, tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';

const kTimeoutMs = 3000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('a write refused while a console command holds the write lock: 503, never applied; /ready 200', async (t) => {
  const dataDir = tempDataDir();
  const world = buildWorld(dataDir);
  t.teardown(() => world.store.close());
  const { ids, secrets } = world;
  const server = await startTestServer({ dataDir, env: { FLAGWIRE_TEST_HOOKS: '1', FLAGWIRE_WRITE_TIMEOUT_MS: String(kTimeoutMs) } });
  t.teardown(() => server.stop());
  const ready = async () => {
    const r = await call(server.baseUrl, 'GET', '/ready');
    return { status: r.status, writer: r.json?.writer as string };
  };
  const busyGauge = async () => /^flagwire_writer_busy (\d)$/m.exec((await call(server.baseUrl, 'GET', '/metrics')).text)?.[1];
  const evaluate = () => call(server.baseUrl, 'GET', `/v1/flags/${ids.flag}?targetingKey=user-1`);
  const patch = (trafficPercentage: number) =>
    call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.flag}`, { token: secrets.write, body: { trafficPercentage } });

  // Ready first (a probe round can miss its budget on a loaded machine: ask again, as a balancer does).
  let before = await ready();
  for (const deadline = Date.now() + 60_000; before.status !== 200 && Date.now() < deadline; ) {
    await sleep(100);
    before = await ready();
  }
  t.same(before, { status: 200, writer: 'ok' });
  t.equal((await patch(40)).status, 200, 'writes work before the lock is taken');
  t.equal((await evaluate()).status, 200);

  // The console command holds the write lock until it reads a byte on stdin.
  const env: NodeJS.ProcessEnv = { ...process.env, FLAGWIRE_TEST_HOOKS: '1', FLAGWIRE_TEST_CONSOLE_HOLD: '1' };
  delete env.FLAGWIRE_DATA;
  const console = spawn(...plainNode([kCli, 'flag', 'tags', ids.flag2, 'held-by-console', '--json', '--data', dataDir]), {
    env,
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  t.teardown(() => void console.kill('SIGKILL'));
  let stderr = '';
  const reached = (point: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => stderr.includes(`flagwire-test-hook: ${point}\n`) && resolve();
      console.stderr!.on('data', (d: Buffer) => {
        stderr += d.toString();
        check();
      });
      console.once('exit', () => reject(new Error(`the console exited before ${point}: ${stderr}`)));
      check();
    });
  const exited = new Promise<number | null>((resolve) => console.once('exit', (code) => resolve(code)));
  await reached('in-transaction');

  // The PATCH waits its bound, then is refused; /ready, evaluation and reads answer meanwhile.
  const sentAt = performance.now();
  const refusedReply = patch(77).then((r) => ({ ...r, ms: performance.now() - sentAt }));
  const during: { ready: number; writer: string; eval: number; read: number }[] = [];
  let sawBusy = false;
  while (!sawBusy || performance.now() - sentAt < kTimeoutMs) {
    const r = await ready();
    const read = await call(server.baseUrl, 'GET', `/api/v1/flags/${ids.flag}`, { token: secrets.read });
    during.push({ ready: r.status, writer: r.writer, eval: (await evaluate()).status, read: read.status });
    if (r.writer === 'busy') sawBusy = true;
    if (performance.now() - sentAt > 20_000) break;
    await sleep(200);
  }
  t.ok(sawBusy, '/ready reported the writer busy');
  t.ok(
    during.every((d) => d.ready === 200 && d.eval === 200 && d.read === 200),
    `/ready, evaluation and reads answered 200 throughout: ${JSON.stringify(during)}`,
  );
  t.equal(await busyGauge(), '1', 'flagwire_writer_busy is 1');
  const refused = await refusedReply;
  t.equal(refused.status, 503);
  t.equal(refused.headers.get('retry-after'), String(kTimeoutMs / 1000));
  t.equal(refused.json?.error, 'Storage busy');
  t.match(refused.json?.docs, /#storage-busy$/);
  t.ok(
    refused.ms >= kTimeoutMs - 50,
    `refused after its bound, not before (${refused.ms.toFixed(0)} ms); that it did not wait for the lock is the next check's`,
  );
  t.equal(console.exitCode, null, 'the console still held the lock when the 503 came');
  // The refused PATCH's body is still queued in the writer thread (skipped only when the lock comes
  // free), so its reservation in the body budget stands: refused writes cannot pile up unbounded.
  t.ok(
    Number((await scrapeMetrics(server.baseUrl)).get('flagwire_http_body_buffered_bytes')) > 0,
    'the refused body still counts against the body budget',
  );

  // Let the console go: its own change commits; the refused PATCH is skipped, never applied.
  console.stdin!.end('x');
  t.equal(await exited, 0, 'the console command finished');
  t.match(stderr, /flagwire-test-hook: committed/);
  t.equal((await call(server.baseUrl, 'POST', '/__test/writer-idle')).status, 200);
  t.equal((await scrapeMetrics(server.baseUrl)).get('flagwire_http_body_buffered_bytes'), 0, 'released once the writer skipped it');
  let disk = await freshRead(dataDir);
  const traffic = () => {
    const flag = disk.getFlag(ids.flag);
    return flag?.kind === 'flag' ? flag.state.trafficPercentage : undefined;
  };
  t.equal(traffic(), 40, 'the refused PATCH was not applied');
  const patchedTo = (value: number) =>
    disk
      .listAudit(ids.single, { limit: 1000, before: null })
      .filter((e) => e.flagId === ids.flag && e.changes.trafficPercentage?.after === value).length;
  t.equal(patchedTo(77), 0, 'and left no audit entry');
  t.equal(patchedTo(40), 1);
  t.same(disk.getFlag(ids.flag2)?.tags, ['held-by-console'], "the console's change is committed");

  // Free again: /ready says so, and a write gets its 200 and is on disk.
  let after = await ready();
  for (const deadline = Date.now() + 60_000; after.writer !== 'ok' && Date.now() < deadline; ) {
    await sleep(100);
    after = await ready();
  }
  t.same(after, { status: 200, writer: 'ok' });
  t.equal(await busyGauge(), '0');
  const applied = await patch(78);
  t.equal(applied.status, 200);
  disk = await freshRead(dataDir);
  t.equal(traffic(), 78, 'the PATCH after the release is on disk');
  t.equal(patchedTo(78), 1);
});
