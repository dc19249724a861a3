// PostgreSQL as the system of record: connecting (and migrating), the write transaction that takes
// the next revision and keeps the change log within its bounds, and the reads a node's copy follows it
// with (the change log, a full copy). Only this module speaks SQL to the tables of migrations.ts.
import { randomBytes } from 'node:crypto';
import { Packr } from 'msgpackr';
import type pg from 'pg';
import { kDefaultChangeLog } from '../../config.js';
import { FlagwireError } from '../../errors.js';
import { loadOnUse } from '../../load-on-use.js';
import { changeOf, type Change, type LoggedChange, type Revision } from '../changes.js';
import type { StoreLayout } from '../store-layout.js';
import { migrate } from './migrate.js';

/**
 * Change sets are msgpack, as LMDB stores the same records: a value reads back exactly as it was
 * written (undefined fields included), so every node's copy, and its Management API
 * representation, is the same.
 */
const packr = new Packr({ useRecords: false });
/** node-postgres, loaded when a node first connects (src/load-on-use.ts), with `Response` hidden meanwhile. */
const pgLib = loadOnUse<typeof pg>('pg', withoutResponse);

/**
 * Runs `load` with the global `Response` reading undefined, then puts it back as it was. As it loads, pg
 * asks whether it runs in Cloudflare Workers: where no `navigator` answers (Node 20), by making a
 * `Response`, and Node makes its fetch classes (undici) on their first use. That was undici's load
 * in every thread that loads pg (a node's writer and events threads, a command with --database) for an
 * object pg drops at once; without `Response` it answers no, as it does after making one, since Node is
 * not Workers. Nothing else runs in the thread while pg loads, and `Response` is still made on its
 * first use after.
 */
function withoutResponse<T>(load: () => T): T {
  const response = Object.getOwnPropertyDescriptor(globalThis, 'Response');
  if (response === undefined || response.configurable !== true) return load();
  Object.defineProperty(globalThis, 'Response', { value: undefined, configurable: true, writable: true });
  try {
    return load();
  } finally {
    Object.defineProperty(globalThis, 'Response', response);
  }
}

/** The revisions kept in the change log; a node further behind makes a full copy. */
export const kChangeRetention = 100_000;
/**
 * Every this many revisions, the commit that makes one drops the revisions past kChangeRetention (the
 * byte bound is kept at every commit: the running total in flagwire_meta tells when it is passed).
 */
const kPruneEvery = 1000;
/** Revisions read per query while catching up (each batch is one LMDB transaction). */
const kCatchUpBatch = 1000;
/** The NOTIFY channel; its payload is the revision committed. */
export const kChannel = 'flagwire_revision';
/**
 * A write transaction holds the cluster's write lock (the revision row) from its first statement to
 * its COMMIT. A writer that stops talking meanwhile (its node's LMDB write lock held by another process,
 * which the writer thread waits for synchronously; a frozen process or machine) would hold it, and so
 * stop every node's writes, for as long as it stays stuck. PostgreSQL ends such a session after this
 * long idle in its transaction: the lock comes free, and the stuck write is rolled back, so its refusal
 * is never applied. A write's statements follow each other within milliseconds (a node so far behind
 * that its write must first copy the whole database into LMDB is the one case that may take longer:
 * that write fails, and the node's follower makes the copy outside any write).
 */
export const kIdleInWriteMs = 5000;

/** Reads a node's copy follows PostgreSQL with; on the pool, or inside a write transaction. */
export interface RecordSource {
  /** The revisions after `after`, in order, at most a batch; null when the log no longer holds `after + 1`. */
  changesAfter(after: number, upTo: number): Promise<Revision[] | null>;
  /** Every current record, and the revision they are at. */
  snapshot(): Promise<{ revision: number; records: Change[] }>;
}

