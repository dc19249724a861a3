// A fingerprint of every record in a data dir, taken from the test process while a server runs on it:
// for each named database, a SHA-256 over every entry's key and the value's raw bytes as stored (the
// msgpack bytes, not a decoded copy). Two equal fingerprints mean no record was added, removed or
// changed by a single byte in between.
//
// Token activity and the mail outbox (with its index of mail to send) are left out on purpose: a
// request refused with a real token is *supposed* to be recorded there (spec: Events), and activity is
// flushed every second on its own.
// So are meta's commit counter and mail sequence, which those writes move, and those kinds' entries in
// the store's lookups and tallies (keyed by kind first). Everything a client could
// change (orgs, projects, flags, audiences, tokens, audit, indexes, the rest of meta) is compared.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { kMaxDbs } from '../../src/store/layout.js';

export type Digest = Record<string, string>;

const kSkippedDbs = new Set(['activity', 'mail', 'mailDue']);
const kSkippedMetaKeys = new Set(['configSeq', 'mailSeq']);
/** The store's own databases of every kind's lookups and tallies, whose keys start with the kind. */
const kByKind = new Set(['keyedIndexes', 'keyedTallies']);

export class StoreDigest {
  private readonly root: RootDatabase;
  private readonly dbs = new Map<string, Database<Buffer, string | number | (string | number)[]>>();
  /** The last fingerprint and the environment's last committed transaction when it was taken. */
  private last: { txnId: number; digest: Digest } | null = null;

  /** `alsoSkipped`: databases a test expects its requests to change by design, left out too. */
  constructor(
    dataDir: string,
    private readonly alsoSkipped: ReadonlySet<string> = new Set(),
  ) {
    this.root = open({ path: join(dataDir, 'flagwire.mdb'), readOnly: true, maxDbs: kMaxDbs });
  }

  /**
   * The fingerprint now (a fresh read snapshot: sees every commit so far, from any process). When no
   * write transaction has committed since the last one (LMDB's last transaction id, from any process,
   * has not moved), nothing can differ and that one is the answer: most refused requests write nothing
   * at all, and reading every record after each was most of the fuzz tests' time.
   */
  take(): Digest {
    this.root.resetReadTxn();
    const txnId = (this.root.getStats() as { lastTxnId: number }).lastTxnId;
    if (this.last !== null && this.last.txnId === txnId) return this.last.digest;
    const digest = this.read();
    // The id is read before the records: a commit in between moves it past this one, and the next take reads again.
    this.last = { txnId, digest };
    return digest;
  }

  private read(): Digest {
    const out: Digest = {};
    for (const name of [...this.root.getKeys()].map(String).sort()) {
      if (kSkippedDbs.has(name) || this.alsoSkipped.has(name)) continue;
      let db = this.dbs.get(name);
      if (db === undefined) {
        db = this.root.openDB({ name, encoding: 'binary' }) as unknown as Database<Buffer, string | number | (string | number)[]>;
        this.dbs.set(name, db);
      }
      const hash = createHash('sha256');
      let entries = 0;
      for (const { key, value } of db.getRange()) {
        if (name === 'meta' && kSkippedMetaKeys.has(String(key))) continue;
        if (kByKind.has(name) && Array.isArray(key) && kSkippedDbs.has(String(key[0]))) continue;
        const keyText = JSON.stringify(key);
        hash.update(`${keyText.length}:${keyText}:${value.length}:`);
        hash.update(value);
        entries++;
      }
      out[name] = `${entries}:${hash.digest('hex')}`;
    }
    return out;
  }

  /** Names of the databases that differ between two fingerprints. */
  static changed(a: Digest, b: Digest): string[] {
    return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => a[k] !== b[k]);
  }

  async close(): Promise<void> {
    await this.root.close();
  }
}
