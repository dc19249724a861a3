// The provider's copy of its last snapshot on disk, so that an application restarted while the server is
// unreachable starts from it (docs/provider.md). Written atomically: the whole file goes to a temporary
// name beside it, is flushed to disk, and is renamed over the old one, so a reader (or a crash at any
// point) sees the old file or the new one, never a part of either.
//
//   {"savedAt": <Unix ms>, "etag": "<the server's ETag>", "snapshot": {...the server's snapshot, its revision in it...}}
import { randomBytes } from 'node:crypto';
import { open, readFile, rename, rm } from 'node:fs/promises';
import type { Snapshot } from '../model/snapshot-shape.js';
import { isSnapshot } from './snapshot-check.js';

export interface SavedSnapshot {
  /** When it was written (Unix ms): its age is what PROVIDER_STALE reports. */
  readonly savedAt: number;
  /** The server's ETag for it (null: none): a restart asks If-None-Match with it. */
  readonly etag: string | null;
  readonly snapshot: Snapshot;
}

/** Writes `saved` to `path` atomically (temp file, fsync, rename). */
export async function writeSnapshotFile(path: string, saved: SavedSnapshot): Promise<void> {
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const file = await open(temp, 'w', 0o600);
    try {
      await file.writeFile(JSON.stringify(saved));
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

/** The snapshot saved at `path`; null when there is none, or when it is not a whole, valid snapshot file. */
export async function readSnapshotFile(path: string): Promise<SavedSnapshot | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return null;
  }
  try {
    const saved = JSON.parse(text) as { savedAt?: unknown; etag?: unknown; snapshot?: unknown };
    if (typeof saved.savedAt !== 'number' || !isSnapshot(saved.snapshot)) return null;
    return { savedAt: saved.savedAt, etag: typeof saved.etag === 'string' ? saved.etag : null, snapshot: saved.snapshot };
  } catch {
    return null;
  }
}
