// migrate-to-postgres exports the data dir from one read snapshot: with another process creating
// flags as fast as it can (each flag and its audit entry in one transaction), every export holds an
// audit entry for each flag it holds and a flag for each creation it audits.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { tempDir } from '../helpers/scratch-dir.js';
import { buildWorld } from '../helpers/world.js';
import { Store } from '../helpers/store.js';
import type { Change } from '../../src/store/changes.js';
import { plainNode } from '../helpers/plain-process.js';

const kStore = fileURLToPath(new URL('../helpers/store.js', import.meta.url));
const kCommands = fileURLToPath(new URL('../../src/writer/thread/commands.js', import.meta.url));
const kExports = 200;
// The writer stops here: an export reads every flag, so a writer left to race on (12,000 flags in one
// run, 600 in another) made the exports, and the file, ten times dearer without testing anything more.
const kMaxFlags = 1500;

/**
 * A console-like process that creates flags in `projectId`, one transaction each, until it made
 * kMaxFlags, is killed, or its parent (this test, `parent`) is gone: an orphan would write for ever and
 * hold the runner's pipe.
 */
const writerSource = (dataDir: string, projectId: string, parent: number) => `
const { Store } = await import(${JSON.stringify(kStore)});
const { runCommand } = await import(${JSON.stringify(kCommands)});
const store = Store.open(${JSON.stringify(dataDir)});
process.stdout.write('ready\\n');
for (let i = 0; i < ${kMaxFlags}; i++) {
  if (i % 100 === 0 && process.ppid !== ${parent}) process.exit(0);
  store.transact((w) => runCommand(w, 'flagCreate', { projectId: ${JSON.stringify(projectId)}, body: { name: 'race-' + i, description: 'd'.repeat(2000) }, principal: { kind: 'operator' } }, Date.now()));
}
`;

t.test('every export is one snapshot: flags and their audit entries agree while another process writes', async (t) => {
  const dir = tempDir(t);
  const world = buildWorld(dir);
  const projectId = world.ids.single;
  await world.store.close();
  const writer = spawn(...plainNode(['--input-type=module', '-e', writerSource(dir, projectId, process.pid)]), {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.teardown(() => {
    writer.kill('SIGKILL');
  });
  await new Promise<void>((resolve, reject) => {
    writer.stdout!.once('data', () => resolve());
    writer.once('exit', (code) => reject(new Error(`writer exited with ${code}`)));
  });

  const store = Store.open(dir);
  t.teardown(() => store.close());
  let torn = 0;
  let largest = 0;
  for (let i = 0; i < kExports; i++) {
    const records = store.exportRecords();
    const flags = new Set(records.flatMap((c: Change) => (c.kind === 'flag' && c.value.projectId === projectId ? [c.value.id] : [])));
    const created = new Set(
      records.flatMap((c: Change) =>
        c.kind === 'audit' && c.value.action === 'flag.create' && c.value.projectId === projectId ? [c.value.flagId] : [],
      ),
    );
    if ([...flags].some((id) => !created.has(id)) || [...created].some((id) => !flags.has(id!))) torn++;
    largest = Math.max(largest, flags.size);
    // Another event-loop turn between exports, as between two commands' reads.
    await new Promise((r) => setImmediate(r));
  }
  t.ok(largest > 10, `the writer made flags during the exports (${largest} in the last)`);
  t.equal(torn, 0, `of ${kExports} exports, none holds a flag without its audit entry or the reverse`);
});
