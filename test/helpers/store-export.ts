// Every record in a data dir, read-only: each named database of the LMDB file with all its entries.
// It reads the database names from the file itself (LMDB lists them in the main database), so it
// knows no key layout and still sees every write, including meta's commit counter: two equal exports
// mean nothing was written in between.
import { join } from 'node:path';
import { open } from 'lmdb';
import { kMaxDbs } from '../../src/store/layout.js';

export type StoreExport = Record<string, [unknown, unknown][]>;

export async function exportStore(dataDir: string): Promise<StoreExport> {
  const root = open({ path: join(dataDir, 'flagwire.mdb'), readOnly: true, maxDbs: kMaxDbs });
  try {
    const out: StoreExport = {};
    for (const name of [...root.getKeys()].map(String).sort()) {
      const db = root.openDB({ name });
      out[name] = [...db.getRange()].map(({ key, value }) => [key, value]);
    }
    return out;
  } finally {
    await root.close();
  }
}
