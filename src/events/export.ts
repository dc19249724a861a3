// Raw events exported (docs/events.md: Raw events): a project environment's kept events stored in a
// time range, in the order they were counted, as JSON lines or as Parquet. Both are read from the
// tally file, or PostgreSQL's tally, a page at a time, so memory holds one page whatever the range:
// - JSON lines go out page by page as they are read. A node reads and writes each page as JSON lines on
//   its events thread (event-counter.ts), the command line in its own thread (localJsonLines): the front
//   end's thread, which answers evaluations, only sends the bytes.
// - Parquet is written by DuckDB (@duckdb/node-api), the well-kept writer of the format: the JSON lines
//   go to a scratch file in the data dir, DuckDB copies them into a Parquet file in one pass within a
//   memory limit of its own, and that file is sent a chunk at a time; the scratch is removed however
//   the export ends (export-scratch.ts). DuckDB is imported here, on the first Parquet
//   export, never at start-up: its import is costly and no other route needs it. It is an optional
//   dependency: without it a Parquet export is refused by the package's name (parquetWriter).
import { createReadStream, createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { FlagwireError } from '../errors.js';
import type { ExportScratch } from './export-scratch.js';
import type { RawCursor, RawEventPages, RawRange, TallyScope } from './tally/tally-file.js';

/**
 * Raw events read per page: at most some 300 KiB of them (an event with its details full is about 3
 * KiB), what one reply of the events thread carries and the front end sends in one turn of its event
 * loop (src/http/streamed-body.ts). It also bounds how long a page holds the events thread, whose
 * batches wait behind it.
 */
const kPageEvents = 100;
/** DuckDB's memory while it writes Parquet: it spills to the scratch dir past it. */
const kDuckDbMemory = '256MB';
/** The Parquet file is sent in chunks of this size. */
const kFileChunkBytes = 256 * 1024;

export type ExportFormat = 'jsonl' | 'parquet';

/** An export's format as asked for (the route's `format`, the command line's `--format`): jsonl when absent. */
export function exportFormat(raw: string | null | undefined): ExportFormat {
  if (raw === null || raw === undefined || raw === 'jsonl') return 'jsonl';
  if (raw === 'parquet') return 'parquet';
  throw new FlagwireError('INVALID_REQUEST', `format must be jsonl or parquet, not "${raw}"`);
}

/** A time of an export's range: Unix ms, or an ISO 8601 time; `fallback` when absent. */
export function timeParam(name: string, raw: string | null | undefined, fallback: number): number {
  if (raw === null || raw === undefined) return fallback;
  const ms = /^[0-9]{1,15}$/.test(raw) ? Number(raw) : /^[0-9]{4}-/.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(ms)) throw new FlagwireError('INVALID_REQUEST', `${name} must be Unix ms or an ISO 8601 time, not "${raw}"`);
  return ms;
}

/** One page of an export as JSON lines, and where the next one starts (null: this one was the last). */
export interface JsonLinesPage {
  /** Its own ArrayBuffer, never a slice of a shared pool: it is moved, not copied, across threads. */
  readonly bytes: Uint8Array;
  readonly last: RawCursor | null;
}

/** Where an export's JSON lines come from, a page at a time: made where the raw events are read. */
export interface JsonLinesPages {
  jsonLinesPage(scope: TallyScope, range: RawRange, after: RawCursor | null): Promise<JsonLinesPage>;
}

const kUtf8 = new TextEncoder();

/** The page of `pages` after `after` in `scope` and `range`, written as JSON lines. */
export async function jsonLinesPage(
  pages: RawEventPages,
  scope: TallyScope,
  range: RawRange,
  after: RawCursor | null,
): Promise<JsonLinesPage> {
  const page = await pages.rawEvents(scope, range, after, kPageEvents);
  return { bytes: kUtf8.encode(page.events.map((event) => `${JSON.stringify(event)}\n`).join('')), last: page.last };
}

/** JSON lines read and written in this thread, from `pages` (the command line's export). */
export function localJsonLines(pages: RawEventPages): JsonLinesPages {
  return { jsonLinesPage: (scope, range, after) => jsonLinesPage(pages, scope, range, after) };
}

/** The raw events of `scope` in `range` as JSON lines, a page per chunk; none when `pages` is null (no event ever counted). */
export async function* jsonLines(pages: JsonLinesPages | null, scope: TallyScope, range: RawRange): AsyncGenerator<Uint8Array> {
  if (pages === null) return;
  let after: RawCursor | null = null;
  do {
    const page = await pages.jsonLinesPage(scope, range, after);
    if (page.bytes.length > 0) yield page.bytes;
    after = page.last;
  } while (after !== null);
}

/** The same events as one Parquet file, written by DuckDB in a scratch folder of `scratches`. */
export async function* parquet(
  pages: JsonLinesPages | null,
  scope: TallyScope,
  range: RawRange,
  scratches: ExportScratch,
): AsyncGenerator<Uint8Array> {
  const scratch = await scratches.make();
  try {
    const lines = join(scratch, 'events.jsonl');
    const out = createWriteStream(lines);
    for await (const chunk of jsonLines(pages, scope, range)) if (!out.write(chunk)) await once(out, 'drain');
    out.end();
    await finished(out);
    const written = join(scratch, 'events.parquet');
    await writeParquet(lines, written, scratch);
    yield* createReadStream(written, { highWaterMark: kFileChunkBytes });
  } finally {
    await scratches.remove(scratch);
  }
}

/** The columns of an export, in its order (docs/events.md: Raw events). */
const kColumns = {
  kind: 'VARCHAR',
  key: 'VARCHAR',
  targetingKey: 'VARCHAR',
  variant: 'VARCHAR',
  value: 'DOUBLE',
  details: 'JSON',
  timestamp: 'BIGINT',
  storedAt: 'BIGINT',
};

/** DuckDB's package: an optional dependency, which a production install may leave out. */
const kDuckDbPackage = '@duckdb/node-api';
let duckDb: Promise<typeof import('@duckdb/node-api')> | undefined;

/**
 * DuckDB, imported on the first Parquet export; refused by the package's name where the install left it
 * out (scripts/install-production.sh --omit-optional), before an export starts to answer.
 */
export function parquetWriter(): Promise<typeof import('@duckdb/node-api')> {
  duckDb ??= import(kDuckDbPackage).catch((err: unknown) => {
    duckDb = undefined;
    if ((err as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw new FlagwireError(
      'INVALID_REQUEST',
      `Parquet exports need the optional package ${kDuckDbPackage}, which this install left out: install it, or ask for format jsonl`,
    );
  });
  return duckDb;
}

async function writeParquet(lines: string, written: string, scratch: string): Promise<void> {
  const { DuckDBInstance } = await parquetWriter();
  const db = await DuckDBInstance.create(':memory:', { threads: '1', memory_limit: kDuckDbMemory, temp_directory: scratch });
  try {
    const connection = await db.connect();
    try {
      const columns = Object.entries(kColumns)
        .map(([name, type]) => `${name}: '${type}'`)
        .join(', ');
      await connection.run(
        `COPY (SELECT * FROM read_json(${quoted(lines)}, format = 'newline_delimited', columns = {${columns}})) TO ${quoted(written)} (FORMAT parquet)`,
      );
    } finally {
      connection.closeSync();
    }
  } finally {
    db.closeSync();
  }
}

/** A path as an SQL string literal. */
function quoted(path: string): string {
  return `'${path.replaceAll("'", "''")}'`;
}
