// The data file's header check runs while other processes may be committing (a console command
// beside a busy server): it must never mistake a file that is being written for a damaged one.
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { open } from 'lmdb';
import t from 'tap';
import { inspectDataFile } from '../../src/store/data-file.js';
import { tempDir } from '../helpers/scratch-dir.js';

const kWriter = fileURLToPath(new URL('../helpers/busy-writer.js', import.meta.url));

t.test('a file that another process keeps committing to is never reported damaged', async (t) => {
  const path = join(tempDir(t), 'flagwire.mdb');
  const seed = open({ path });
  await seed.put('seed', 1);
  await seed.close();
  const writer = fork(kWriter, [path], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  t.teardown(() => writer.kill('SIGKILL'));
  await new Promise((resolve) => writer.once('message', resolve));

  const problems = new Map<string, number>();
  let checks = 0;
  const until = Date.now() + 3000;
  while (Date.now() < until) {
    const problem = inspectDataFile(path);
    checks++;
    if (problem) {
      const kind = problem.reason.replace(/\d+/g, 'N');
      problems.set(kind, (problems.get(kind) ?? 0) + 1);
    }
    await new Promise(setImmediate);
  }
  t.ok(checks > 100, `${checks} checks ran while the writer committed`);
  t.strictSame(Object.fromEntries(problems), {}, 'no check reported a problem');
});
