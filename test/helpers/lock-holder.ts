// A child process that holds an LMDB file's write lock: it opens a write transaction (writing nothing),
// says "held" on stderr, and ends the transaction when a byte arrives on stdin (or stdin closes), then
// says "released". The other process that wants to write, for tests of the server's write timeout.
import { readSync, writeSync } from 'node:fs';
import { open } from 'lmdb';

const path = process.argv[2];
if (!path) throw new Error('usage: lock-holder <file>');
const db = open({ path, overlappingSync: false });
db.transactionSync(() => {
  writeSync(2, 'held\n');
  const byte = Buffer.alloc(1);
  const nap = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      readSync(0, byte, 0, 1, null);
      return;
    } catch (err) {
      // A non-blocking stdin has nothing yet: wait a millisecond and ask again.
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return;
      Atomics.wait(nap, 0, 0, 1);
    }
  }
});
writeSync(2, 'released\n');
void db.close();
