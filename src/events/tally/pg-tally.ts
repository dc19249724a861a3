// The tally in PostgreSQL (its tables: tally-storage.ts), for nodes that share a database: the tally
// file's records (tally-file.ts) in tables every node reads and writes, so that a subject's first
// exposure counted on one node fixes where its outcomes count on any other.
//
// One PostgreSQL transaction per call of `transact`, on the calling front-end thread's own pool (never
// the writer thread, never the revision lock: configuration writes and events never wait for each
// other), committed before it settles:
//   1. the batch id locked (an advisory lock: a batch sent again to another node meanwhile waits for
//      this one to end) and its answer read; a batch already answered reads nothing more.
//   2. the subjects' rows locked (FOR UPDATE, in byte order; a row made first if absent, so there is one
//      to lock) and read. Every writer of a subject locks its row first, so a subject's state is never
//      written from a stale read, erasures included. Row locks live in the rows, not in PostgreSQL's
//      shared lock table (which a thousand advisory locks per batch would fill).
//   3. the storage limits' counts (schema 4), read as the tally file's are in its transaction: the
//      scope's subjects, its row locked (FOR UPDATE) when the transaction makes a subject; and, when it
//      keeps raw events, the project's bytes of them, its row locked, after its raw events expired by
//      now are forgotten. A limit is decided on what the last transaction to add to that count
//      committed: two transactions of any nodes that both add take the row in turn, the second reading
//      what the first wrote, so a limit holds exactly (the cost: a project environment's batches that
//      make subjects, and a project's batches that keep raw events, commit one at a time). The scope's
//      undeclared metric names (schema 5) are read too, and when the batch tracks a name not among
//      them, read again under the subjects' count's lock: so their bound holds exactly on every node.
//   4. the caller's function, synchronous, on those rows in memory (StagedTally): the same code that
//      counts into the tally file.
//   5. its writes: subjects put or deleted, raw events kept or erased, the counts moved by their deltas,
//      the batch's answer, old batch ids forgotten; and the arms' and sums' deltas added
//      (`x = x + delta`) to the rows of one slot of kTallySlots, picked per transaction: sums are
//      commutative, so any slot is right, and transactions of any node rarely wait for one another on a
//      hot sum. The statistics sum the slots. Rows are locked in one order (subjects, the subjects'
//      count, the raw bytes, then arms and sums), so transactions wait for one another in no cycle.
//   6. after COMMIT, raw events of any project that expired forgotten in bounded steps (expireRaw).
// A node killed mid-transaction leaves nothing (PostgreSQL rolls back a transaction whose connection is
// gone, and frees its locks); what was answered was committed; a batch id's answer is in the same
// transaction as its counts, so a batch retried at any node is counted once, and its raw events are
// kept once (they are written in that same transaction).
//
// Steps 1 to 3 are pg-tally-lock.ts, the rows in memory pg-tally-staged.ts, step 5 pg-tally-write.ts.
import type pg from 'pg';
import { FlagwireError } from '../../errors.js';
import { migrateOwn } from '../../store/pg/migrate.js';
import { kIdleInWriteMs, newPool } from '../../store/pg/pg-system.js';
import { lockAndRead, type TallyTouches } from './pg-tally-lock.js';
import type { StagedTally } from './pg-tally-staged.js';
import { kSumColumns, writeStaged } from './pg-tally-write.js';
import type { ExperimentTally, RawCursor, RawEvent, RawEventPages, RawPage, RawRange, TallyScope, TallyTxn } from './tally-file.js';
import { kTallyMigrations } from './tally-storage.js';

export type { TallyTouches };

/**
 * Tries of a transaction PostgreSQL ended as a deadlock: one can only arise when an erasure deleted a
 * subject's row while a batch waited for it, and the batch then makes the row again out of order.
 */
const kTries = 3;
/** How long a commit whose connection failed is asked about before it is given up as unknown. */
const kCommitCheckMs = 3 * kIdleInWriteMs;

const kUnavailable =
  'PostgreSQL, where events are counted, cannot be reached; nothing of this request was counted. Retry shortly (a batch under the same batch id).';
const kCommitUnknown =
  'PostgreSQL, where events are counted, failed while committing this request, and whether it was counted cannot be known yet. A batch sent again under its batch id is counted once.';

export class PgTally implements RawEventPages {
  private migrated: Promise<void> | null = null;
  /** The expiry of raw events running after a commit (expireRaw), if any. */
  private expiring: Promise<void> | null = null;

  private constructor(private readonly pool: pg.Pool) {}

  /** A pool of `connections` for `url`; nothing is connected until the first use. */
  static open(url: string, connections: number): PgTally {
    return new PgTally(newPool(url, connections));
  }

