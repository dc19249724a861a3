// Child process of write-txn.ts: opens the data file and closes it again. Opening the file makes LMDB
// store the id of the newest commit, as read from the file's header, in the lock file; the parent runs
// this while it holds the write lock, so no commit can come between that read and that store.
import { open } from 'lmdb';
import { kMaxDbs } from './layout.js';

const path = process.argv[2];
if (path === undefined) {
  process.stderr.write('usage: reopen.js DATA_FILE\n');
  process.exit(2);
}
try {
  await open({ path, readOnly: true, maxDbs: kMaxDbs }).close();
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
