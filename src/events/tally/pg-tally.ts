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
import { randomInt } from 'node:crypto';
import { Packr } from 'msgpackr';
import type pg from 'pg';
import { murmur3String } from '../../bytes/murmur3.js';
import { FlagwireError } from '../../errors.js';
import {
  type CountedBatch,
  type ExperimentTally,
  fromSubject,
  type MetricSums,
  type RawCursor,
  type RawEvent,
  type RawEventPages,
  type RawPage,
  type RawRange,
  rawEventBytes,
  type StoredSubject,
  type SubjectState,
  type TallyScope,
  type TallyTxn,
  toSubject,
} from './tally-file.js';
import { kTallyMigrations } from './tally-storage.js';
import { migrateOwn } from '../../store/pg/migrate.js';
import { kIdleInWriteMs, newPool } from '../../store/pg/pg-system.js';

/** Subject states are msgpack, as the tally file stores them. */
const packr = new Packr({ useRecords: false });

/** Rows per arm and per sum that transactions add to: contention on one is 1 in this many. */
const kTallySlots = 16;
/** pg_advisory_xact_lock's first key for batch ids ("flat" in ASCII), so other applications' locks do not collide. */
const kBatchLock = 0x666c6174;
/**
 * Tries of a transaction PostgreSQL ended as a deadlock: one can only arise when an erasure deleted a
 * subject's row while a batch waited for it, and the batch then makes the row again out of order.
 */
const kTries = 3;
/** How long a commit whose connection failed is asked about before it is given up as unknown. */
const kCommitCheckMs = 3 * kIdleInWriteMs;
/** A project's expired raw events a transaction that keeps some of its own forgets first, at most. */
const kForgetOwnRaw = 1000;

/** What a transaction will read: the batch id it counts under, if any, and every subject it touches. */
export interface TallyTouches {
  readonly batchId: string | null;
  readonly subjects: readonly string[];
  /**
   * Set when it keeps raw events of the project of `scopes` (its environments) at `now`: the project's
   * raw events expired by then are forgotten first, and its bytes (locked) and first expiry read.
   */
  readonly keepsRaw?: { readonly scopes: readonly TallyScope[]; readonly now: number };
  /** Set when it reads where its subjects' raw events end (TallyTxn.rawEventsEnd: an erasure). */
  readonly readsRawEnd?: boolean;
  /** The metric names it tracks that no experiment declares (TallyTxn.undeclaredMetrics). */
  readonly metrics?: readonly string[];
}

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
      await write(client, scope, staged);
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

/** The columns of a sums row, in MetricSums' order. */
const kSumColumns = [
  'events',
  'subjects',
  'sum',
  'sum_of_squares',
  'covariate_events',
  'covariate_subjects',
  'covariate_sum',
  'covariate_sum_of_squares',
  'sum_of_products',
] as const;
const kSumFields: readonly (keyof MetricSums)[] = [
  'events',
  'subjects',
  'sum',
  'sumOfSquares',
  'covariateEvents',
  'covariateSubjects',
  'covariateSum',
  'covariateSumOfSquares',
  'sumOfProducts',
];

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

