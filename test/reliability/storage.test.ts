// Storage edges (issue 8, item 5):
//   - the LMDB map grows as data grows: tens of MiB (lmdb-js starts with a 128 KiB map) written both by
//     another process while the server runs and by the server itself, all read back through the API,
//     evaluation, and after a restart;
//   - a corrupt, truncated or foreign data file is refused at start with a message naming the file and
//     what to do, and is not written to; the console refuses it the same way;
//   - on a full file system (a real tmpfs) and on one that turns read-only under the running server (a
//     real ext4 on a loop device, failed through the kernel's error path), writes fail with a 503 in the
//     envelope and the console refuses, while reads and evaluation keep answering; writes work again
//     once space is back. Both are skipped, saying why, where the test may not mount file systems.
import t from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { open } from 'lmdb';
import { kOperator } from '../../src/actor/audit-actor.js';
import { dataFilePath } from '../../src/store/layout.js';
import { Store } from '../helpers/store.js';
import { verifyDataFile } from '../../src/store/verify.js';
import { runCommand } from '../../src/writer/thread/commands.js';
import { cli } from '../helpers/cli.js';
import { kCli, startTestServer, tempDataDir } from '../helpers/server.js';
import { call, keptAliveCall } from '../helpers/http.js';
import { plainNode } from '../helpers/plain-process.js';
import { buildWorld } from '../helpers/world.js';
import { kUnlimited } from './support.js';
import { getFlag, listFlags } from '../../src/flags/records/flag-store.js';

const kMiB = 1024 * 1024;

