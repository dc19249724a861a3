// A child process that holds an LMDB file's write lock: it opens a write transaction (writing nothing),
// says "held" on stderr, and ends the transaction when a byte arrives on stdin (or stdin closes), then
// says "released". The other process that wants to write, for tests of the server's write timeout.
import { writeSync } from 'node:fs';
import { open } from 'lmdb';
import { waitForStdin } from '../../src/cli/test-hooks.js';

const path = process.argv[2];
if (!path) throw new Error('usage: lock-holder <file>');
const db = open({ path, overlappingSync: false });
db.transactionSync(() => {
  writeSync(2, 'held\n');
  waitForStdin();
});
writeSync(2, 'released\n');
void db.close();
