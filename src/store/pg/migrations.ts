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
];
