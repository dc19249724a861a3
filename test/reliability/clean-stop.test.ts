// The clean-stop mark (src/store/intact-mark.ts, docs/decisions.md): a server stopped cleanly marks its
// data file, and its next start, finding the file as that stop left it, does not read it through again
// (the probe, src/store/verify.ts: a process of its own). A kill -9 leaves no mark, and a file changed after
// the stop is read through and refused when damaged. A mark that vouches for a damaged file (damage the
// file system does not see) costs at most one failed start: the start takes the mark away, whatever follows.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { dataFilePath } from '../../src/store/layout.js';
import { kIntactMarkName, markIntact, takeIntactMark } from '../../src/store/intact-mark.js';
import { call } from '../helpers/http.js';
import { plainNode } from '../helpers/plain-process.js';
import { kCli, startTestServer, tempDataDir, type TestServer } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';

const kProbeRefusal = /is damaged: reading it (failed|crashed the reader)/;
const kServeEnv: NodeJS.ProcessEnv = { ...process.env, FLAGWIRE_EVAL_WORKERS: '1', FLAGWIRE_PORT: '0' };

/**
 * A data dir holding a small world, closed, and no mark (buildWorld leaves one): a file no server stopped
 * on, as after a command-line command. Its dir, a flag's id and a token to read it.
 */
async function world(): Promise<{ dir: string; flag: string; token: string }> {
  const dir = tempDataDir();
  const w = buildWorld(dir);
  await w.store.close();
  if (!takeIntactMark(dataFilePath(dir))) throw new Error('buildWorld left no intact mark to take away');
  return { dir, flag: w.ids.flag, token: w.secrets.read };
}

const hasMark = (dir: string) => existsSync(join(dir, kIntactMarkName));

/** CPU ms of the child processes `server` has waited for (the probe is its only one at start). */
function childrenCpuMs(server: TestServer): number {
  const fields = readFileSync(`/proc/${server.proc.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/** Garbage over the main database's root page, written in place (see test/reliability/storage.test.ts). */
function damageRootPage(dir: string): void {
  const file = dataFilePath(dir);
  const header = readFileSync(file);
  const pageSize = header.readUInt32LE(48);
  const newer = header.readBigUInt64LE(pageSize + 152) > header.readBigUInt64LE(152) ? pageSize : 0;
  const rootPage = Number(header.readBigUInt64LE(newer + 136));
  const fd = openSync(file, 'r+');
  writeSync(fd, randomBytes(pageSize), 0, pageSize, rootPage * pageSize);
  closeSync(fd);
}

/** `serve` on `dir` until it exits or listens (then stopped): its exit, signal and output. */
async function serveOnce(dir: string): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
  const proc = spawn(...plainNode([kCli, 'serve', '--data', dir]), { env: kServeEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
    if (/listening/.test(stdout)) proc.kill('SIGKILL');
  });
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  // The bound only catches a hang.
  const hang = setTimeout(() => proc.kill('SIGKILL'), 60_000);
  const [code, signal] = await new Promise<[number | null, string | null]>((resolve) => proc.once('exit', (c, s) => resolve([c, s])));
  clearTimeout(hang);
  return { code, signal, stdout, stderr };
}

t.test('a clean stop marks the file; the next start takes the mark and does not read the file through; kill -9 leaves none', async (t) => {
  const { dir, flag, token } = await world();
  const first = await startTestServer({ dataDir: dir });
  t.notOk(hasMark(dir), 'no mark while a server runs');
  t.ok(childrenCpuMs(first) > 0, 'a first start reads the file through (the probe, a process of its own)');
  t.equal(await first.stop(), 0, 'stopped cleanly');
  t.ok(hasMark(dir), 'the clean stop leaves its mark');

  const second = await startTestServer({ dataDir: dir });
  t.notOk(hasMark(dir), 'the start took the mark away');
  t.equal(childrenCpuMs(second), 0, 'the start vouched for by the mark ran no probe');
  t.equal((await call(second.baseUrl, 'GET', `/api/v1/flags/${flag}`, { token })).status, 200, 'and serves the file');
  second.proc.kill('SIGKILL');
  await second.stop();
  t.notOk(hasMark(dir), 'kill -9 leaves no mark');

  const third = await startTestServer({ dataDir: dir });
  t.ok(childrenCpuMs(third) > 0, 'after kill -9 the start reads the file through');
  t.equal((await call(third.baseUrl, 'GET', `/api/v1/flags/${flag}`, { token })).status, 200, 'and serves it');
  t.equal(await third.stop(), 0);
  t.ok(hasMark(dir), 'marked again by its clean stop');
});

t.test('a file damaged after the clean stop is read through and refused, its mark removed', async (t) => {
  const { dir } = await world();
  const server = await startTestServer({ dataDir: dir });
  t.equal(await server.stop(), 0);
  t.ok(hasMark(dir), 'marked');
  damageRootPage(dir);
  const serve = spawnSync(...plainNode([kCli, 'serve', '--data', dir]), { env: kServeEnv, encoding: 'utf8', timeout: 60_000 });
  t.equal(serve.signal, null, 'serve ends by itself, not by a signal');
  t.equal(serve.status, 1, 'serve exits 1');
  t.match(serve.stderr, kProbeRefusal, 'refused by the read-through');
  t.notOk(hasMark(dir), 'the mark is gone');
});

t.test('a mark that vouches for a damaged file costs one start: the next one reads the file through and refuses it', async (t) => {
  const { dir } = await world();
  // What a clean stop leaves when the file is damaged afterwards beneath the file system (a failing disk):
  // the file changed while its inode's times did not. Made here by marking the damaged file.
  damageRootPage(dir);
  markIntact(dataFilePath(dir));
  const vouched = await serveOnce(dir);
  t.notMatch(vouched.stderr, kProbeRefusal, 'the start the mark vouched for did not read the file through');
  t.notOk(hasMark(dir), 'but took the mark away, however it ended');
  t.comment(`the vouched start: exit ${vouched.code}, signal ${vouched.signal}, ${vouched.stderr.trim().split('\n')[0]}`);
  const next = await serveOnce(dir);
  t.equal(next.signal, null, 'the next start ends by itself, not by a signal');
  t.equal(next.code, 1, 'exits 1');
  t.match(next.stderr, kProbeRefusal, 'refused by the read-through');
  t.notMatch(next.stdout, /listening/, 'nothing listens');
});
