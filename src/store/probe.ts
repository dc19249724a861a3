// Child process of verifyDataFile (verify.ts): reads every record of a data file once, decoded as the
// store reads it, and checks that each database holds as many entries as its own header says. It runs
// in its own process because LMDB may end a process (SIGBUS, SIGSEGV, abort) on a damaged file instead
// of returning an error; exit 0 means every page it needs was readable and consistent.
//
// The entry counts matter: a garbled page can read as a well-formed empty or short page (LMDB then
// returns fewer records without any error), but the count recorded where the database is anchored
// (the meta page for the main database, the main database's record for each named one) still tells.
//
// It runs at a node's start on a data file its last clean stop did not vouch for (intact-mark.ts), so it is
// started from its own bundle (scripts/build-cli.mjs), which takes lmdb from the store packages' script
// with V8's code cache, as every thread of a node does.
import { open } from 'lmdb';
import { kMaxDbs } from './layout.js';

const [path, ...ours] = process.argv.slice(2);
if (path === undefined) {
  process.stderr.write('usage: probe DATA_FILE [DATABASE...]\n');
  process.exit(2);
}
/** The store's databases (its layout's, verify.ts); none named: every one the file lists. */
const known: ReadonlySet<string> | null = ours.length === 0 ? null : new Set(ours);

function count(iterable: Iterable<unknown>): number {
  let n = 0;
  for (const entry of iterable) {
    void entry;
    n++;
  }
  return n;
}

try {
  const root = open({ path, readOnly: true, maxDbs: kMaxDbs });
  const names = [...root.getKeys()].map(String);
  const rootEntries = (root.getStats() as { entryCount: number }).entryCount;
  if (names.length !== rootEntries) throw new Error(`the main database lists ${names.length} entries, its header says ${rootEntries}`);
  // Unknown names are not read here: openDataFile (open.ts) refuses them with its own message.
  for (const name of names.filter((n) => known === null || known.has(n))) {
    const db = root.openDB({ name });
    const read = count(db.getRange()); // reading and decoding every entry
    const recorded = (db.getStats() as { entryCount: number }).entryCount;
    if (read !== recorded) throw new Error(`database "${name}" yields ${read} entries, its header says ${recorded}`);
  }
  await root.close();
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
