// Claims on a data dir (src/store/data-dir-claim.ts): a migration excludes servers and other
// migrations, a server excludes migrations only; a claim whose process has ended is stale.
import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { tempDir } from '../helpers/scratch-dir.js';
import { claimDataDir } from '../../src/store/data-dir-claim.js';
import { plainNode } from '../helpers/plain-process.js';

/** The pid of a process that has ended (a claim it left behind is stale). */
function endedPid(): number {
  return Number(spawnSync(...plainNode(['-e', 'process.stdout.write(String(process.pid))']), { encoding: 'utf8' }).stdout);
}

t.test('a server started during a migration is refused; a migration during a server too', async (t) => {
  const dir = tempDir(t);
  // Another process's claims, as files (this process's own claims never exclude it).
  writeFileSync(join(dir, `.flagwire-migration.${process.ppid}`), '');
  t.throws(() => claimDataDir(dir, 'server'), {
    name: 'StoreOpenError',
    message: new RegExp(`being migrated to PostgreSQL \\(process ${process.ppid}\\)`),
  });
  t.throws(() => claimDataDir(dir, 'migration'), { message: /in use by a running migration/ });
  t.strictSame(readdirSync(dir), [`.flagwire-migration.${process.ppid}`], 'the refused claims were taken back');

  const other = tempDir(t);
  writeFileSync(join(other, `.flagwire-server.${process.ppid}`), '');
  t.throws(() => claimDataDir(other, 'migration'), { message: new RegExp(`in use by a running server \\(process ${process.ppid}\\)`) });
  const second = claimDataDir(other, 'server');
  t.pass('two servers may share a data dir');
  second.release();
  t.strictSame(readdirSync(other), [`.flagwire-server.${process.ppid}`]);
});

t.test('a claim left by an ended process, or by a reused pid, is stale and removed', async (t) => {
  const dir = tempDir(t);
  const dead = endedPid();
  writeFileSync(join(dir, `.flagwire-server.${dead}`), '123');
  // A live pid whose start time differs: the process that wrote the claim is gone, the pid reused.
  writeFileSync(join(dir, `.flagwire-server.${process.ppid}`), 'not-its-start-time');
  const claim = claimDataDir(dir, 'migration');
  t.strictSame(readdirSync(dir), [`.flagwire-migration.${process.pid}`], 'only the new claim is left');
  claim.release();
  claim.release();
  t.strictSame(readdirSync(dir), [], 'released (twice is fine)');
});