  /**
   * Runs `fn` on the rows `touches` names, in one PostgreSQL transaction, and settles with its result
   * once committed. `fn` must be synchronous, read only `scope` and the subjects and batch id of
   * `touches`, and only add to arms and sums (it reads them as what it added). Rejects with
   * STORE_UNAVAILABLE when nothing was committed, or when whether it was cannot be learnt.
   */
  async transact<T>(scope: TallyScope, touches: TallyTouches, fn: (txn: TallyTxn) => T): Promise<T> {
    for (let tried = 1; ; tried++) {
      try {
        return await this.once(scope, touches, fn);
      } catch (err) {
        // Rolled back, nothing applied: `fn` runs again on what the rows are now.
        const deadlock = err instanceof FlagwireError && (err.cause as { code?: unknown } | undefined)?.code === '40P01';
        if (!deadlock || tried === kTries) throw err;
      }
    }
  }

  private async once<T>(scope: TallyScope, touches: TallyTouches, fn: (txn: TallyTxn) => T): Promise<T> {
    const client = await this.connect();
    let xid: string;
    let staged: StagedTally;
    try {
      await client.query(`BEGIN; SET LOCAL idle_in_transaction_session_timeout = ${kIdleInWriteMs}`);
      ({ xid, staged } = await lockAndRead(client, scope, touches));
    } catch (err) {
      throw await rolledBack(client, err);
    }
    let result: T;
    try {
      result = fn(staged);
    } catch (err) {
      await rolledBack(client, err);
      throw err;
    }
    try {
      await writeStaged(client, scope, staged);
    } catch (err) {
      throw await rolledBack(client, err);
    }
    try {
      await client.query('COMMIT');
      client.release();
      if (staged.expire !== null) this.expireRaw(staged.expire.now, staged.expire.limit);
      return result;
    } catch (err) {
      client.release(err as Error);
      // Committed or not, PostgreSQL knows: the answer is what it says (committed() throws when it cannot be asked).
      if (await this.committed(xid)) return result;
      throw new FlagwireError('STORE_UNAVAILABLE', kUnavailable, { cause: err });
    }
  }

  /**
   * An experiment's arms and sums, each summed over the slots, variants and metrics in byte order: of
   * every metric, or only of `metrics`.
   */
  async experiment(scope: TallyScope, experiment: string, metrics: readonly string[] | null = null): Promise<ExperimentTally> {
    await this.ready();
    const where = [scope.projectId, scope.environment, Buffer.from(experiment)];
    const named = metrics === null ? null : metrics.map((m) => Buffer.from(m));
    try {
      const arms = await this.pool.query<{ variant: Buffer; subjects: string }>(
        `SELECT variant, sum(subjects)::text AS subjects FROM flagwire_tally_arms
         WHERE project_id = $1 AND environment = $2 AND experiment = $3 GROUP BY variant ORDER BY variant`,
        where,
      );
      const sums = await this.pool.query<Record<'variant' | 'metric', Buffer> & Record<(typeof kSumColumns)[number], string>>(
        `SELECT variant, metric, ${kSumColumns.map((c) => `sum(${c})::text AS ${c}`).join(', ')} FROM flagwire_tally_sums
         WHERE project_id = $1 AND environment = $2 AND experiment = $3 AND ($4::bytea[] IS NULL OR metric = ANY($4))
         GROUP BY variant, metric ORDER BY variant, metric`,
        [...where, named],
      );
      return {
        arms: arms.rows.map((r) => ({ variant: r.variant.toString(), subjects: Number(r.subjects) })),
        sums: sums.rows.map((r) => ({
          variant: r.variant.toString(),
          metric: r.metric.toString(),
          sums: {
            events: Number(r.events),
            subjects: Number(r.subjects),
            sum: BigInt(r.sum),
            sumOfSquares: BigInt(r.sum_of_squares),
            covariateEvents: Number(r.covariate_events),
            covariateSubjects: Number(r.covariate_subjects),
            covariateSum: BigInt(r.covariate_sum),
            covariateSumOfSquares: BigInt(r.covariate_sum_of_squares),
            sumOfProducts: BigInt(r.sum_of_products),
          },
        })),
      };
    } catch (err) {
      throw new FlagwireError('STORE_UNAVAILABLE', 'PostgreSQL, where events are counted, cannot be reached. Retry shortly.', {
        cause: err,
      });
    }
  }

  /**
   * Up to `limit` raw events of `scope` in `range`, in the order they were counted (their sequence
   * numbers), after the one `after` names: an export reads a page at a time, each a query of its own.
   */
  async rawEvents(scope: TallyScope, range: RawRange, after: RawCursor | null, limit: number): Promise<RawPage> {
    await this.ready();
    try {
      // By the column, a number (the text `at` is for the cursor only: sorted as text, 10 would come before 9).
      const { rows } = await this.pool.query<{ at: string; event: string }>(
        `SELECT seq::text AS at, event FROM flagwire_tally_raw
         WHERE project_id = $1 AND environment = $2 AND seq > $3 AND stored_at >= $4 AND stored_at < $5 AND expires_at > $6
         ORDER BY seq LIMIT $7`,
        [scope.projectId, scope.environment, after?.[0] ?? 0, range.from, range.to, range.now, limit],
      );
      return {
        events: rows.map((row) => JSON.parse(row.event) as RawEvent),
        last: rows.length === limit ? [rows.at(-1)!.at] : null,
      };
    } catch (err) {
      throw new FlagwireError('STORE_UNAVAILABLE', 'PostgreSQL, where raw events are kept, cannot be reached. Retry shortly.', {
        cause: err,
      });
    }
  }

