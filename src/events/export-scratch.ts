// A Parquet export's scratch folders (export.ts), one per export in the data dir, and their removal
// however the export ends: by the export itself when it ends, fails or its client leaves; by the node's
// close for one its shutdown cut (the process exits with the export suspended mid-file, its own removal
// never run); and, for one whose process was killed (kill -9, the shutdown's deadline), by the next start
// of a node on that data dir. A folder is named for its process, `.export-<pid>.<start time>-XXXXXX`, so
// a start removes only those of processes that ended: several nodes may share a data dir, and the command
// line's `events export` writes its scratch there too. A dot name: the store's check for files Flagwire
// did not write (src/store/open.ts) passes over it, so neither a running export nor one a kill -9 left
// makes a node, or a command, refuse the data dir.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { NodeServices } from '../capability/background-work.js';
import { FlagwireError } from '../errors.js';
import { isRunning, startTimeOf } from '../store/process-life.js';

/** This process's folders' prefix; its start time is '' off Linux (then a reused pid keeps a leftover until that process ends). */
const kOwnPrefix = `.export-${process.pid}.${startTimeOf(process.pid) ?? ''}-`;
/** A scratch folder's name, as mkdtemp makes it: its process's pid and start time, then six random characters. */
const kScratchName = /^\.export-([1-9][0-9]*)\.([0-9]*)-[A-Za-z0-9]{6}$/;
/** Retried while a folder is not yet empty: DuckDB may still be writing in one the shutdown removes. */
const kRemove = { recursive: true, force: true, maxRetries: 3 } as const;

/** The scratch folders of one node's (or one command's) exports in `dataDir`. */
export class ExportScratch {
  private readonly live = new Set<string>();
  private closed = false;

  constructor(private readonly dataDir: string) {}

  /** A new, empty scratch folder; refused once closed (an export the shutdown cut before it began). */
  async make(): Promise<string> {
    this.refuseIfClosed();
    const dir = await mkdtemp(join(this.dataDir, kOwnPrefix));
    this.live.add(dir);
    // Closed while it was made: close() did not see it.
    if (this.closed) {
      await this.remove(dir);
      this.refuseIfClosed();
    }
    return dir;
  }

  /** Removes `dir` and all it holds. */
  async remove(dir: string): Promise<void> {
    this.live.delete(dir);
    await rm(dir, kRemove);
  }

  /** At shutdown, past the drain: removes the folders of exports still running (the process exits before they end). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.live].map((dir) => this.remove(dir)));
  }

  private refuseIfClosed(): void {
    if (this.closed) throw cutByShutdown();
  }
}

/** The error an export cut by its node's shutdown ends with: a 503 before its first byte, its connection closed after. */
export function cutByShutdown(): FlagwireError {
  return new FlagwireError(
    'SERVER_BUSY',
    'This node is shutting down, and its export was cut before its end (its drain bound passed): export again, from another node or once this one is back.',
  );
}

/** A node's start: removes what ended processes left, and runs nothing on (null). */
export async function sweepLeftoverScratch(node: NodeServices): Promise<null> {
  const removed = await removeLeftoverScratch(node.config.dataDir);
  if (removed.length > 0) node.log.info({ removed }, 'removed export scratch folders left by processes that ended');
  return null;
}

/** Removes the scratch folders in `dataDir` left by processes that ended; returns their names. Nothing else there is touched. */
export async function removeLeftoverScratch(dataDir: string): Promise<string[]> {
  const removed: string[] = [];
  for (const entry of await readdir(dataDir, { withFileTypes: true })) {
    const owner = kScratchName.exec(entry.name);
    if (owner === null || !entry.isDirectory() || isRunning(Number(owner[1]), owner[2]!)) continue;
    await rm(join(dataDir, entry.name), kRemove);
    removed.push(entry.name);
  }
  return removed;
}