export interface PgOptions {
  /** The store's layout: the migrations a database is brought to, what each change kind puts into and removes from the table of current records. */
  layout: StoreLayout;
  /** Connections in the pool (the writer's transaction, the follower's reads, the console's). */
  max?: number;
  /**
   * The most bytes of change sets the change log keeps (FLAGWIRE_CHANGE_LOG_BYTES, as the data file's log:
   * ChangeLogBounds); the default's when absent. A commit made past it drops the oldest revisions until
   * it holds, the newest always kept; a node behind what is left makes a full copy.
   */
  changeLogBytes?: number;
}

/** The detail of a write refused because PostgreSQL could not be reached. */
export const kPgUnavailableDetail =
  'PostgreSQL, the system of record, cannot be reached; nothing was changed, and the change will not be applied later. Retry shortly.';
/** The detail of anything else that needed PostgreSQL (a console read catching its copy up): no change was asked for. */
const kPgUnreachableDetail = 'PostgreSQL, the system of record, cannot be reached. Retry shortly.';

export class PgSystem implements RecordSource {
  private id: string | null = null;
  private readying: Promise<string> | null = null;

  private constructor(
    readonly url: string,
    private readonly pool: pg.Pool,
    private readonly layout: StoreLayout,
    private readonly changeLogBytes: number,
  ) {}

  /** A pool for `url`; nothing is connected until the first use. */
  static open(url: string, options: PgOptions): PgSystem {
    return new PgSystem(url, newPool(url, options.max ?? 4), options.layout, options.changeLogBytes ?? kDefaultChangeLog.bytes);
  }

  /**
   * The database's id, once its schema is migrated (migrate.ts; done once per process). Rejects with
   * STORE_UNAVAILABLE when PostgreSQL cannot be reached; the next call tries again.
   */
  databaseId(): Promise<string> {
    if (this.id !== null) return Promise.resolve(this.id);
    this.readying ??= this.migrated().then(
      (id) => (this.id = id),
      (err: unknown) => {
        this.readying = null;
        throw err instanceof FlagwireError ? err : new FlagwireError('STORE_UNAVAILABLE', kPgUnreachableDetail, { cause: err });
      },
    );
    return this.readying;
  }

  private async migrated(): Promise<string> {
    const client = await this.pool.connect();
    try {
      await migrate(client, this.layout.migrations);
      const { rows } = await client.query<{ database_id: string }>('SELECT database_id FROM flagwire_meta');
      client.release();
      return rows[0]!.database_id;
    } catch (err) {
      client.release(err as Error);
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /**
   * The last committed revision. `answerMs`: a bound on the query (the follower's heartbeat); one not
   * answered by then fails, and its connection is dropped rather than returned to the pool still waiting.
   */
  async latestRevision(answerMs?: number): Promise<{ revision: number; committedAt: number | null }> {
    const { rows } = await this.pool.query<{ revision: string; committed_at: Date | null }>({
      text: 'SELECT m.revision, c.committed_at FROM flagwire_meta m LEFT JOIN flagwire_changes c ON c.revision = m.revision',
      ...(answerMs === undefined ? {} : { query_timeout: answerMs }),
    });
    return { revision: Number(rows[0]!.revision), committedAt: rows[0]!.committed_at?.getTime() ?? null };
  }

  changesAfter(after: number, upTo: number): Promise<Revision[] | null> {
    return changesAfter(this.pool, after, upTo);
  }

  /** One REPEATABLE READ transaction: the records and the revision agree. */
  async snapshot(): Promise<{ revision: number; records: Change[] }> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const result = await snapshot(client);
      await client.query('COMMIT');
      return result;
    } finally {
      client.release();
    }
  }

  /** Whether the database holds no record at all (migrate-to-postgres copies only into such a one). */
  async isEmpty(): Promise<boolean> {
    const { rows } = await this.pool.query('SELECT 1 FROM flagwire_records LIMIT 1');
    return rows.length === 0;
  }

