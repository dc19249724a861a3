// The tally in PostgreSQL (schema 3: migrations.ts), for nodes that share a database: the tally file's
// records (src/store/tally-file.ts) in tables every node reads and writes, so that a subject's first
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
//   3. the caller's function, synchronous, on those rows in memory (StagedTally): the same code that
//      counts into the tally file.
//   4. its writes: subjects put or deleted, the batch's answer, old batch ids forgotten; and the arms'
//      and sums' deltas added (`x = x + delta`) to the rows of one slot of kTallySlots, picked per
//      transaction: sums are commutative, so any slot is right, and transactions of any node rarely
//      wait for one another on a hot sum. The statistics sum the slots.
// A node killed mid-transaction leaves nothing (PostgreSQL rolls back a transaction whose connection is
// gone, and frees its locks); what was answered was committed; a batch id's answer is in the same
// transaction as its counts, so a batch retried at any node is counted once.
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
  type StoredSubject,
  type SubjectState,
  type TallyScope,
  type TallyTxn,
  toSubject,
} from '../tally-file.js';
import { migrate } from './migrate.js';
import { kIdleInWriteMs, newPool } from './pg-system.js';

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

/** What a transaction will read: the batch id it counts under, if any, and every subject it touches. */
export interface TallyTouches {
  readonly batchId: string | null;
  readonly subjects: readonly string[];
}

const kUnavailable =
  'PostgreSQL, where events are counted, cannot be reached; nothing of this request was counted. Retry shortly (a batch under the same batch id).';
const kCommitUnknown =
  'PostgreSQL, where events are counted, failed while committing this request, and whether it was counted cannot be known yet. A batch sent again under its batch id is counted once.';

export class PgTally {
  private migrated: Promise<void> | null = null;

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
      return result;
    } catch (err) {
      client.release(err as Error);
      // Committed or not, PostgreSQL knows: the answer is what it says (committed() throws when it cannot be asked).
      if (await this.committed(xid)) return result;
      throw new FlagwireError('STORE_UNAVAILABLE', kUnavailable, { cause: err });
    }
  }

  /** An experiment's arms and sums, each summed over the slots, variants and metrics in byte order. */
  async experiment(scope: TallyScope, experiment: string): Promise<ExperimentTally> {
    await this.ready();
    const where = [scope.projectId, scope.environment, Buffer.from(experiment)];
    try {
      const arms = await this.pool.query<{ variant: Buffer; subjects: string }>(
        `SELECT variant, sum(subjects)::text AS subjects FROM flagwire_tally_arms
         WHERE project_id = $1 AND environment = $2 AND experiment = $3 GROUP BY variant ORDER BY variant`,
        where,
      );
      const sums = await this.pool.query<Record<'variant' | 'metric', Buffer> & Record<(typeof kSumColumns)[number], string>>(
        `SELECT variant, metric, ${kSumColumns.map((c) => `sum(${c})::text AS ${c}`).join(', ')} FROM flagwire_tally_sums
         WHERE project_id = $1 AND environment = $2 AND experiment = $3 GROUP BY variant, metric ORDER BY variant, metric`,
        where,
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

  close(): Promise<void> {
    return this.pool.end();
  }

  /** The schema migrated (once per pool: the node's store has usually done it already). */
  private ready(): Promise<void> {
    this.migrated ??= (async () => {
      const client = await this.pool.connect();
      try {
        await migrate(client);
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
      return { xid, staged: new StagedTally(scope, batchId, { at: Number(row.at), answer: JSON.parse(row.answer) }, loaded) };
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
  return { xid, staged: new StagedTally(scope, batchId, undefined, loaded) };
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
    if (state === null || (state.exposures.size === 0 && state.totals.size === 0)) {
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

  constructor(
    private readonly scope: TallyScope,
    private readonly batchId: string | null,
    private readonly prior: CountedBatch | undefined,
    readonly loaded: ReadonlyMap<string, SubjectState>,
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

  // Raw events are kept in the tally file only, and the storage limits are the tally file's: a node on
  // PostgreSQL keeps no raw event and counts no subjects (src/events/events-thread.ts passes it neither
  // retention nor limits, docs/events.md: Raw events). So nothing expires or is erased here, a count of
  // subjects is not kept, and what only retention or a limit would ask is a fault of the caller's.

  subjectCount(): number {
    throw new Error('a node on PostgreSQL keeps no count of subjects: it is given no storage limits');
  }

  addSubjects(): void {}

  putRawEvents(): void {
    throw new Error('a node on PostgreSQL keeps no raw events: it is given no retention');
  }

  forgetRawEvents(): number {
    return 0;
  }

  removeRawEvents(): number {
    return 0;
  }

  rawBytes(): number {
    throw new Error('a node on PostgreSQL keeps no raw events: it is given no storage limits');
  }

  firstRawExpiry(): number | null {
    throw new Error('a node on PostgreSQL keeps no raw events: it is given no storage limits');
  }

  private check(scope: TallyScope): void {
    if (scope.projectId !== this.scope.projectId || scope.environment !== this.scope.environment)
      throw new Error('a staged tally transaction reads and writes the one scope it was opened for');
  }
}
