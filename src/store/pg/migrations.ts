// PostgreSQL's schema, as versioned migrations: each runs once, in order, in one transaction with the
// version it brings (migrate.ts). Append a new entry for a change; never edit one that has shipped.
//
//   flagwire_meta      one row: the database's id (a node's LMDB copy records which database it
//                      follows) and `revision`, the last committed revision. Every write transaction
//                      takes this row FOR UPDATE: that serialises writers of every node, and the
//                      revision it increments follows commit order with no gaps.
//   flagwire_records   every current record (kind, key) -> msgpack value: what a full copy reads.
//   flagwire_changes   revision -> the change set it committed (msgpack): what followers apply, each
//                      record written again as its changed fields (src/store/record-patch.ts), which a
//                      copy at the revision before applies (schema 2; a change set of schema 1 holds
//                      whole records, which copies apply as ever); the writer's random write_id tells
//                      it, after a connection lost during COMMIT, whether its commit happened.
//                      Old revisions are pruned, by count (kChangeRetention in pg-system.ts) and by
//                      bytes (FLAGWIRE_CHANGE_LOG_BYTES, counted in flagwire_meta.change_bytes, schema
//                      2); a node behind them makes a full copy.
// A capability's tables are made by the migrations it declares (pgMigrations: side-storage.ts), applied
// with these: the versions are one sequence, whoever declares them, so a new migration of any owner
// takes the next free number, and a database's history (flagwire_migrations) reads the same.
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The store's own migrations; with every owner's, a StoreLayout's `migrations` (side-storage.ts). */
export const kStoreMigrations: readonly Migration[] = [
  {
    version: 1,
    name: 'records, change log and revision',
    sql: `
      CREATE TABLE flagwire_meta (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        database_id text NOT NULL DEFAULT md5(random()::text || clock_timestamp()::text),
        revision bigint NOT NULL DEFAULT 0
      );
      INSERT INTO flagwire_meta DEFAULT VALUES;
      CREATE TABLE flagwire_records (
        kind text NOT NULL,
        key text NOT NULL,
        value bytea NOT NULL,
        PRIMARY KEY (kind, key)
      );
      CREATE TABLE flagwire_changes (
        revision bigint PRIMARY KEY,
        committed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        write_id text NOT NULL,
        changes bytea NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'change log bytes',
    sql: `
      ALTER TABLE flagwire_meta ADD COLUMN change_bytes bigint NOT NULL DEFAULT 0;
      UPDATE flagwire_meta SET change_bytes = (SELECT coalesce(sum(octet_length(changes)), 0) FROM flagwire_changes);
    `,
  },
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
