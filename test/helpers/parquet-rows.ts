// A Parquet export read back with DuckDB (the writer src/events/export.ts uses): its rows as the JSON
// lines export gives them, so a test compares the two formats whole.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { scratchDir } from './scratch-dir.js';

/** The rows of the Parquet file `bytes`, each as an exported event's JSON line reads. */
export async function parquetRows(bytes: Uint8Array): Promise<Record<string, unknown>[]> {
  const file = join(scratchDir('flagwire-parquet-'), 'events.parquet');
  writeFileSync(file, bytes);
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const rows = (
    await c.runAndReadAll(`SELECT kind, key, targetingKey, variant, value, details, timestamp, storedAt FROM '${file}'`)
  ).getRowObjectsJson();
  c.closeSync();
  db.closeSync();
  return rows.map((row) => ({
    ...row,
    details: row.details === null ? null : JSON.parse(String(row.details)),
    timestamp: Number(row.timestamp),
    storedAt: Number(row.storedAt),
  }));
}