t.test('the map grows far past its initial size, written from another process and from the server', async (t) => {
  const dataDir = tempDataDir();
  const world = buildWorld(dataDir);
  const server = await startTestServer({ dataDir, env: { ...kUnlimited } });
  t.teardown(async () => {
    await server.stop();
    await world.store.close();
  });
  const initial = statSync(dataFilePath(dataDir)).size;
  // From this process (as the console would), while the server runs: 120 flags of 4,000 cohorts each.
  const cohorts = (tag: string) => Array.from({ length: 4000 }, (_, i) => `${tag}-${String(i).padStart(5, '0')}-${'x'.repeat(40)}`);
  const outside: { id: string; tag: string }[] = [];
  for (let batch = 0; batch < 12; batch++) {
    world.store.transact((w) => {
      for (let i = 0; i < 10; i++) {
        const tag = `o${batch}-${i}`;
        const flag = runCommand(
          w,
          'flagCreate',
          { projectId: world.ids.single, body: { name: `big-${tag}`, enabled: true, cohorts: cohorts(tag) }, principal: kOperator },
          Date.now(),
        );
        outside.push({ id: flag.id, tag });
      }
    });
  }
  const afterOutside = statSync(dataFilePath(dataDir)).size;
  // Through the API: the server's writer grows it further while its evaluation workers read.
  const inside: { id: string; tag: string }[] = [];
  for (let i = 0; i < 20; i++) {
    const tag = `s${i}`;
    const r = await call(server.baseUrl, 'POST', '/api/v1/flags', {
      token: world.secrets.write,
      body: { name: `big-${tag}`, enabled: true, cohorts: cohorts(tag).slice(0, 9000 / 3) },
    });
    t.equal(r.status, 201, `POST big-${tag}`);
    inside.push({ id: r.json.id, tag });
  }
  const final = statSync(dataFilePath(dataDir)).size;
  t.comment(
    `map growth: data file ${(initial / kMiB).toFixed(2)} MiB -> ${(afterOutside / kMiB).toFixed(1)} MiB (another process) -> ${(final / kMiB).toFixed(1)} MiB (the server); lmdb-js starts with a 0.125 MiB map`,
  );
  t.ok(final > 20 * kMiB && final > 150 * initial, 'tens of MiB written, over 150 times the initial size');

  // 280 requests a pass, half of them a flag of 160-220 KB: kept-alive node:http, not fetch (helpers/http.ts).
  const readBack = async (base: string, label: string) => {
    let ok = 0;
    for (const { id, tag } of [...outside, ...inside]) {
      const r = await keptAliveCall(base, 'GET', `/api/v1/flags/${id}`, { token: world.secrets.read });
      const expected = inside.some((f) => f.id === id) ? 3000 : 4000;
      const e = await keptAliveCall(base, 'GET', `/v1/flags/${id}?cohort=${tag}-00042-${'x'.repeat(40)}`);
      if (
        r.status === 200 &&
        r.json.cohorts.length === expected &&
        r.json.cohorts[expected - 1].startsWith(tag) &&
        e.status === 200 &&
        e.json.enabled === true
      )
        ok++;
    }
    t.equal(ok, outside.length + inside.length, `${label}: every big flag reads back whole, through the API and evaluation`);
  };
  await readBack(server.baseUrl, 'while running');
  const patch = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.flag}`, {
    token: world.secrets.write,
    body: { trafficPercentage: 7 },
  });
  t.equal(patch.status, 200, 'the server still writes after another process grew the map');
  t.equal(await server.stop(), 0);
  await t.resolves(verifyDataFile(dataFilePath(dataDir)), 'the grown file passes the start-up check');
  const again = await startTestServer({ dataDir, env: { ...kUnlimited } });
  t.teardown(() => again.stop());
  await readBack(again.baseUrl, 'after a restart');
});

t.test('a corrupt, truncated or foreign data file is refused at start with a clear message, never written to', async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'flagwire-corrupt-'));
  t.teardown(() => rmSync(base, { recursive: true, force: true }));
  const good = join(base, 'good');
  mkdirSync(good);
  const world = buildWorld(good);
  await world.store.close();
  const goodFile = dataFilePath(good);
  const size = statSync(goodFile).size;
  const header = readFileSync(goodFile);
  // The main database's root page, from the newer of the two meta pages (see src/store/data-file.ts).
  const pageSize = header.readUInt32LE(48);
  const newer = header.readBigUInt64LE(pageSize + 152) > header.readBigUInt64LE(152) ? pageSize : 0;
  const rootPage = Number(header.readBigUInt64LE(newer + 136));

  const cases: [string, (file: string) => void, RegExp][] = [
    ['random bytes', (f) => writeFileSync(f, randomBytes(size)), /is not a Flagwire data file: it is not an LMDB data file/],
    ['a short text file', (f) => writeFileSync(f, 'hello, this is not a database\n'), /is not a Flagwire data file/],
    [
      'cut to half its size',
      (f) => {
        copyFileSync(goodFile, f);
        truncateSync(f, Math.floor(size / 2));
      },
      /is damaged: it was cut short/,
    ],
    [
      'cut after the header pages',
      (f) => {
        copyFileSync(goodFile, f);
        truncateSync(f, 2 * pageSize);
      },
      /is damaged: it was cut short/,
    ],
    [
      'garbage over the header pages',
      (f) => {
        const b = readFileSync(goodFile);
        randomBytes(2 * pageSize).copy(b, 0);
        writeFileSync(f, b);
      },
      /is not a Flagwire data file/,
    ],
    [
      'garbage over the second header page',
      (f) => {
        const b = readFileSync(goodFile);
        randomBytes(pageSize).copy(b, pageSize);
        writeFileSync(f, b);
      },
      /is damaged: its second header page is unreadable/,
    ],
    // Found by the start-up read (the probe): LMDB errors, counts that disagree, or a crash of the reader.
    [
      'garbage over the main database root page',
      (f) => {
        const b = readFileSync(goodFile);
        randomBytes(pageSize).copy(b, rootPage * pageSize);
        writeFileSync(f, b);
      },
      /is damaged: reading it (failed|crashed the reader)/,
    ],
    [
      'an LMDB file of another application',
      (f) => {
        const db = open({ path: f });
        db.putSync('hello', 'world');
        db.putSync('answer', 42);
        void db.close();
      },
      /is an LMDB file of another application \(it holds "(answer|hello)", "(answer|hello)"\)/,
    ],
  ];
  for (const [name, make, expected] of cases) {
    const dir = join(base, name.replace(/\W+/g, '-'));
    mkdirSync(dir);
    const file = dataFilePath(dir);
    make(file);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = readFileSync(file);
    // Both ports free ones: start-up tries them before it opens the store, and this file run by itself
    // (not by the suite's runner, which turns the sync service off) must not meet another node on 8015.
    const env: NodeJS.ProcessEnv = { ...process.env, FLAGWIRE_EVAL_WORKERS: '1', FLAGWIRE_PORT: '0', FLAGWIRE_SYNC_PORT: '0' };
    const serve = spawnSync(...plainNode([kCli, 'serve', '--data', dir]), { env, encoding: 'utf8', timeout: 60_000 });
    t.equal(serve.signal, null, `${name}: serve ends by itself, not by a signal (no crash)`);
    t.equal(serve.status, 1, `${name}: serve exits 1`);
    t.match(serve.stderr, expected, `${name}: the message says what is wrong`);
    t.match(serve.stderr, file, `${name}: and names the file`);
    t.notMatch(serve.stdout, /listening/, `${name}: nothing listens`);
    t.ok(readFileSync(file).equals(before), `${name}: the file is not written to`);
    if (!name.includes('root page')) {
      // The console checks the header on every open (the end-to-end read is the server's start-up check).
      // Here and below the console runs as its own process: a damaged or full store must not reach the test's.
      const r = await cli(dir, ['token', 'list', 'prj_x'], { process: true });
      t.equal(r.code, 1, `${name}: the console exits 1`);
      t.equal(r.json.error, 'Storage unavailable', `${name}: console error title`);
      t.match(r.json.detail, expected, `${name}: console detail`);
      t.ok(readFileSync(file).equals(before), `${name}: still not written to`);
    }
  }
  const empty = join(base, 'empty');
  mkdirSync(empty);
  writeFileSync(dataFilePath(empty), '');
  const fresh = await startTestServer({ dataDir: empty });
  t.equal(await fresh.stop(), 0, 'an empty data file is a new store (LMDB initialises it)');
});

/** Mounts a tmpfs of `sizeMiB` at a new directory, or returns null when this process may not mount. */
function mountTmpfs(sizeMiB: number): string | null {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return null;
  const dir = mkdtempSync(join(tmpdir(), 'flagwire-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m`, 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
}