  /**
   * Opens a write transaction holding the revision lock: every other writer, on any node, waits
   * until it commits or rolls back. Throws STORE_UNAVAILABLE when PostgreSQL cannot be reached.
   */
  async begin(): Promise<WriteTransaction> {
    let client: pg.PoolClient;
    try {
      await this.databaseId();
      client = await this.pool.connect();
    } catch (err) {
      // A write was asked for: its refusal says that nothing of it was, or will be, applied.
      if (err instanceof FlagwireError && err.code !== 'STORE_UNAVAILABLE') throw err;
      throw new FlagwireError('STORE_UNAVAILABLE', kPgUnavailableDetail, { cause: err });
    }
    try {
      await client.query(`BEGIN; SET LOCAL idle_in_transaction_session_timeout = ${kIdleInWriteMs}`);
      const { rows } = await client.query<{ revision: string }>('SELECT revision FROM flagwire_meta FOR UPDATE');
      return new WriteTransaction(client, Number(rows[0]!.revision), this.layout, this.changeLogBytes);
    } catch (err) {
      client.release(err as Error);
      throw new FlagwireError('STORE_UNAVAILABLE', kPgUnavailableDetail, { cause: err });
    }
  }

  /** Whether the write `writeId` committed (after a connection lost during its COMMIT). */
  async committed(writeId: string): Promise<number | null> {
    const client = await this.pool.connect();
    try {
      // The revision lock first: a transaction of the lost connection still running holds it, so this
      // waits until it has committed or rolled back, and the answer is final.
      await client.query('BEGIN');
      await client.query('SELECT revision FROM flagwire_meta FOR UPDATE');
      const { rows } = await client.query<{ revision: string }>('SELECT revision FROM flagwire_changes WHERE write_id = $1', [writeId]);
      await client.query('COMMIT');
      client.release();
      return rows.length === 0 ? null : Number(rows[0]!.revision);
    } catch (err) {
      client.release(err as Error);
      throw err;
    }
  }

  /** A client of its own for LISTEN (not from the pool: it stays connected). */
  listener(): pg.Client {
    return new (pgLib().Client)({ connectionString: this.url, keepAlive: true, connectionTimeoutMillis: 5000 });
  }

  /** Writes a whole data set as revision 1 of an empty database (migrate-to-postgres). */
  async importAll(records: readonly Change[]): Promise<number> {
    const txn = await this.begin();
    try {
      const { rows } = await txn.client.query('SELECT 1 FROM flagwire_records LIMIT 1');
      if (rows.length > 0 || txn.revision !== 0)
        throw new FlagwireError(
          'INVALID_REQUEST',
          'the database already holds Flagwire data; migrate-to-postgres copies only into an empty one',
        );
      return await txn.commit(records, records);
    } catch (err) {
      await txn.rollback();
      throw err;
    }
  }
}

/** The connection failed while COMMIT was on its way: whether it committed is known only by asking (PgSystem.committed). */
export class CommitUnknown extends Error {
  constructor(cause: unknown) {
    super('the connection to PostgreSQL failed during COMMIT', { cause });
  }
}

/** Parses a NOTIFY payload: the revision committed and PostgreSQL's clock then (Unix ms). */
export function parseNotice(payload: string | undefined): { revision: number; committedAt: number } | null {
  const m = /^(\d+):(\d+)$/.exec(payload ?? '');
  return m === null ? null : { revision: Number(m[1]), committedAt: Number(m[2]) };
}

/** A write transaction holding the revision lock (PgSystem.begin). */
export class WriteTransaction implements RecordSource {
  /** Tells, after a connection lost during COMMIT, whether this transaction committed (PgSystem.committed). */
  readonly writeId = randomBytes(12).toString('base64url');
  private done = false;

  /** `revision`: the last committed revision, locked: the next commit takes revision + 1. */
  constructor(
    readonly client: pg.PoolClient,
    readonly revision: number,
    private readonly layout: StoreLayout,
    private readonly changeLogBytes: number,
  ) {}

  changesAfter(after: number, upTo: number): Promise<Revision[] | null> {
    return changesAfter(this.client, after, upTo);
  }

  snapshot(): Promise<{ revision: number; records: Change[] }> {
    return snapshot(this.client);
  }

