// The events capability's storage, as it declares it (src/events/capability.ts: sideFiles,
// pgMigrations): the tally file in the data dir (tally-file.ts keeps its key layouts) and the tally's
// PostgreSQL tables (pg-tally.ts reads and writes them). Plain data, loaded with the declaration.
//
//   flagwire_tally_*   what clients report of their subjects (schema 3; pg-tally.ts), the tally file's
//                      records shared by every node: batches counted (batch id -> answer, forgotten
//                      after a day), subjects (each one's state, msgpack), and the arms and sums as
//                      per-slot rows each transaction adds its deltas to. Names a client chose are
//                      bytea (UTF-8): any string, NUL included, is a key, in the byte order LMDB keeps.
//                      Never in the change log: nodes read these tables, never copy them.
//                      Schema 4 adds what the storage limits and raw events need (pg-tally.ts): raw
//                      events (each in its project environment under a sequence number: the order
//                      they were counted in), the count of subjects per project environment and the
//                      bytes of raw events per project, each one row that a batch locks to decide on it.
//                      Schema 5 adds the metric names a project environment counts that no experiment
//                      declared (tally.ts bounds them), added under its subjects' count's lock.
// Their versions and names are those every database migrated before the tally was the capability's
// records in its history (flagwire_migrations): never renumbered, never edited.
import type { Migration } from '../../store/pg/migrations.js';
import type { SideFile } from '../../store/side-storage.js';

/** The tally file's databases (tally-file.ts says what each holds). */
export type TallyDatabase =
  | 'batches'
  | 'batchExpiry'
  | 'subjects'
  | 'arms'
  | 'sums'
  | 'metricNames'
  | 'usage'
  | 'raw'
  | 'rawExpiry'
  | 'rawSubjects';

/** The tally file: tally.mdb in the data dir. */
export const kTallyFile: SideFile<TallyDatabase> = {
  file: 'tally.mdb',
  databases: ['batches', 'batchExpiry', 'subjects', 'arms', 'sums', 'metricNames', 'usage', 'raw', 'rawExpiry', 'rawSubjects'],
};

/** The tally's tables in PostgreSQL. */
export const kTallyMigrations: readonly Migration[] = [
  {
    version: 3,
    name: 'event tally',
    sql: `
      CREATE TABLE flagwire_tally_batches (
        project_id text NOT NULL,
        environment text NOT NULL,
        batch_id bytea NOT NULL,
        at bigint NOT NULL,
        answer text NOT NULL,
        PRIMARY KEY (project_id, environment, batch_id)
      );
      CREATE INDEX flagwire_tally_batches_at ON flagwire_tally_batches (at);
      CREATE TABLE flagwire_tally_subjects (
        project_id text NOT NULL,
        environment text NOT NULL,
        subject bytea NOT NULL,
        state bytea NOT NULL,
        PRIMARY KEY (project_id, environment, subject)
      );
      CREATE TABLE flagwire_tally_arms (
        project_id text NOT NULL,
        environment text NOT NULL,
        experiment bytea NOT NULL,
        variant bytea NOT NULL,
        slot smallint NOT NULL,
        subjects bigint NOT NULL,
        PRIMARY KEY (project_id, environment, experiment, variant, slot)
      );
      CREATE TABLE flagwire_tally_sums (
        project_id text NOT NULL,
        environment text NOT NULL,
        experiment bytea NOT NULL,
        variant bytea NOT NULL,
        metric bytea NOT NULL,
        slot smallint NOT NULL,
        events bigint NOT NULL,
        subjects bigint NOT NULL,
        sum numeric NOT NULL,
        sum_of_squares numeric NOT NULL,
        covariate_events bigint NOT NULL,
        covariate_subjects bigint NOT NULL,
        covariate_sum numeric NOT NULL,
        covariate_sum_of_squares numeric NOT NULL,
        sum_of_products numeric NOT NULL,
        PRIMARY KEY (project_id, environment, experiment, variant, metric, slot)
      );
    `,
  },
  {
    version: 4,
    name: 'raw events and storage usage',
    sql: `
      CREATE SEQUENCE flagwire_tally_raw_seq;
      CREATE TABLE flagwire_tally_raw (
        project_id text NOT NULL,
        environment text NOT NULL,
        seq bigint NOT NULL DEFAULT nextval('flagwire_tally_raw_seq'),
        event text NOT NULL,
        subject bytea NOT NULL,
        bytes bigint NOT NULL,
        stored_at bigint NOT NULL, expires_at bigint NOT NULL,
        PRIMARY KEY (project_id, environment, seq)
      );
      CREATE INDEX flagwire_tally_raw_expiry ON flagwire_tally_raw (expires_at);
      CREATE INDEX flagwire_tally_raw_project_expiry ON flagwire_tally_raw (project_id, expires_at);
      CREATE INDEX flagwire_tally_raw_subject ON flagwire_tally_raw (project_id, environment, subject);
      CREATE TABLE flagwire_tally_subject_counts (
        project_id text NOT NULL,
        environment text NOT NULL,
        subjects bigint NOT NULL,
        PRIMARY KEY (project_id, environment)
      );
      INSERT INTO flagwire_tally_subject_counts (project_id, environment, subjects)
        SELECT project_id, environment, count(*) FROM flagwire_tally_subjects GROUP BY project_id, environment;
      CREATE TABLE flagwire_tally_raw_bytes (
        project_id text PRIMARY KEY,
        bytes bigint NOT NULL
      );
    `,
  },
  {
    version: 5,
    name: 'undeclared metric names',
    sql: `
      CREATE TABLE flagwire_tally_metric_names (
        project_id text NOT NULL,
        environment text NOT NULL,
        metric bytea NOT NULL,
        PRIMARY KEY (project_id, environment, metric)
      );
    `,
  },
];
