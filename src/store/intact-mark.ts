// The clean-stop mark: what lets a server's start skip the start-up read of its data file (verify.ts,
// a process of its own that reads the whole file) when nothing can have changed the
// file since it was last known intact. A server writes it as the last step of a clean stop, after its
// writer and store have closed; every start takes it away before the file is opened, whether it
// vouches or not. So it exists only while no server runs on the data dir and none has crashed since the
// last clean stop: a crash, a kill -9, a failed start or a failed stop leaves none, and the next start
// reads the file through.
//
// It names the file as it was at that stop: device, inode, size, and the modification and change times
// to the nanosecond. Anything written into the file afterwards (a command-line command, a restore, a
// copy over it, a truncation) moves its change time, which no user-space call can set back; a file
// moved or copied in is another inode. Any difference: the file is read through, as without a mark.
// What a mark cannot see is a file damaged underneath the file system (a failing disk): such a node
// crashes at the first request that reads the damaged page instead of refusing at start, and, its mark
// gone with that start, the next start reads the file through and refuses it (docs/decisions.md).
import { closeSync, fsyncSync, openSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** A dot name: the data dir's check for files Flagwire did not write (open.ts) passes over it. */
export const kIntactMarkName = '.flagwire-clean-stop';

/** The data file's identity as the mark records it; null when it is absent. */
function identity(dataFile: string): string | null {
  try {
    const s = statSync(dataFile, { bigint: true });
    return JSON.stringify({ dev: `${s.dev}`, ino: `${s.ino}`, size: `${s.size}`, mtimeNs: `${s.mtimeNs}`, ctimeNs: `${s.ctimeNs}` });
  } catch {
    return null;
  }
}

/** The directory's entries made durable: a mark taken away stays away after a power loss. */
function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Marks `dataFile` intact as it is now: only once every write to it has committed and none is under way,
 * and only for a file known whole. A server's clean stop (its start read the file through, or was vouched
 * for by the mark before, and its writer and store are closed); and a test's world, just written through
 * the store's own commits (test/helpers/world.ts). Written without a sync:
 * a mark lost or cut short by a power loss vouches for nothing, and the next start reads the file.
 */
export function markIntact(dataFile: string): void {
  const id = identity(dataFile);
  if (id === null) return;
  try {
    writeFileSync(join(dirname(dataFile), kIntactMarkName), id);
  } catch {
    // A data dir that cannot be written now (a read-only file system): no mark, the next start reads.
  }
}

/**
 * Takes the mark of `dataFile`'s data dir away (durably) and says whether it vouched for the file as it
 * is now. Called by every server's start before it opens the file.
 */
export function takeIntactMark(dataFile: string): boolean {
  const dir = dirname(dataFile);
  const mark = join(dir, kIntactMarkName);
  let recorded: string;
  try {
    recorded = readFileSync(mark, 'utf8');
  } catch {
    return false; // none: no clean stop since the last start
  }
  try {
    unlinkSync(mark);
    syncDir(dir);
  } catch {
    return false; // a mark that stays could vouch again after this start crashed: not trusted
  }
  return recorded === identity(dataFile);
}