  /**
   * Writes `changes` as the next revision (records, change log, counter), notifies every node, and
   * commits. `logged`: the same changes as the change log keeps them, each record written over another
   * as its changed fields (StoreCopy.rehearse), which every node applies to its copy at the revision
   * before; the table of current records gets `changes`, whole. Returns the revision. Throws
   * STORE_UNAVAILABLE when nothing was committed, CommitUnknown when the connection failed during
   * COMMIT. `cutOff` aborting before COMMIT is sent drops the connection at once (no ROLLBACK to wait
   * for: PostgreSQL rolls back a transaction whose connection is gone, and COMMIT never went) and
   * throws its reason.
   */
  async commit(changes: readonly Change[], logged: readonly LoggedChange[], cutOff?: AbortSignal): Promise<number> {
    const revision = this.revision + 1;
    const puts: { kind: string; key: string; value: Buffer }[] = [];
    const removes: { kind: string; key: string }[] = [];
    for (const change of changes) {
      const kind = this.layout.changes.get(change.kind);
      if (kind === undefined) {
        await this.rollback();
        throw new Error(`a change of kind ${change.kind}, which this Flagwire does not know`);
      }
      const { put, remove } = kind.records(change.value);
      if (put !== null) puts.push({ ...put, value: packr.pack(change.value) });
      removes.push(...remove);
    }
    try {
      // Each record is written in the order its changes came, so the last write of a key wins.
      for (const r of removes) await this.statement(cutOff, 'DELETE FROM flagwire_records WHERE kind = $1 AND key = $2', [r.kind, r.key]);
      const last = new Map(puts.map((p) => [`${p.kind}\u0000${p.key}`, p]));
      if (last.size > 0) {
        const rows = [...last.values()];
        await this.statement(
          cutOff,
          `INSERT INTO flagwire_records (kind, key, value) SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[])
           ON CONFLICT (kind, key) DO UPDATE SET value = EXCLUDED.value`,
          [rows.map((r) => r.kind), rows.map((r) => r.key), rows.map((r) => r.value)],
        );
      }
      const entry = packr.pack(logged);
      await this.statement(cutOff, 'INSERT INTO flagwire_changes (revision, write_id, changes) VALUES ($1, $2, $3)', [
        revision,
        this.writeId,
        entry,
      ]);
      const counted = await this.statement(
        cutOff,
        'UPDATE flagwire_meta SET revision = $1, change_bytes = change_bytes + $2 RETURNING change_bytes',
        [revision, entry.length],
      );
      const logBytes = Number((counted.rows[0] as { change_bytes: string }).change_bytes);
      if (logBytes > this.changeLogBytes || revision % kPruneEvery === 0) await this.prune(cutOff, revision, logBytes);
      // The payload: the revision and PostgreSQL's clock at the commit, which the followers measure their lag from.
      await this.statement(
        cutOff,
        `SELECT pg_notify('${kChannel}', $1 || ':' || floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)`,
        [String(revision)],
      );
      if (cutOff?.aborted === true) throw cutOff.reason;
    } catch (err) {
      if (cutOff?.aborted === true) {
        this.release(new Error('cut off at its deadline'));
        throw cutOff.reason;
      }
      // Nothing was committed: the connection failed (the server rolls back) or a statement did.
      await this.rollback();
      throw new FlagwireError('STORE_UNAVAILABLE', kPgUnavailableDetail, { cause: err });
    }
    try {
      await this.client.query('COMMIT');
      this.release();
      return revision;
    } catch (err) {
      this.release(err as Error);
      throw new CommitUnknown(err);
    }
  }