  /**
   * Removes up to `limit` raw events of `subject` in `scope` numbered up to `end` (rawEventsEnd) and
   * takes their bytes off the project's, in one statement (its own transaction): an erasure's step,
   * bounded however many events the subject has. Settles with how many.
   */
  async removeRawEvents(scope: TallyScope, subject: string, end: RawCursor, limit: number): Promise<number> {
    await this.ready();
    try {
      const { rows } = await this.pool.query<{ removed: number }>(
        `WITH gone AS (
           DELETE FROM flagwire_tally_raw WHERE ctid IN (
             SELECT ctid FROM flagwire_tally_raw WHERE project_id = $1 AND environment = $2 AND subject = $3 AND seq <= $4 LIMIT $5)
           RETURNING bytes),
         taken AS (
           UPDATE flagwire_tally_raw_bytes SET bytes = GREATEST(0, bytes - (SELECT coalesce(sum(bytes), 0) FROM gone)) WHERE project_id = $1)
         SELECT count(*)::int AS removed FROM gone`,
        [scope.projectId, scope.environment, Buffer.from(subject), end[0], limit],
      );
      return rows[0]!.removed;
    } catch (err) {
      throw new FlagwireError('STORE_UNAVAILABLE', 'PostgreSQL, where raw events are kept, cannot be reached. Retry shortly.', {
        cause: err,
      });
    }
  }

  async close(): Promise<void> {
    await this.expiring;
    await this.pool.end();
  }

  /**
   * Forgets up to `limit` raw events of any project that expired before `now`, and takes their bytes
   * off their projects', in one statement (its own transaction) after a batch's commit, one at a time
   * per pool: so a project that sends nothing more still has its events expire, in bounded steps, and
   * no batch's transaction waits for another project's bytes row. Rows another transaction holds are
   * skipped. A failure (PostgreSQL gone; two nodes' expiries waiting for each other's bytes rows, which
   * PostgreSQL ends as a deadlock) changes nothing, and the next batch's expiry tries again.
   */
  private expireRaw(now: number, limit: number): void {
    if (this.expiring !== null) return;
    this.expiring = this.pool
      .query(
        `WITH gone AS (
           DELETE FROM flagwire_tally_raw WHERE ctid IN (
             SELECT ctid FROM flagwire_tally_raw WHERE expires_at < $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
           RETURNING project_id, bytes),
         per AS (SELECT project_id, sum(bytes) AS bytes FROM gone GROUP BY project_id)
         UPDATE flagwire_tally_raw_bytes AS r SET bytes = GREATEST(0, r.bytes - per.bytes) FROM per WHERE r.project_id = per.project_id`,
        [now, limit],
      )
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        this.expiring = null;
      });
  }

  /** Its tables migrated (once per pool: the node's store has usually done it already, with every other migration). */
  private ready(): Promise<void> {
    this.migrated ??= (async () => {
      const client = await this.pool.connect();
      try {
        await migrateOwn(client, kTallyMigrations);
        client.release();
      } catch (err) {
        client.release(err as Error);
        throw err;
      }
    })().catch((err: unknown) => {
      this.migrated = null;
      throw new FlagwireError('STORE_UNAVAILABLE', kUnavailable, { cause: err });
    });
    return this.migrated;
  }

  private async connect(): Promise<pg.PoolClient> {
    await this.ready();
    try {
      return await this.pool.connect();
    } catch (err) {
      throw new FlagwireError('STORE_UNAVAILABLE', kUnavailable, { cause: err });
    }
  }

  /**
   * Whether transaction `xid`, whose COMMIT got no answer, committed: asked on another connection until
   * PostgreSQL knows (a transaction of a connection it has not yet seen fail is still in progress; the
   * idle-in-transaction timeout ends it). False when aborted; throws when it cannot be learnt in time.
   */
  private async committed(xid: string): Promise<boolean> {
    const until = Date.now() + kCommitCheckMs;
    for (;;) {
      try {
        const { rows } = await this.pool.query<{ status: string | null }>('SELECT txid_status($1) AS status', [xid]);
        const status = rows[0]!.status;
        if (status === 'committed') return true;
        if (status !== 'in progress') return false;
      } catch {
        // Not reachable yet: asked again below, until the bound.
      }
      if (Date.now() > until)
        throw new FlagwireError('STORE_UNAVAILABLE', kCommitUnknown, { cause: new Error(`transaction ${xid}: status unknown`) });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/**
 * Rolls back a transaction that failed before COMMIT (the connection dropped if even that fails: PostgreSQL
 * rolls back a transaction whose connection is gone); the refusal of `err`: nothing was counted.
 */
async function rolledBack(client: pg.PoolClient, err: unknown): Promise<FlagwireError> {
  await client.query('ROLLBACK').then(
    () => client.release(),
    (lost: Error) => client.release(lost),
  );
  return new FlagwireError('STORE_UNAVAILABLE', kUnavailable, { cause: err });
}