/** Locks and reads what `touches` names (steps 1 and 2 above), into a staged transaction; with the transaction's id. */
async function lockAndRead(client: pg.ClientBase, scope: TallyScope, touches: TallyTouches): Promise<{ xid: string; staged: StagedTally }> {
  const { projectId, environment } = scope;
  const { batchId } = touches;
  const { rows } = await client.query<{ xid: string }>(
    batchId === null ? 'SELECT txid_current()::text AS xid' : 'SELECT txid_current()::text AS xid, pg_advisory_xact_lock($1, $2)',
    batchId === null ? [] : [kBatchLock, murmur3String(`${projectId}\u0000${environment}\u0000${batchId}`) | 0],
  );
  const xid = rows[0]!.xid;
  const loaded = new Map<string, SubjectState>();
  if (batchId !== null) {
    const batch = await client.query<{ at: string; answer: string }>(
      'SELECT at, answer FROM flagwire_tally_batches WHERE project_id = $1 AND environment = $2 AND batch_id = $3',
      [projectId, environment, Buffer.from(batchId)],
    );
    const row = batch.rows[0];
    if (row !== undefined)
      return { xid, staged: new StagedTally(scope, batchId, { at: Number(row.at), answer: JSON.parse(row.answer) }, loaded, kNoUsage) };
  }
  // Each subject by its bytes (two strings that differ only in unpaired surrogates are one row).
  const names = new Map<string, string[]>();
  for (const subject of new Set(touches.subjects)) {
    const hex = Buffer.from(subject).toString('hex');
    names.set(hex, [...(names.get(hex) ?? []), subject]);
  }
  // Hex sorts as the bytes do, which is how PostgreSQL orders bytea: rows made and locked in one order.
  let missing = [...names.keys()].sort();
  while (missing.length > 0) {
    const keys = missing.map((hex) => Buffer.from(hex, 'hex'));
    await client.query(
      `INSERT INTO flagwire_tally_subjects (project_id, environment, subject, state)
       SELECT $1, $2, u.subject, ''::bytea FROM unnest($3::bytea[]) WITH ORDINALITY AS u(subject, n) ORDER BY u.n
       ON CONFLICT (project_id, environment, subject) DO NOTHING`,
      [projectId, environment, keys],
    );
    const locked = await client.query<{ subject: Buffer; state: Buffer }>(
      `SELECT subject, state FROM flagwire_tally_subjects WHERE project_id = $1 AND environment = $2 AND subject = ANY($3::bytea[])
       ORDER BY subject FOR UPDATE`,
      [projectId, environment, keys],
    );
    for (const { subject, state } of locked.rows)
      for (const name of names.get(subject.toString('hex'))!) loaded.set(name, toSubject(unpack(state)));
    // A row an erasure deleted while this waited for its lock is not returned: made and locked again.
    missing = missing.filter((hex) => !loaded.has(names.get(hex)![0]!));
  }
  const usage = await readUsage(client, scope, touches, loaded, names);
  return { xid, staged: new StagedTally(scope, batchId, undefined, loaded, usage) };
}

/** What a transaction read of the storage limits' counts (step 3 above); null where it read none. */
interface Usage {
  readonly subjects: number | null;
  /** The project's bytes of raw events as read, and those of its expired ones this transaction forgot. */
  readonly raw: { readonly bytes: number; readonly forgotten: number; readonly firstExpiry: number | null } | null;
  /** Where its subjects' raw events end (the sequence number of each one's last), by subject. */
  readonly rawEnd: ReadonlyMap<string, string> | null;
  /** The scope's undeclared metric names as read, when it tracks any. */
  readonly metrics: ReadonlySet<string> | null;
}

const kNoUsage: Usage = { subjects: null, raw: null, rawEnd: null, metrics: null };

/**
 * Reads the counts a limit is decided on (step 3 above), after the subjects' rows are locked: the
 * scope's subjects (locked if this transaction may add one: a subject row it made has no state), the
 * project's raw bytes when it keeps raw events, and the raw events of its subjects when it removes them.
 */
