// Crash safety of the console (issue 8, item 1): console commands that write (`flag tags`, and `flag
// cohorts` with a 5,000-entry list for a bigger transaction) run in a loop against the data dir of a
// running server that is itself under PATCH load, and many of them are killed with SIGKILL at a random
// moment around their write. Checked: every command that exited 0 has its change (and audit entry) on
// disk; no console command fails otherwise; the server's own writes keep being acknowledged, never
// blocked by a console killed while it held LMDB's write lock; every write the server acknowledged is
// on disk; and the data file passes the start-up check at the end. 20 kills (50 with FLAGWIRE_LONG=1).
import t from 'tap';
import { spawn } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { dataFilePath } from '../../src/store/store.js';
import { verifyDataFile } from '../../src/store/verify.js';
import { kCliPath } from '../helpers/cli.js';
import { freshRead } from '../helpers/fresh-read.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { PatchWriter, verifyPatches } from './load.js';
import { buildRichWorld, kLong, kUnlimited } from './support.js';

const kKills = Number(process.env.FLAGWIRE_CONSOLE_KILLS ?? (kLong ? 50 : 20));
t.setTimeout((kLong ? 900 : 150) * 1000);

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  ms: number;
  stderr: string;
}

/** Whether process `pid` has the data file open (it has opened the store: its write is near). */
function hasDataFileOpen(pid: number): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`).endsWith('flagwire.mdb');
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

/**
 * When to kill: never; after a delay; or (Linux) a random 0-40 ms after the process opened the data
 * file, which lands the kill around the transaction itself rather than in Node's start-up.
 */
type Kill = { kind: 'none' } | { kind: 'after'; ms: number } | { kind: 'after-open'; ms: number };

/** Runs the compiled console as users do (no test-runner hooks in NODE_OPTIONS). */
function runConsole(args: string[], kill: Kill): Promise<Run> {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  delete env.FLAGWIRE_DATA;
  const started = performance.now();
  const child = spawn(process.execPath, [kCliPath, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  let timer: NodeJS.Timeout | null = null;
  if (kill.kind === 'after') timer = setTimeout(() => child.kill('SIGKILL'), kill.ms);
  if (kill.kind === 'after-open') {
    const poll = () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      if (hasDataFileOpen(child.pid!)) timer = setTimeout(() => child.kill('SIGKILL'), kill.ms);
      else timer = setTimeout(poll, 1);
    };
    poll();
  }
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ code, signal, ms: performance.now() - started, stderr });
    });
  });
}

interface Loop {
  name: string;
  /** The console arguments for the n-th command and the value that identifies its change. */
  command(n: number): { args: string[]; value: string };
  action: 'flag.tags' | 'flag.cohorts';
  flagId: string;
  projectId: string;
  acked: string[];
  /** Killed commands since the last acknowledged one (any of them may have committed). */
  killedSinceAck: string[];
  killedValues: string[];
}

t.test(`kill -9 of console commands mid-write, with the server running: ${kKills} kills`, async (t) => {
  const dataDir = tempDataDir();
  const world = buildRichWorld(dataDir);
  t.teardown(() => world.store.close());
  const { ids, secrets } = world;
  const server = await startTestServer({ dataDir, env: { ...kUnlimited, FLAGWIRE_LOG_LEVEL: 'warn' } });
  t.teardown(() => server.stop());
  const writers = [
    new PatchWriter(server.baseUrl, 'srv-single', { secret: secrets.write, flagId: ids.flag, projectId: ids.single, env: null }).start(),
    new PatchWriter(server.baseUrl, 'srv-group', { secret: secrets.multiWrite, flagId: ids.groupFlag, projectId: ids.multi, env: 'production' }).start(),
  ];

  const bigList = (n: number) => Array.from({ length: 5000 }, (_, i) => (i === 0 ? `big-${n}` : `c${n}-${i}`)).join(',');
  const loops: Loop[] = [
    { name: 'tags flag', action: 'flag.tags', flagId: ids.flag, projectId: ids.single, command: (n) => ({ args: ['flag', 'tags', ids.flag, `a-${n}`], value: `a-${n}` }), acked: [], killedSinceAck: [], killedValues: [] },
    { name: 'tags flag2', action: 'flag.tags', flagId: ids.flag2, projectId: ids.single, command: (n) => ({ args: ['flag', 'tags', ids.flag2, `b-${n}`], value: `b-${n}` }), acked: [], killedSinceAck: [], killedValues: [] },
    { name: 'cohorts group', action: 'flag.cohorts', flagId: ids.groupFlag, projectId: ids.multi, command: (n) => ({ args: ['flag', 'cohorts', ids.groupFlag, bigList(n)], value: `big-${n}` }), acked: [], killedSinceAck: [], killedValues: [] },
  ];
  const durations: number[] = [];
  const median = () => (durations.length === 0 ? 400 : [...durations].sort((a, b) => a - b)[Math.floor(durations.length / 2)]!);
  let kills = 0;
  let killsAfterOpen = 0;
  let completed = 0;
  const failures: string[] = [];

  await Promise.all(loops.map(async (loop) => {
    for (let n = 1; kills < kKills || loop.acked.length < 3; n++) {
      const { args, value } = loop.command(n);
      // Two commands in three are killed: half of those at a random moment of a typical run, half
      // a random 0-40 ms after they opened the data file (around the write itself).
      const roll = kills < kKills ? Math.random() : 1;
      const kill: Kill = roll < 1 / 3 ? { kind: 'after', ms: median() * (0.2 + Math.random() * 0.9) }
        : roll < 2 / 3 ? { kind: 'after-open', ms: Math.random() * 40 } : { kind: 'none' };
      const run = await runConsole([...args, '--json', '--data', dataDir], kill);
      if (run.signal === 'SIGKILL') {
        kills++;
        if (kill.kind === 'after-open') killsAfterOpen++;
        loop.killedSinceAck.push(value);
        loop.killedValues.push(value);
      } else if (run.code === 0) {
        completed++;
        durations.push(run.ms);
        loop.acked.push(value);
        loop.killedSinceAck = [];
      } else {
        failures.push(`${loop.name} #${n}: exit ${run.code} ${run.signal ?? ''} ${run.stderr.slice(0, 300)}`);
      }
    }
  }));
  await Promise.all(writers.map((w) => w.stop()));

  // Every console command that exited 0 is on disk: its audit entry, and the flag's current value, as a
  // new process reads the data file.
  const disk = await freshRead(dataDir);
  const lost: string[] = [];
  let killedButCommitted = 0;
  for (const loop of loops) {
    const audited = new Set<string>();
    for (const e of disk.listAudit(loop.projectId, { limit: 1_000_000, before: null })) {
      if (e.flagId !== loop.flagId || e.action !== loop.action) continue;
      const after = (loop.action === 'flag.tags' ? e.changes.tags?.after : e.changes.cohorts?.after) as string[] | undefined;
      if (after?.[0] !== undefined) audited.add(after[0]);
    }
    for (const v of loop.acked) if (!audited.has(v)) lost.push(`${loop.name}: ${v}`);
    killedButCommitted += loop.killedValues.filter((v) => audited.has(v)).length;
    const flag = disk.getFlag(loop.flagId)!;
    const current = (loop.action === 'flag.tags' ? flag.tags : flag.cohorts)[0];
    const allowed = [loop.acked.at(-1), ...loop.killedSinceAck];
    if (!allowed.includes(current)) lost.push(`${loop.name}: holds ${current}, expected one of ${allowed.join(', ')}`);
  }
  const serverWrites = verifyPatches(disk, writers);
  const serverAcks = writers.reduce((n, w) => n + w.acked.length, 0);
  const maxPatchMs = Math.max(...writers.flatMap((w) => w.outcomes.map((o) => o.endedAt - o.startedAt)));

  t.comment(`crash-console: ${kills} console commands killed with SIGKILL (${killsAfterOpen} within 40 ms of opening the data file; `
    + `${killedButCommitted} of all the kills landed after the commit), `
    + `${completed} completed, ${loops.reduce((n, l) => n + l.acked.length, 0)} acknowledged console changes checked, ${lost.length} lost; `
    + `meanwhile the server acknowledged ${serverAcks} PATCHes, ${serverWrites.lost.length} lost, slowest ${maxPatchMs.toFixed(0)} ms`);
  t.same(failures, [], 'no console command failed other than by being killed');
  t.same(lost, [], 'every console command that exited 0 is on disk');
  t.same(serverWrites.lost, [], 'every PATCH the server acknowledged is on disk');
  if (serverWrites.lost.length > 0 || lost.length > 0) {
    // Tell a loss on disk from a stale reader: the same check through this process's own reader.
    world.store.resetReadTxn();
    t.comment(`this process's reader sees: ${JSON.stringify(verifyPatches(world.store, writers).lost)}; configSeq disk ${disk.configSeq} vs here ${world.store.configSeq()}`);
    t.comment(`audit: meta auditSeq ${disk.auditSeq}, entries ${disk.auditCount} (fewer entries than sequence numbers: entries overwritten or missing)`);
    for (const w of writers) {
      const entries = disk.listAudit(w.target.projectId, { limit: 1_000_000, before: null }).sort((a, b) => a.seq - b.seq);
      const seqOf = (v: string) => entries.find((e) => e.flagId === w.target.flagId && (e.changes.cohorts?.after as string[] | undefined)?.[0] === v)?.seq;
      for (const v of w.acked) {
        if (seqOf(v) !== undefined) continue;
        const n = Number(v.split('-').pop());
        const lo = seqOf(`${w.tag}-${n - 1}`) ?? 0;
        const hi = seqOf(`${w.tag}-${n + 1}`) ?? Infinity;
        const around = entries.filter((e) => e.seq >= lo && e.seq <= hi).map((e) => `${e.seq} ${e.actor} ${e.action} ${JSON.stringify(e.changes).slice(0, 80)}`);
        t.comment(`missing ${v}; entries between its neighbours:\n${around.join('\n')}`);
      }
    }
    t.comment(`data dir kept for inspection: ${dataDir}`);
  }
  t.same(writers.flatMap((w) => w.refused), [], 'no PATCH was refused');
  t.ok(serverAcks > 20, 'the server kept writing while consoles were killed');
  t.ok(maxPatchMs < 5000, `no PATCH waited on a killed console's write lock (slowest ${maxPatchMs.toFixed(0)} ms)`);
  t.ok(kills >= kKills, `${kills} kills`);

  t.equal(await server.stop(), 0, 'the server stops cleanly');
  await t.resolves(verifyDataFile(dataFilePath(dataDir)), 'the data file passes the start-up check (read end to end)');
  const restarted = await startTestServer({ dataDir });
  t.equal(await restarted.stop(), 0, 'and the server starts on it again');
});
