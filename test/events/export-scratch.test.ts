// An export's scratch folders left by a process that ended (src/events/export-scratch.ts): a node's
// start removes them from its data dir, and nothing else there: not a folder of a process still running
// (another node on the same data dir, mid-export), nor anything not named as a scratch folder is; and
// neither a running export's folder nor a leftover makes a node refuse the data dir (it once did: a
// folder not dot-named was a file "Flagwire did not write").
// Against real nodes: one killed with kill -9 mid-Parquet export, others started on its data dir.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import t from 'tap';
import { plainNode } from '../helpers/plain-process.js';
import { nodeWithRawEvents, scratchFolders } from '../helpers/raw-events-node.js';
import { startTestServer } from '../helpers/server.js';

/** The pid of a process that has ended. */
function endedPid(): number {
  return Number(spawnSync(...plainNode(['-e', 'process.stdout.write(String(process.pid))']), { encoding: 'utf8' }).stdout);
}

t.test("a node's start removes the scratch folders of ended processes, and only those", async (t) => {
  // Random details: a Parquet file far larger than the sockets hold, so the export is suspended
  // mid-file, its scratch folder in the data dir, while its client reads no more.
  const { server: first, reader } = await nodeWithRawEvents(t, 18_000, true);
  const { dataDir } = first;
  const body = await reader('parquet');
  t.notOk((await body.read()).done, 'the export started');
  const [running] = scratchFolders(dataDir);
  t.match(
    running,
    new RegExp(`^\\.export-${first.proc.pid}\\.[0-9]*-[A-Za-z0-9]{6}$`),
    "the export's scratch folder, named for its process",
  );

  // What an ended process left (its pid, a start time, six characters), with a file in it; and what a
  // start must keep: a file named as a scratch folder is, and names of another shape.
  const leftover = `.export-${endedPid()}.123-AbC123`;
  mkdirSync(join(dataDir, leftover));
  writeFileSync(join(dataDir, leftover, 'events.jsonl'), '{}\n');
  const kept = [`.export-${endedPid()}.123-file00`, '.export-notes', '.export-AbC123'];
  writeFileSync(join(dataDir, kept[0]!), 'not a folder');
  for (const name of kept.slice(1)) mkdirSync(join(dataDir, name));

  // A second node on the same data dir, while the first exports.
  const second = await startTestServer({ dataDir, env: { FLAGWIRE_LOG_LEVEL: 'info' } });
  t.teardown(() => second.stop());
  t.strictSame(
    scratchFolders(dataDir),
    [...kept, running].sort(),
    "the ended process's folder is removed; the running export's and the rest are kept",
  );
  t.equal(await second.stop(), 0);
  // Read once all it printed is in: a log line can reach the pipe after the start answered.
  if (!second.proc.stderr!.closed) await once(second.proc.stderr!, 'close');
  const said = second
    .logs()
    .split('\n')
    .filter((line) => line.includes('removed export scratch folders left by processes that ended'))
    .map((line) => JSON.parse(line).removed);
  t.strictSame(said, [[leftover]], 'the start says what it removed');

  // The first node killed mid-export: its folder stays, until a node starts there.
  first.proc.kill('SIGKILL');
  await first.stop();
  t.strictSame(scratchFolders(dataDir), [...kept, running].sort(), 'kill -9 leaves the folder');
  const third = await startTestServer({ dataDir });
  t.teardown(() => third.stop());
  t.strictSame(scratchFolders(dataDir), [...kept].sort(), "the killed node's folder is removed at the next start");
  t.equal(await third.stop(), 0);
});