async function readUsage(
  client: pg.ClientBase,
  scope: TallyScope,
  touches: TallyTouches,
  loaded: ReadonlyMap<string, SubjectState>,
  names: ReadonlyMap<string, string[]>,
): Promise<Usage> {
  const { projectId, environment } = scope;
  const readMetrics = async (): Promise<Set<string>> => {
    const { rows } = await client.query<{ metric: Buffer }>(
      'SELECT metric FROM flagwire_tally_metric_names WHERE project_id = $1 AND environment = $2',
      [projectId, environment],
    );
    return new Set(rows.map(({ metric }) => metric.toString()));
  };
  let metrics = touches.metrics === undefined ? null : await readMetrics();
  const addsMetric = metrics !== null && touches.metrics!.some((m) => !metrics!.has(m));
  const adds = [...loaded.values()].some(isEmpty) || addsMetric;
  if (adds)
    await client.query(
      'INSERT INTO flagwire_tally_subject_counts (project_id, environment, subjects) VALUES ($1, $2, 0) ON CONFLICT DO NOTHING',
      [projectId, environment],
    );
  const counted = await client.query<{ subjects: string }>(
    `SELECT subjects::text AS subjects FROM flagwire_tally_subject_counts WHERE project_id = $1 AND environment = $2${adds ? ' FOR UPDATE' : ''}`,
    [projectId, environment],
  );
  const subjects = Number(counted.rows[0]?.subjects ?? 0);
  // Read again under the lock: what another node added meanwhile counts toward the bound.
  if (addsMetric) metrics = await readMetrics();
  let raw: Usage['raw'] = null;
  if (touches.keepsRaw !== undefined) {
    const { scopes, now } = touches.keepsRaw;
    await client.query('INSERT INTO flagwire_tally_raw_bytes (project_id, bytes) VALUES ($1, 0) ON CONFLICT DO NOTHING', [projectId]);
    const locked = await client.query<{ bytes: string }>(
      'SELECT bytes::text AS bytes FROM flagwire_tally_raw_bytes WHERE project_id = $1 FOR UPDATE',
      [projectId],
    );
    // As the tally file forgets expired events in the batch's transaction: the room they free counts for it.
    const forgot = await client.query<{ bytes: string }>(
      `WITH gone AS (
         DELETE FROM flagwire_tally_raw WHERE ctid IN (
           SELECT ctid FROM flagwire_tally_raw WHERE project_id = $1 AND expires_at < $2 ORDER BY expires_at LIMIT $3 FOR UPDATE SKIP LOCKED)
         RETURNING bytes)
       SELECT coalesce(sum(bytes), 0)::text AS bytes FROM gone`,
      [projectId, now, kForgetOwnRaw],
    );
    const first = await client.query<{ at: string | null }>(
      'SELECT min(expires_at)::text AS at FROM flagwire_tally_raw WHERE project_id = $1 AND environment = ANY($2::text[])',
      [projectId, scopes.map((s) => s.environment)],
    );
    const at = first.rows[0]!.at;
    raw = { bytes: Number(locked.rows[0]!.bytes), forgotten: Number(forgot.rows[0]!.bytes), firstExpiry: at === null ? null : Number(at) };
  }
  let rawEnd: Map<string, string> | null = null;
  if (touches.readsRawEnd === true) {
    // After the subjects' rows are locked: a batch of theirs that commits later takes later numbers.
    const found = await client.query<{ subject: Buffer; last: string }>(
      `SELECT subject, max(seq)::text AS last FROM flagwire_tally_raw
       WHERE project_id = $1 AND environment = $2 AND subject = ANY($3::bytea[]) GROUP BY subject`,
      [projectId, environment, [...names.keys()].map((hex) => Buffer.from(hex, 'hex'))],
    );
    rawEnd = new Map();
    for (const { subject, last } of found.rows) for (const name of names.get(subject.toString('hex'))!) rawEnd.set(name, last);
  }
  return { subjects, raw, rawEnd, metrics };
}

/** Whether a subject's state holds nothing: one made only to be locked, erased, or whose events were all refused. */
function isEmpty(state: SubjectState): boolean {
  return state.exposures.size === 0 && state.totals.size === 0;
}

/** A row's state; none for a row made only to be locked (no bytes). */
function unpack(state: Buffer): StoredSubject | undefined {
  return state.length === 0 ? undefined : (packr.unpack(state) as StoredSubject);
}

