// The clean-stop mark (src/store/intact-mark.ts): it vouches for the data file only as the stop left it,
// and only once; taken away by the start that reads it, whatever it said.
import {
  closeSync,
  copyFileSync,
  existsSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  truncateSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import t from 'tap';
import { kIntactMarkName, markIntact, takeIntactMark } from '../../src/store/intact-mark.js';
import { tempDir } from '../helpers/scratch-dir.js';

/** A small LMDB data file in a directory of its own; its path. */
async function dataFile(t: { teardown(fn: () => void): void }): Promise<string> {
  const path = join(tempDir(t), 'flagwire.mdb');
  const db = open({ path });
  for (let i = 0; i < 100; i++) await db.put(`key-${i}`, { value: i });
  await db.close();
  return path;
}

const markOf = (file: string) => join(file, '..', kIntactMarkName);

t.test('a mark vouches for the file as it was left, once: the start that takes it removes it', async (t) => {
  const file = await dataFile(t);
  t.equal(takeIntactMark(file), false, 'no clean stop yet: no mark, nothing vouched for');
  markIntact(file);
  t.ok(existsSync(markOf(file)), 'the clean stop leaves a mark beside the file');
  t.equal(takeIntactMark(file), true, 'the file untouched since: vouched for');
  t.notOk(existsSync(markOf(file)), 'and the mark is gone');
  t.equal(takeIntactMark(file), false, 'a second start (after a crash of the first) is not vouched for');
});

t.test('anything done to the file after the clean stop voids the mark, and the mark is removed all the same', async (t) => {
  const changes: [string, (file: string) => void][] = [
    [
      'bytes overwritten in place, same size',
      (file) => {
        const fd = openSync(file, 'r+');
        writeSync(fd, Buffer.from('garbage!'), 0, 8, statSync(file).size - 4096);
        closeSync(fd);
      },
    ],
    ['cut short', (file) => truncateSync(file, statSync(file).size - 4096)],
    [
      'replaced by a copy of itself, its times set back',
      (file) => {
        const { atime, mtime } = statSync(file);
        copyFileSync(file, `${file}.copy`);
        utimesSync(`${file}.copy`, atime, mtime);
        renameSync(`${file}.copy`, file);
      },
    ],
    [
      'rewritten whole with the same bytes, its times set back',
      (file) => {
        const { atime, mtime } = statSync(file);
        writeFileSync(file, readFileSync(file));
        utimesSync(file, atime, mtime);
      },
    ],
  ];
  for (const [name, change] of changes) {
    const file = await dataFile(t);
    markIntact(file);
    // The change time has the kernel's tick as its grain: a change in the same tick as the stop would keep it.
    await new Promise((resolve) => setTimeout(resolve, 20));
    change(file);
    t.equal(takeIntactMark(file), false, `${name}: not vouched for`);
    t.notOk(existsSync(markOf(file)), `${name}: the mark is removed`);
  }
});

t.test('a mark that is not one the stop wrote vouches for nothing', async (t) => {
  const file = await dataFile(t);
  markIntact(file);
  const written = readFileSync(markOf(file), 'utf8');
  for (const [name, text] of [
    ['cut short', written.slice(0, -3)],
    ['empty', ''],
    ['another file', written.replace(/"ino":"\d+"/, '"ino":"1"')],
  ] as const) {
    writeFileSync(markOf(file), text);
    t.equal(takeIntactMark(file), false, `${name}: not vouched for`);
    t.notOk(existsSync(markOf(file)), `${name}: removed`);
  }
});

t.test('no data file: no mark', async (t) => {
  const file = join(tempDir(t), 'flagwire.mdb');
  markIntact(file);
  t.notOk(existsSync(markOf(file)), 'nothing to vouch for');
  t.equal(takeIntactMark(file), false);
});
