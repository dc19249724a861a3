// An export's scratch folders at its node's close (src/events/export-scratch.ts), in process: close()
// removes the folders of exports still running (a shutdown cut them, and the process exits before they
// end), and an export that would begin after it is refused, leaving nothing. A real node's cut export is
// test/events/export-shutdown.test.ts's; there the export's own end often removes its folder first.
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ExportScratch } from '../../src/events/export-scratch.js';
import { tempDir } from '../helpers/scratch-dir.js';

t.test('close() removes the folders still in use, and refuses a folder after it', async (t) => {
  const dataDir = tempDir(t);
  const scratch = new ExportScratch(dataDir);
  const ended = await scratch.make();
  const running = [await scratch.make(), await scratch.make()];
  writeFileSync(join(running[0]!, 'events.jsonl'), '{}\n');
  await scratch.remove(ended);
  t.strictSame(readdirSync(dataDir).sort(), running.map((dir) => dir.slice(dataDir.length + 1)).sort(), 'one folder per running export');
  await scratch.close();
  t.strictSame(readdirSync(dataDir), [], 'none is left');
  await t.rejects(scratch.make(), { code: 'SERVER_BUSY', message: /shutting down/ }, 'an export beginning after close is refused');
  t.strictSame(readdirSync(dataDir), [], 'and made no folder');
});

t.test('an export whose folder was being made as close() ran is refused, and its folder removed', async (t) => {
  const dataDir = tempDir(t);
  const scratch = new ExportScratch(dataDir);
  const made = scratch.make();
  await scratch.close();
  await t.rejects(made, { code: 'SERVER_BUSY' });
  t.strictSame(readdirSync(dataDir), [], 'no folder is left');
});