/** Writes a staged transaction's changes. */
async function write(client: pg.ClientBase, scope: TallyScope, staged: StagedTally): Promise<void> {
  const { projectId, environment } = scope;
  // By bytes: the last state written of a row is its state.
  const puts = new Map<string, Buffer>();
  const removes = new Set<string>();
  for (const [subject, read] of staged.loaded) {
    const state = staged.written.has(subject) ? staged.written.get(subject)! : read;
    const hex = Buffer.from(subject).toString('hex');
    // A subject left with nothing (erased; made only to be locked; its events all refused) keeps no row.
    if (state === null || isEmpty(state)) {
      removes.add(hex);
      puts.delete(hex);
    } else if (staged.written.has(subject)) {
      puts.set(hex, packr.pack(fromSubject(state)));
      removes.delete(hex);
    }
  }
  if (puts.size > 0)
    await client.query(
      `INSERT INTO flagwire_tally_subjects (project_id, environment, subject, state)
       SELECT $1, $2, u.subject, u.state FROM unnest($3::bytea[], $4::bytea[]) AS u(subject, state)
       ON CONFLICT (project_id, environment, subject) DO UPDATE SET state = EXCLUDED.state`,
      [projectId, environment, [...puts.keys()].map((hex) => Buffer.from(hex, 'hex')), [...puts.values()]],
    );
  if (removes.size > 0)
    await client.query('DELETE FROM flagwire_tally_subjects WHERE project_id = $1 AND environment = $2 AND subject = ANY($3::bytea[])', [
      projectId,
      environment,
      [...removes].map((hex) => Buffer.from(hex, 'hex')),
    ]);
  await writeUsage(client, scope, staged);
  // Each transaction adds to the rows of one slot, arms before sums and each in one sorted order, so
  // two transactions of a slot never wait for each other in a cycle.
  const slot = randomInt(kTallySlots);
  const arms = [...staged.armDeltas].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, arm]) => arm);
  if (arms.length > 0)
    await client.query(
      `INSERT INTO flagwire_tally_arms AS a (project_id, environment, slot, experiment, variant, subjects)
       SELECT $1, $2, $3, u.experiment, u.variant, u.subjects
       FROM unnest($4::bytea[], $5::bytea[], $6::bigint[]) WITH ORDINALITY AS u(experiment, variant, subjects, n) ORDER BY u.n
       ON CONFLICT (project_id, environment, experiment, variant, slot) DO UPDATE SET subjects = a.subjects + EXCLUDED.subjects`,
      [
        projectId,
        environment,
        slot,
        arms.map((a) => Buffer.from(a.experiment)),
        arms.map((a) => Buffer.from(a.variant)),
        arms.map((a) => a.subjects),
      ],
    );
  const sums = [...staged.sumDeltas].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, sum]) => sum);
  if (sums.length > 0) {
    const columns = kSumColumns.map((c, i) => `$${7 + i}::${c.endsWith('events') || c.endsWith('subjects') ? 'bigint' : 'numeric'}[]`);
    await client.query(
      `INSERT INTO flagwire_tally_sums AS s (project_id, environment, slot, experiment, variant, metric, ${kSumColumns.join(', ')})
       SELECT $1, $2, $3, u.experiment, u.variant, u.metric, ${kSumColumns.map((c) => `u.${c}`).join(', ')}
       FROM unnest($4::bytea[], $5::bytea[], $6::bytea[], ${columns.join(', ')})
         WITH ORDINALITY AS u(experiment, variant, metric, ${kSumColumns.join(', ')}, n) ORDER BY u.n
       ON CONFLICT (project_id, environment, experiment, variant, metric, slot) DO UPDATE SET
         ${kSumColumns.map((c) => `${c} = s.${c} + EXCLUDED.${c}`).join(', ')}`,
      [
        projectId,
        environment,
        slot,
        sums.map((s) => Buffer.from(s.experiment)),
        sums.map((s) => Buffer.from(s.variant)),
        sums.map((s) => Buffer.from(s.metric)),
        ...kSumFields.map((field) => sums.map((s) => String(s.sums[field]))),
      ],
    );
  }
  if (staged.put !== null)
    await client.query(
      `INSERT INTO flagwire_tally_batches (project_id, environment, batch_id, at, answer) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (project_id, environment, batch_id) DO UPDATE SET at = EXCLUDED.at, answer = EXCLUDED.answer`,
      [projectId, environment, Buffer.from(staged.put.batchId), staged.put.batch.at, JSON.stringify(staged.put.batch.answer)],
    );
  if (staged.forget !== null)
    // Rows another transaction holds are skipped, not waited for: the next transaction forgets them.
    await client.query(
      `DELETE FROM flagwire_tally_batches WHERE ctid IN (
         SELECT ctid FROM flagwire_tally_batches WHERE at < $1 ORDER BY at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [staged.forget.before, staged.forget.limit],
    );
}

/** Writes a staged transaction's raw events, and moves the counts of the limits by what it changed (step 5 above). */
async function writeUsage(client: pg.ClientBase, scope: TallyScope, staged: StagedTally): Promise<void> {
  const { projectId, environment } = scope;
  let bytes = -(staged.usage.raw?.forgotten ?? 0);
  const kept = staged.rawKept;
  if (kept.length > 0) {
    // In the order the batch counted them: the sequence numbers the rows take follow it.
    await client.query(
      `INSERT INTO flagwire_tally_raw (project_id, environment, stored_at, expires_at, subject, bytes, event)
       SELECT $1, $2, u.stored_at, u.expires_at, u.subject, u.bytes, u.event
       FROM unnest($3::bigint[], $4::bigint[], $5::bytea[], $6::bigint[], $7::text[])
         WITH ORDINALITY AS u(stored_at, expires_at, subject, bytes, event, n) ORDER BY u.n`,
      [
        projectId,
        environment,
        kept.map((r) => r.storedAt),
        kept.map((r) => r.expiresAt),
        kept.map((r) => Buffer.from(r.subject)),
        kept.map((r) => r.bytes),
        kept.map((r) => r.json),
      ],
    );
    bytes += kept.reduce((sum, r) => sum + r.bytes, 0);
  }
  // Never below none, as the tally file's counts.
  if (staged.subjectDelta !== 0)
    await client.query(
      `INSERT INTO flagwire_tally_subject_counts AS c (project_id, environment, subjects) VALUES ($1, $2, GREATEST(0, $3::bigint))
       ON CONFLICT (project_id, environment) DO UPDATE SET subjects = GREATEST(0, c.subjects + $3::bigint)`,
      [projectId, environment, staged.subjectDelta],
    );
  if (staged.metricsAdded.length > 0)
    await client.query(
      `INSERT INTO flagwire_tally_metric_names (project_id, environment, metric)
       SELECT $1, $2, unnest($3::bytea[]) ON CONFLICT DO NOTHING`,
      [projectId, environment, staged.metricsAdded.map((m) => Buffer.from(m))],
    );
  if (bytes !== 0)
    await client.query(
      `INSERT INTO flagwire_tally_raw_bytes AS r (project_id, bytes) VALUES ($1, GREATEST(0, $2::bigint))
       ON CONFLICT (project_id) DO UPDATE SET bytes = GREATEST(0, r.bytes + $2::bigint)`,
      [projectId, bytes],
    );
}

/**
 * One transaction's reads and writes in memory, on the rows PostgreSQL locked and read for it (one
 * scope's). Arms and sums are deltas: each reads as what the transaction has added to it so far (none
 * at first), and what is put is added to the stored rows; right because the tally only ever adds to
 * them (src/events/tally.ts moves them by differences and never decides on their values).
 */
class StagedTally implements TallyTxn {
  /** Subjects written: their state, or null when removed. */
  readonly written = new Map<string, SubjectState | null>();
  readonly armDeltas = new Map<string, { experiment: string; variant: string; subjects: number }>();
  readonly sumDeltas = new Map<string, { experiment: string; variant: string; metric: string; sums: MetricSums }>();
  put: { batchId: string; batch: CountedBatch } | null = null;
  forget: { before: number; limit: number } | null = null;
  /** Raw events to expire after the commit (PgTally.expireRaw). */
  expire: { now: number; limit: number } | null = null;
  subjectDelta = 0;
  readonly metricsAdded: string[] = [];
  readonly rawKept: { storedAt: number; expiresAt: number; subject: string; bytes: number; json: string }[] = [];

  constructor(
    private readonly scope: TallyScope,
    private readonly batchId: string | null,
    private readonly prior: CountedBatch | undefined,
    readonly loaded: ReadonlyMap<string, SubjectState>,
    readonly usage: Usage,
  ) {}

  batch(scope: TallyScope, batchId: string): CountedBatch | undefined {
    this.check(scope);
    if (batchId !== this.batchId) throw new Error('a staged tally transaction reads only the batch id it was opened for');
    return this.put?.batch ?? this.prior;
  }

  putBatch(scope: TallyScope, batchId: string, batch: CountedBatch): void {
    this.check(scope);
    if (batchId !== this.batchId) throw new Error('a staged tally transaction writes only the batch id it was opened for');
    this.put = { batchId, batch };
  }

  /** Forgotten as the transaction writes: none yet. */
  forgetBatches(before: number, limit: number): number {
    this.forget = { before, limit };
    return 0;
  }

  subject(scope: TallyScope, subject: string): SubjectState {
    this.check(scope);
    const written = this.written.get(subject);
    if (written !== undefined) return written ?? toSubject(undefined);
    const loaded = this.loaded.get(subject);
    if (loaded === undefined) throw new Error('a staged tally transaction reads only the subjects it was opened for');
    return loaded;
  }

  putSubject(scope: TallyScope, subject: string, state: SubjectState): void {
    this.check(scope);
    this.written.set(subject, state);
  }

  removeSubject(scope: TallyScope, subject: string): void {
    this.check(scope);
    this.written.set(subject, null);
  }

  arm(scope: TallyScope, experiment: string, variant: string): number {
    this.check(scope);
    return this.armDeltas.get(JSON.stringify([experiment, variant]))?.subjects ?? 0;
  }

  putArm(scope: TallyScope, experiment: string, variant: string, subjects: number): void {
    this.check(scope);
    this.armDeltas.set(JSON.stringify([experiment, variant]), { experiment, variant, subjects });
  }

  sums(scope: TallyScope, experiment: string, variant: string, metric: string): MetricSums | undefined {
    this.check(scope);
    const added = this.sumDeltas.get(JSON.stringify([experiment, variant, metric]));
    return added === undefined ? undefined : { ...added.sums };
  }

  putSums(scope: TallyScope, experiment: string, variant: string, metric: string, sums: MetricSums): void {
    this.check(scope);
    this.sumDeltas.set(JSON.stringify([experiment, variant, metric]), { experiment, variant, metric, sums: { ...sums } });
  }

  // The counts of the limits read as what was read (readUsage) and what this transaction moved them by:
  // one it was not opened to read is a fault of the caller's (TallyTouches says what to ask for).

  subjectCount(scope: TallyScope): number {
    this.check(scope);
    if (this.usage.subjects === null) throw new Error('a staged tally transaction of a batch already counted reads no count of subjects');
    return Math.max(0, this.usage.subjects + this.subjectDelta);
  }

  addSubjects(scope: TallyScope, delta: number): void {
    this.check(scope);
    this.subjectDelta += delta;
  }

  undeclaredMetrics(scope: TallyScope): string[] {
    this.check(scope);
    if (this.usage.metrics === null) throw new Error('a staged tally transaction reads undeclared metrics only when opened to (metrics)');
    return [...this.usage.metrics, ...this.metricsAdded];
  }

  putUndeclaredMetrics(scope: TallyScope, metrics: readonly string[]): void {
    this.check(scope);
    this.metricsAdded.push(...metrics);
  }

  putRawEvents(scope: TallyScope, events: readonly Omit<RawEvent, 'storedAt'>[], now: number, keepMs: number): void {
    this.check(scope);
    if (this.usage.raw === null) throw new Error('a staged tally transaction keeps raw events only when opened to (keepsRaw)');
    // Stored at the node's clock: their order is their sequence numbers', not their times'.
    for (const event of events) {
      const json = JSON.stringify({ ...event, storedAt: now } satisfies RawEvent);
      const bytes = rawEventBytes(scope, json, event.targetingKey);
      this.rawKept.push({ storedAt: now, expiresAt: now + keepMs, subject: event.targetingKey, bytes, json });
    }
  }

  /** Forgotten after the commit (PgTally.expireRaw): none yet. */
  forgetRawEvents(now: number, limit: number): number {
    this.expire = { now, limit };
    return 0;
  }

  rawEventsEnd(scope: TallyScope, subject: string): RawCursor | null {
    this.check(scope);
    if (this.usage.rawEnd === null)
      throw new Error('a staged tally transaction reads where raw events end only when opened to (readsRawEnd)');
    const last = this.usage.rawEnd.get(subject);
    return last === undefined ? null : [last];
  }

  rawBytes(projectId: string): number {
    const { raw } = this.usage;
    if (raw === null || projectId !== this.scope.projectId)
      throw new Error('a staged tally transaction reads the raw bytes it was opened to keep');
    const kept = this.rawKept.reduce((sum, r) => sum + r.bytes, 0);
    return Math.max(0, raw.bytes - raw.forgotten + kept);
  }

  firstRawExpiry(scopes: readonly TallyScope[]): number | null {
    const { raw } = this.usage;
    if (raw === null || scopes.some((s) => s.projectId !== this.scope.projectId))
      throw new Error('a staged tally transaction reads the first expiry of the raw events it was opened to keep');
    return raw.firstExpiry;
  }

  private check(scope: TallyScope): void {
    if (scope.projectId !== this.scope.projectId || scope.environment !== this.scope.environment)
      throw new Error('a staged tally transaction reads and writes the one scope it was opened for');
  }
}
