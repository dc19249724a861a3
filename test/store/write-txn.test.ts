// A write made after another process opened the data file while this one committed (src/store/write-txn.ts).
// The LMDB in lmdb-js has an opening process store in the lock file the id of the newest commit as it
// read it from the file's header a moment before; a commit in that moment leaves the lock file naming an
// older commit than the newest. That race is rarely met (test/reliability/crash-console.test.ts, whose
// consoles open the file while the server writes, met it in some runs), so here the lock file is left
// exactly as such an open leaves it: one commit behind (without the check, the next write reuses the
// newest commit's id and overwrites it: the write before is lost) or two (the next write gets an id below
// the newest: LMDB fails it). Either way both writes must be on disk, as a new process reads the file.
import { kOperator } from '../../src/actor/audit-actor.js';
import { kStoreLayout } from '../../src/capabilities.js';
import { execFileSync } from 'node:child_process';
import t from 'tap';
import { tempDir } from '../helpers/scratch-dir.js';
import { freshRead } from '../helpers/fresh-read.js';
import { plainNode } from '../helpers/plain-process.js';
import { openDataFile } from '../../src/store/open.js';
import { buildWorld } from '../helpers/world.js';
import { getFlag } from '../../src/flags/records/flag-store.js';

// LMDB's lock file starts with its magic number (u32), its format (u32) and the newest commit's id (u64).
const kMoveBack = `
const fs = require('node:fs');
const [path, by] = [process.argv[1], BigInt(process.argv[2])];
const fd = fs.openSync(path, 'r+');
const head = Buffer.alloc(16);
fs.readSync(fd, head, 0, 16, 0);
if (head.readUInt32LE(0) !== 0xbeefc0de) throw new Error(path + ' is not an LMDB lock file');
const newest = head.readBigUInt64LE(8);
head.writeBigUInt64LE(newest - by, 8);
fs.writeSync(fd, head, 8, 8, 8);
fs.closeSync(fd);
process.stdout.write(String(newest));
`;

/**
 * Moves the commit id in `dataDir`'s lock file back by `commits`; returns the id it held. From another
 * process: closing a descriptor of the lock file here would drop the POSIX locks LMDB holds on it for this
 * process (and the other process holds none).
 */
function leaveLockBehind(dataDir: string, commits: number): number {
  return Number(execFileSync(...plainNode(['-e', kMoveBack, `${dataDir}/flagwire.mdb-lock`, String(commits)]), { encoding: 'utf8' }));
}

for (const behind of [1, 2]) {
  t.test(`a write after an open left the lock file ${behind} commit(s) behind: it and the write before are on disk`, async (t) => {
    const dataDir = tempDir(t, 'flagwire-store-');
    const world = buildWorld(dataDir);
    t.teardown(() => world.store.close());
    const { groupFlag: flag, multi } = world.ids;
    world.run('flagCohorts', { principal: kOperator, flagId: flag, cohorts: ['before'] });
    const newest = leaveLockBehind(dataDir, behind);
    t.ok(newest > behind, `the lock file named commit ${newest}, now ${newest - behind}`);
    world.run('flagCohorts', { principal: kOperator, flagId: flag, cohorts: ['after'] });

    const disk = await freshRead(dataDir);
    t.same(disk.getFlag(flag)?.cohorts, ['after'], 'the flag holds the second write');
    const audited = disk
      .listAudit(multi, { limit: 1000, before: null })
      .filter((e) => e.flagId === flag && e.action === 'flag.cohorts')
      .map((e) => e.changes.cohorts?.after);
    t.same(audited.slice(0, 2), [['after'], ['before']], 'both writes have their audit entry, newest first');
    t.equal(disk.auditCount, disk.auditSeq, 'no audit sequence number was handed out twice');
  });
}

t.test('an open that left the lock file behind corrects it before it returns: readers see the newest commit', async (t) => {
  const dataDir = tempDir(t, 'flagwire-store-');
  const world = buildWorld(dataDir);
  t.teardown(() => world.store.close());
  const { groupFlag: flag } = world.ids;
  world.run('flagCohorts', { principal: kOperator, flagId: flag, cohorts: ['acknowledged'] });
  leaveLockBehind(dataDir, 1);
  world.store.resetReadTxn();
  t.not(getFlag(world.store, flag)?.cohorts[0], 'acknowledged', 'left so, the lock file has readers read the commit before');

  // A second open in this process shares LMDB's environment, so it stores nothing in the lock file
  // itself: only its check after opening can bring the readers forward.
  const opened = openDataFile(dataDir, { layout: kStoreLayout });
  t.teardown(() => opened.root.close());
  world.store.resetReadTxn();
  t.same(getFlag(world.store, flag)?.cohorts, ['acknowledged'], 'after a writable open, readers see the acknowledged write');
});
