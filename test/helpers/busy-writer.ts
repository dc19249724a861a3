// A child process that commits to an LMDB file as fast as it can, each commit adding pages so the
// file keeps growing, until it is killed: the concurrent writer for tests of readers of the raw file.
import { randomBytes } from 'node:crypto';
import { open } from 'lmdb';

const path = process.argv[2];
if (!path) throw new Error('usage: busy-writer <file>');
const db = open({ path, overlappingSync: false });
let n = 0;
process.send?.('ready');
for (;;) {
  db.transactionSync(() => {
    for (let i = 0; i < 8; i++) db.putSync(`k${n++}`, randomBytes(2048));
  });
}