function unmount(dir: string): void {
  try {
    execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
  } catch {
    // already gone
  }
  rmSync(dir, { recursive: true, force: true });
}

const kTmpfs = mountTmpfs(1);
if (kTmpfs !== null) unmount(kTmpfs);

t.test(
  'a full file system: writes get a 503, reads and evaluation keep answering, and writes resume once space is back',
  { skip: kTmpfs === null ? 'needs root and mount (tmpfs) to make a real full file system' : false },
  async (t) => {
    const mountPoint = mountTmpfs(12)!;
    t.teardown(() => unmount(mountPoint));
    const dataDir = join(mountPoint, 'data');
    mkdirSync(dataDir);
    const world = buildWorld(dataDir);
    await world.store.close();
    const server = await startTestServer({ dataDir, env: { ...kUnlimited } });
    t.teardown(() => server.stop());
    const filler = join(mountPoint, '.filler');
    const evalOk = async () =>
      (await call(server.baseUrl, 'GET', `/v1/flags/${world.ids.flag}?targetingKey=a`)).status === 200 &&
      (await call(server.baseUrl, 'GET', `/v1/flags/project/${world.ids.single}`)).status === 200;
    const readOk = async () =>
      (await call(server.baseUrl, 'GET', `/api/v1/flags/${world.ids.flag}`, { token: world.secrets.read })).status === 200;
    const bigBody = (name: string) => ({ name, cohorts: Array.from({ length: 2500 }, (_, i) => `${name}-${i}-${'y'.repeat(80)}`) });

    // Full: take the free space with a filler file, then write big flags until the disk refuses.
    const free = () => Number(execFileSync('df', ['-B1', '--output=avail', mountPoint], { encoding: 'utf8' }).split('\n')[1]);
    writeFileSync(filler, Buffer.alloc(Math.max(0, free() - 3 * kMiB)));
    let full: Awaited<ReturnType<typeof call>> | null = null;
    let created = 0;
    for (let i = 0; i < 40 && full === null; i++) {
      const r = await call(server.baseUrl, 'POST', '/api/v1/flags', { token: world.secrets.write, body: bigBody(`fill-${i}`) });
      if (r.status === 201) created++;
      else full = r;
    }
    t.comment(`full filesystem: ${created} big flags written before the disk was full`);
    t.ok(full !== null, 'the disk filled up');
    t.equal(full?.status, 503, 'a write on a full disk is a 503');
    t.same(Object.keys(full?.json ?? {}).sort(), ['detail', 'docs', 'error'], 'in the envelope');
    t.equal(full?.json.error, 'Storage unavailable');
    t.match(full?.json.detail, /could not be written to storage/);
    t.match(full?.json.docs, /#storage-unavailable$/);
    t.notOk(
      (await call(server.baseUrl, 'GET', `/api/v1/flags?name=fill-${created}`, { token: world.secrets.read })).json.flags.length,
      'the refused write left nothing behind',
    );
    t.ok(await evalOk(), 'evaluation keeps answering');
    t.ok(await readOk(), 'Management API reads keep answering');
    const patch = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.flag}`, {
      token: world.secrets.write,
      body: { cohorts: Array.from({ length: 3000 }, (_, i) => `full-${i}-${'z'.repeat(60)}`) },
    });
    t.equal(patch.status, 503, 'a PATCH that needs space is a 503 too');
    const consoleFull = await cli(
      dataDir,
      ['flag', 'cohorts', world.ids.groupFlag, Array.from({ length: 4000 }, (_, i) => `c-${i}-${'q'.repeat(20)}`).join(',')],
      { process: true },
    );
    t.equal(consoleFull.code, 1, 'the console exits 1 on a full disk');
    t.equal(consoleFull.json?.error, 'Storage unavailable', 'with "Storage unavailable"');
    rmSync(filler);
    const recovered = await call(server.baseUrl, 'POST', '/api/v1/flags', { token: world.secrets.write, body: bigBody('after-space') });
    t.equal(recovered.status, 201, 'once space is back, writes work again without a restart');

    t.equal(await server.stop(), 0, 'the server stops cleanly');
  },
);

/**
 * An ext4 file system on a loop device, mounted with errors=remount-ro, or null when this process may
 * not make one. `fail()` makes the kernel record a file-system error, as on a failing disk: ext4 then
 * turns read-only at once under every open file (EROFS), the way production file systems do.
 */
function ext4Loop(sizeMiB: number): { dir: string; fail(): void; remount(): void; cleanup(): void } | null {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return null;
  const base = mkdtempSync(join(tmpdir(), 'flagwire-ext4-'));
  const image = join(base, 'disk.img');
  const dir = join(base, 'mnt');
  mkdirSync(dir);
  let device = '';
  try {
    writeFileSync(image, '');
    truncateSync(image, sizeMiB * kMiB);
    execFileSync('mkfs.ext4', ['-q', '-F', image], { stdio: 'ignore' });
    device = execFileSync('losetup', ['-f', '--show', image], { encoding: 'utf8' }).trim();
    execFileSync('mount', ['-o', 'errors=remount-ro', device, dir], { stdio: 'ignore' });
    const trigger = `/sys/fs/ext4/${device.split('/').pop()}/trigger_fs_error`;
    statSync(trigger);
    return {
      dir,
      fail: () => writeFileSync(trigger, 'flagwire reliability test\n'),
      remount: () => {
        // The stopped server's mapping can take a moment to go: "target is busy" until then.
        for (let attempt = 1; spawnSync('umount', [dir], { stdio: 'ignore' }).status !== 0; attempt++) {
          if (attempt === 25) throw new Error(`cannot unmount ${dir}: still busy after 5 s`);
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
        }
        spawnSync('e2fsck', ['-f', '-y', device], { stdio: 'ignore' });
        execFileSync('mount', ['-o', 'errors=remount-ro', device, dir], { stdio: 'ignore' });
      },
      cleanup: () => {
        spawnSync('umount', ['-l', dir], { stdio: 'ignore' });
        if (device !== '') spawnSync('losetup', ['-d', device], { stdio: 'ignore' });
        rmSync(base, { recursive: true, force: true });
      },
    };
  } catch {
    spawnSync('umount', ['-l', dir], { stdio: 'ignore' });
    if (device !== '') spawnSync('losetup', ['-d', device], { stdio: 'ignore' });
    rmSync(base, { recursive: true, force: true });
    return null;
  }
}

const kExt4 = ext4Loop(16);
kExt4?.cleanup();

t.test(
  'the file system turns read-only under the running server: writes get a 503, reads and evaluation keep answering',
  { skip: kExt4 === null ? "needs root, a loop device, mkfs.ext4 and ext4's trigger_fs_error to make a file system fail for real" : false },
  async (t) => {
    const disk = ext4Loop(16)!;
    t.teardown(() => disk.cleanup());
    const dataDir = join(disk.dir, 'data');
    mkdirSync(dataDir);
    const world = buildWorld(dataDir);
    await world.store.close();
    const server = await startTestServer({ dataDir, env: { ...kUnlimited } });
    t.teardown(() => server.stop());
    const ok = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.flag}`, {
      token: world.secrets.write,
      body: { trafficPercentage: 42 },
    });
    t.equal(ok.status, 200, 'writes work before the failure');
    disk.fail();
    const ro = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.flag}`, {
      token: world.secrets.write,
      body: { trafficPercentage: 43 },
    });
    t.equal(ro.status, 503, 'a write on the read-only file system is a 503');
    t.equal(ro.json?.error, 'Storage unavailable', 'in the envelope');
    t.match(ro.json?.detail, /could not be written to storage/);
    const create = await call(server.baseUrl, 'POST', '/api/v1/flags', { token: world.secrets.write, body: { name: 'after-failure' } });
    t.equal(create.status, 503, 'and so is a create');
    t.equal((await call(server.baseUrl, 'GET', `/v1/flags/${world.ids.flag}?targetingKey=a`)).status, 200, 'evaluation keeps answering');
    t.equal((await call(server.baseUrl, 'GET', `/v1/flags/project/${world.ids.single}`)).status, 200, 'the project list too');
    const read = await call(server.baseUrl, 'GET', `/api/v1/flags/${world.ids.flag}`, { token: world.secrets.read });
    t.equal(read.json?.trafficPercentage, 42, 'Management API reads keep answering, from what is stored');
    const consoleRo = await cli(dataDir, ['flag', 'tags', world.ids.flag, 'ro'], { process: true });
    t.not(consoleRo.code, 0, `the console refuses (exit ${consoleRo.code})`);
    t.match(
      `${consoleRo.json?.error}: ${consoleRo.json?.detail}`,
      /Storage unavailable|not writable/,
      'saying storage is unavailable or the data directory is not writable',
    );
    t.equal(await server.stop(), 0, 'the server still stops cleanly');
    t.notMatch(server.logs(), /shutdown did not finish in time/, 'within its shutdown deadline');
    disk.remount();
    const after = Store.open(dataDir, { readOnly: true });
    const flag = getFlag(after, world.ids.flag) as { state: { trafficPercentage: number } } | undefined;
    t.equal(flag?.state.trafficPercentage, 42, 'after repair and remount, the last acknowledged write is on disk');
    t.notOk(
      listFlags(after, world.ids.single).some((f) => f.name === 'after-failure'),
      'and nothing refused is',
    );
    await after.close();
  },
);
