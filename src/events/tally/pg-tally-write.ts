// Step 5 of a transaction of PostgreSQL's tally (pg-tally.ts): what the transaction in memory
// (StagedTally, pg-tally-staged.ts) changed, written before COMMIT: subjects put or deleted, raw events
// kept, the limits' counts moved, the arms' and sums' deltas added to one slot's rows, the batch's
// answer, old batch ids forgotten.
import { randomInt } from 'node:crypto';
import type pg from 'pg';
import { isEmpty, packSubject, type StagedTally } from './pg-tally-staged.js';
import type { MetricSums, TallyScope } from './tally-file.js';

/** Rows per arm and per sum that transactions add to: contention on one is 1 in this many. */
const kTallySlots = 16;

/** The columns of a sums row, in MetricSums' order. */
export const kSumColumns = [
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

/** Writes a staged transaction's changes (step 5). */
export async function writeStaged(client: pg.ClientBase, scope: TallyScope, staged: StagedTally): Promise<void> {
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
      puts.set(hex, packSubject(state));
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

/** Writes a staged transaction's raw events, and moves the counts of the limits by what it changed (step 5). */
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
