// The provider's snapshot file (src/provider/snapshot-file.ts): written atomically (a reader sees the old
// file or the new one, never part of either, and no temporary file stays), readable back with its
// revision, private to its owner, and refused when it is not a whole, valid snapshot.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { readSnapshotFile, type SavedSnapshot, writeSnapshotFile } from '../../src/provider/snapshot-file.js';
import type { Snapshot } from '../../src/model/snapshot-shape.js';
import { tempDir } from '../helpers/scratch-dir.js';

function snapshot(revision: number, flags: number): Snapshot {
  return {
    projectId: 'prj_1',
    environment: null,
    revision,
    audiencesAllowed: true,
    audiencesUntil: null,
    audiences: [],
    flags: Array.from({ length: flags }, (_, i) => ({
      id: `flg_${i}`,
      name: `flag-${i}`,
      updatedAt: revision,
      state: { enabled: true, trafficPercentage: 50, audienceId: null, cohorts: Array.from({ length: 50 }, (_, c) => `cohort-${c}`) },
    })),
  };
}

t.test('written and read back with its revision, mode 0600, no temporary file left', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'snapshot.json');
  const saved: SavedSnapshot = { savedAt: 1234, etag: '"snapshot-1"', snapshot: snapshot(42, 3) };
  await writeSnapshotFile(path, saved);
  t.same(await readSnapshotFile(path), saved);
  t.equal(JSON.parse(readFileSync(path, 'utf8')).snapshot.revision, 42);
  t.equal(statSync(path).mode & 0o777, 0o600, 'it holds cohort lists');
  t.same(readdirSync(dir), ['snapshot.json']);
});

t.test('a reader never sees a partial file while new ones are written over it', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'snapshot.json');
  // Large enough (some MB) that a write in place would be seen half done.
  await writeSnapshotFile(path, { savedAt: 0, etag: null, snapshot: snapshot(1, 2000) });
  let writing = true;
  const reads: number[] = [];
  const reader = (async () => {
    while (writing) {
      const text = readFileSync(path, 'utf8');
      reads.push(JSON.parse(text).snapshot.revision);
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  for (let revision = 2; revision <= 20; revision++)
    await writeSnapshotFile(path, { savedAt: revision, etag: null, snapshot: snapshot(revision, 2000) });
  writing = false;
  await reader;
  t.ok(reads.length > 0);
  t.ok(
    reads.every((r, i) => r >= 1 && r <= 20 && (i === 0 || r >= reads[i - 1]!)),
    'each read a whole file, in order',
  );
  t.equal((await readSnapshotFile(path))?.snapshot.revision, 20);
  t.same(readdirSync(dir), ['snapshot.json'], 'no temporary file left');
});

t.test('a failed write leaves the old file as it was, and no temporary file', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'snapshot.json');
  await writeSnapshotFile(path, { savedAt: 1, etag: null, snapshot: snapshot(5, 1) });
  // A cyclic value cannot be serialised: the write fails after the temporary file was opened.
  const cyclic = snapshot(6, 1) as Snapshot & { self?: unknown };
  cyclic.self = cyclic;
  await t.rejects(writeSnapshotFile(path, { savedAt: 2, etag: null, snapshot: cyclic }));
  t.equal((await readSnapshotFile(path))?.snapshot.revision, 5);
  t.same(readdirSync(dir), ['snapshot.json']);
});

t.test('no file, a truncated one, another shape: none is used', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'snapshot.json');
  t.equal(await readSnapshotFile(path), null, 'none');
  await writeSnapshotFile(path, { savedAt: 1, etag: null, snapshot: snapshot(5, 3) });
  const whole = readFileSync(path, 'utf8');
  writeFileSync(path, whole.slice(0, whole.length / 2));
  t.equal(await readSnapshotFile(path), null, 'truncated');
  writeFileSync(path, JSON.stringify({ savedAt: 1, snapshot: { ...snapshot(5, 1), flags: 'nope' } }));
  t.equal(await readSnapshotFile(path), null, 'not a snapshot');
  writeFileSync(path, JSON.stringify({ snapshot: snapshot(5, 1) }));
  t.equal(await readSnapshotFile(path), null, 'no savedAt');
});
