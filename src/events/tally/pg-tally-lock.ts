// Steps 1 to 3 of a transaction of PostgreSQL's tally (pg-tally.ts): the batch id locked and its answer
// read, the subjects' rows made where absent, locked and read, and the storage limits' counts read, into
// the transaction in memory (StagedTally, pg-tally-staged.ts).
import type pg from 'pg';
import { murmur3String } from '../../bytes/murmur3.js';
import { isEmpty, kNoUsage, StagedTally, type Usage, unpackSubject } from './pg-tally-staged.js';
import { type SubjectState, type TallyScope, toSubject } from './tally-file.js';

/** pg_advisory_xact_lock's first key for batch ids ("flat" in ASCII), so other applications' locks do not collide. */
const kBatchLock = 0x666c6174;
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

/** Locks and reads what `touches` names (steps 1 and 2), into a staged transaction; with the transaction's id. */
export async function lockAndRead(
  client: pg.ClientBase,
  scope: TallyScope,
  touches: TallyTouches,
): Promise<{ xid: string; staged: StagedTally }> {
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
      for (const name of names.get(subject.toString('hex'))!) loaded.set(name, toSubject(unpackSubject(state)));
    // A row an erasure deleted while this waited for its lock is not returned: made and locked again.
    missing = missing.filter((hex) => !loaded.has(names.get(hex)![0]!));
  }
  const usage = await readUsage(client, scope, touches, loaded, names);
  return { xid, staged: new StagedTally(scope, batchId, undefined, loaded, usage) };
}

/**
 * Reads the counts a limit is decided on (step 3), after the subjects' rows are locked: the
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
