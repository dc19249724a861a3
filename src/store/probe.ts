// Child process of verifyDataFile (verify.ts): reads every record of a data file once, decoded as the
// store reads it. It runs in its own process because LMDB may end a process (SIGBUS, SIGSEGV, abort)
// on a damaged file instead of returning an error; exit 0 means every page it needs was readable.
import { open } from 'lmdb';

const path = process.argv[2];
if (path === undefined) {
  process.stderr.write('usage: probe.js DATA_FILE\n');
  process.exit(2);
}
try {
  const root = open({ path, readOnly: true, maxDbs: 16 });
  for (const name of [...root.getKeys()].map(String)) {
    const db = root.openDB({ name });
    for (const entry of db.getRange()) void entry; // reading (and decoding) every entry is the check
  }
  await root.close();
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