  /**
   * Drops the oldest revisions of the change log until it holds at most kChangeRetention revisions and
   * at most changeLogBytes (`logBytes`: its bytes now, `revision`'s included), `revision` always kept;
   * their bytes are taken off the running total. Only what is dropped is read (each entry's length, not
   * its bytes: octet_length reads a stored value's header): the oldest first, until what is left fits.
   */
  private async prune(cutOff: AbortSignal | undefined, revision: number, logBytes: number): Promise<void> {
    await this.statement(
      cutOff,
      `WITH cut AS (
         SELECT GREATEST($2::bigint, CASE WHEN $3::bigint <= $4::bigint THEN 0 ELSE coalesce((
           SELECT revision FROM (
             SELECT revision, $3::bigint - sum(octet_length(changes)) OVER (ORDER BY revision) AS left_bytes
             FROM flagwire_changes WHERE revision < $1
           ) oldest WHERE left_bytes <= $4::bigint ORDER BY revision LIMIT 1
         ), $1 - 1) END) AS up_to
       ), dropped AS (
         DELETE FROM flagwire_changes WHERE revision <= (SELECT up_to FROM cut) AND revision < $1 RETURNING octet_length(changes) AS bytes
       )
       UPDATE flagwire_meta SET change_bytes = change_bytes - (SELECT coalesce(sum(bytes), 0) FROM dropped)`,
      [revision, revision - kChangeRetention, logBytes, this.changeLogBytes],
    );
  }

  /** One statement before COMMIT; `cutOff` aborting drops the connection rather than wait for its answer. */
  private statement(cutOff: AbortSignal | undefined, text: string, values?: unknown[]): Promise<pg.QueryResult> {
    if (cutOff?.aborted === true) return Promise.reject(cutOff.reason);
    const query = this.client.query(text, values);
    if (cutOff === undefined) return query;
    return new Promise((resolve, reject) => {
      const cut = () => {
        // The query rejects once the connection is dropped; the cut-off's reason is what is answered.
        query.catch(() => undefined);
        this.release(new Error('cut off at its deadline'));
        reject(cutOff.reason);
      };
      cutOff.addEventListener('abort', cut, { once: true });
      query.then(resolve, reject).finally(() => cutOff.removeEventListener('abort', cut));
    });
  }

  async rollback(): Promise<void> {
    if (this.done) return;
    try {
      await this.client.query('ROLLBACK');
      this.release();
    } catch (err) {
      this.release(err as Error);
    }
  }

  private release(err?: Error): void {
    if (this.done) return;
    this.done = true;
    this.client.release(err);
  }
}

export function newPool(url: string, max: number): pg.Pool {
  const pool = new (pgLib().Pool)({
    connectionString: url,
    max,
    keepAlive: true,
    // A PostgreSQL that does not answer fails a write in bounded time instead of holding the writer.
    connectionTimeoutMillis: 5000,
    query_timeout: 30_000,
  });
  // An idle connection that breaks (PostgreSQL restarted) is dropped from the pool; the next use connects anew.
  pool.on('error', () => undefined);
  // One that breaks while checked out, between two queries, would otherwise emit an unhandled 'error'
  // and end the writer thread: its next query fails instead, and the caller handles that.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** The revisions after `after`, each as its change set was logged: whole records, and records written again as their changed fields. */
async function changesAfter(client: pg.Pool | pg.ClientBase, after: number, upTo: number): Promise<Revision[] | null> {
  const { rows } = await client.query<{ revision: string; changes: Buffer }>(
    'SELECT revision, changes FROM flagwire_changes WHERE revision > $1 AND revision <= $2 ORDER BY revision LIMIT $3',
    [after, upTo, kCatchUpBatch],
  );
  if (upTo > after && (rows.length === 0 || Number(rows[0]!.revision) !== after + 1)) return null;
  return rows.map((r) => ({ revision: Number(r.revision), changes: packr.unpack(r.changes) as LoggedChange[] }));
}

async function snapshot(client: pg.ClientBase): Promise<{ revision: number; records: Change[] }> {
  const meta = await client.query<{ revision: string }>('SELECT revision FROM flagwire_meta');
  const { rows } = await client.query<{ kind: string; value: Buffer }>('SELECT kind, value FROM flagwire_records');
  const records = rows.map((r) => changeOf(r.kind, packr.unpack(r.value)));
  return { revision: Number(meta.rows[0]!.revision), records };
}
