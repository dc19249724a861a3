// Crash safety of the console (issue 8, item 1): console commands that write (`flag tags`, and `flag
// cohorts` with a 5,000-entry list for a bigger transaction) run in a loop against the data dir of a
// running server that is itself under PATCH load, and many of them are killed with SIGKILL. The console
// runs with FLAGWIRE_TEST_HOOKS=1, so it reports on stderr when it has opened the store, when its writes
// are done inside the transaction, and when the transaction is committed (src/cli/test-hooks.ts);
// what it wrote there before dying tells where each kill landed. Commands take turns at five fates:
//   none            runs to its end;
//   random          killed at a random moment of a typical run (may land in Node's start-up);
//   after-open      killed a random 0-40 ms after it reported the store open (around the write);
//   in-transaction  held inside its write transaction (FLAGWIRE_TEST_CONSOLE_HOLD=1: it waits for a
//                   byte on stdin, holding LMDB's write lock) and killed there: it must leave nothing;
//   after-commit    let go past the commit, held again, and killed before it exits: the commit must stay.
// Checked: every command that exited 0 or was killed after its commit has its change (and audit entry)
// on disk; a command killed inside its transaction left no trace (no audit entry, not the flag's value);
// the flag's value is always whole (every tag or all 5,000 cohorts of one command) with its audit entry;
// no console command fails otherwise; the server's writes keep being acknowledged, never blocked by a
// console killed while it held the write lock; every write the server acknowledged is on disk; and the
// data file passes the start-up check at the end. Only kills that land after the store was opened
// count: 20 of them (50 with FLAGWIRE_LONG=1), and at least half of all kills.
import t from 'tap';
import { spawn } from 'node:child_process';
import { dataFilePath } from '../../src/store/layout.js';
import { verifyDataFile } from '../../src/store/verify.js';
import { kCli, startTestServer, tempDataDir } from '../helpers/server.js';
import { freshRead } from '../helpers/fresh-read.js';
import { plainNode } from '../helpers/plain-process.js';
import { PatchWriter, storeReader, verifyPatches } from './load.js';
import { buildRichWorld, kLong, kUnlimited } from './support.js';

const kKills = Number(process.env.FLAGWIRE_CONSOLE_KILLS ?? (kLong ? 50 : 20));
// Only a hang catcher: alone on a quiet 2-core machine the trials take about 80 s, and a loaded one
// (load average 8-10) has taken more than twice that.
t.setTimeout((kLong ? 1800 : 600) * 1000);

/**
 * A PATCH slower than this means the server's writer waited on a lock nobody releases. LMDB frees the
 * lock of a dead holder at once (a robust mutex), so a real stall never ends: the client gives up
 * after 15 s (load.ts), and the PATCH is reported failed. A loaded two-core machine has delayed a
 * PATCH by 3.3 s without any console held: 10 s keeps the check away from load and below the 15 s.
 */
const kStallMs = 10_000;

type Fate = 'none' | 'random' | 'after-open' | 'in-transaction' | 'after-commit';
const kFates: readonly Fate[] = ['random', 'after-open', 'in-transaction', 'none', 'after-commit'];
const kHook = (point: string) => `flagwire-test-hook: ${point}\n`;

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  ms: number;
  stderr: string;
  /** What the console reported before it ended (all its stderr lines are read, killed or not). */
  opened: boolean;
  inTransaction: boolean;
  committed: boolean;
}

/** Runs the compiled console as users do (no test-runner hooks in NODE_OPTIONS), with its test hooks on. */
function runConsole(args: string[], fate: Fate, typicalMs: number): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, FLAGWIRE_TEST_HOOKS: '1' };
  delete env.FLAGWIRE_DATA;
  const hold = fate === 'in-transaction' || fate === 'after-commit';
  if (hold) env.FLAGWIRE_TEST_CONSOLE_HOLD = '1';
  const started = performance.now();
  const child = spawn(...plainNode([kCli, ...args]), { env, stdio: [hold ? 'pipe' : 'ignore', 'ignore', 'pipe'] });
  child.stdin?.on('error', () => {});
  let stderr = '';
  let timer: NodeJS.Timeout | null = null;
  let released = false;
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (fate === 'after-open' && timer === null && stderr.includes(kHook('store-open'))) timer = setTimeout(kill, Math.random() * 40);
    if (fate === 'in-transaction' && stderr.includes(kHook('in-transaction'))) kill();
    if (fate === 'after-commit') {
      if (!released && stderr.includes(kHook('in-transaction'))) {
        released = true;
        child.stdin!.write('x');
      }
      if (stderr.includes(kHook('committed'))) kill();
    }
  });
  if (fate === 'random') timer = setTimeout(kill, typicalMs * (0.2 + Math.random() * 0.9));
  return new Promise((resolve) => {
    child.once('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({
        code,
        signal,
        ms: performance.now() - started,
        stderr,
        opened: stderr.includes(kHook('store-open')),
        inTransaction: stderr.includes(kHook('in-transaction')),
        committed: stderr.includes(kHook('committed')),
      });
    });
  });
}

/** What became of one command, as far as the test can know. */
type Outcome = 'acknowledged' | 'killed-after-commit' | 'killed-in-transaction' | 'killed-unknown';

interface Loop {
  name: string;
  /** The console arguments for the n-th command, the value that identifies its change, and the whole list it sets. */
  command(n: number): { args: string[]; value: string; list: string[] };
  action: 'flag.tags' | 'flag.cohorts';
  flagId: string;
  projectId: string;
  /** Every command that wrote or may have written, in order. */
  history: { value: string; list: string[]; outcome: Outcome }[];
  acked: number;
}

t.test(`kill -9 of console commands mid-write, with the server running: ${kKills} kills after the store was opened`, async (t) => {
  const dataDir = tempDataDir();
  const world = buildRichWorld(dataDir);
  t.teardown(() => world.store.close());
  const { ids, secrets } = world;
  const server = await startTestServer({ dataDir, env: { ...kUnlimited, FLAGWIRE_LOG_LEVEL: 'warn' } });
  t.teardown(() => server.stop());
  const writers = [
    new PatchWriter(server.baseUrl, 'srv-single', { secret: secrets.write, flagId: ids.flag, projectId: ids.single, env: null }).start(),
    new PatchWriter(server.baseUrl, 'srv-group', {
      secret: secrets.multiWrite,
      flagId: ids.groupFlag,
      projectId: ids.multi,
      env: 'production',
    }).start(),
  ];

  const bigList = (n: number) => Array.from({ length: 5000 }, (_, i) => (i === 0 ? `big-${n}` : `c${n}-${i}`));
  const loop = (name: string, action: Loop['action'], flagId: string, projectId: string, command: Loop['command']): Loop => ({
    name,
    action,
    flagId,
    projectId,
    command,
    history: [],
    acked: 0,
  });
  const loops: Loop[] = [
    loop('tags flag', 'flag.tags', ids.flag, ids.single, (n) => ({
      args: ['flag', 'tags', ids.flag, `a-${n}`],
      value: `a-${n}`,
      list: [`a-${n}`],
    })),
    loop('tags flag2', 'flag.tags', ids.flag2, ids.single, (n) => ({
      args: ['flag', 'tags', ids.flag2, `b-${n}`],
      value: `b-${n}`,
      list: [`b-${n}`],
    })),
    loop('cohorts group', 'flag.cohorts', ids.groupFlag, ids.multi, (n) => {
      const list = bigList(n);
      return { args: ['flag', 'cohorts', ids.groupFlag, list.join(',')], value: `big-${n}`, list };
    }),
  ];
  const durations: number[] = [];
  const median = () => (durations.length === 0 ? 400 : [...durations].sort((a, b) => a - b)[Math.floor(durations.length / 2)]!);
  const kills = { all: 0, afterOpen: 0, beforeOpen: 0, inTransaction: 0, afterCommit: 0 };
  let completed = 0;
  let turn = 0;
  const failures: string[] = [];

  await Promise.all(
    loops.map(async (loop) => {
      for (let n = 1; kills.afterOpen < kKills || loop.acked < 3; n++) {
        const { args, value, list } = loop.command(n);
        // The fates take turns across the three loops; once enough kills landed, commands run to their end.
        const fate: Fate = kills.afterOpen < kKills ? kFates[turn++ % kFates.length]! : 'none';
        const run = await runConsole([...args, '--json', '--data', dataDir], fate, median());
        if (run.signal === 'SIGKILL') {
          kills.all++;
          if (run.opened) kills.afterOpen++;
          else kills.beforeOpen++;
          // Held inside the transaction and killed there (never let go): it cannot have committed.
          const outcome: Outcome = run.committed
            ? 'killed-after-commit'
            : fate === 'in-transaction' && run.inTransaction
              ? 'killed-in-transaction'
              : 'killed-unknown';
          if (outcome === 'killed-after-commit') kills.afterCommit++;
          if (outcome === 'killed-in-transaction') kills.inTransaction++;
          // Killed before it opened the store: it wrote nothing and cannot have.
          if (run.opened) loop.history.push({ value, list, outcome });
        } else if (run.code === 0) {
          completed++;
          durations.push(run.ms);
          loop.acked++;
          loop.history.push({ value, list, outcome: 'acknowledged' });
        } else {
          failures.push(`${loop.name} #${n} (${fate}): exit ${run.code} ${run.signal ?? ''} ${run.stderr.slice(0, 300)}`);
        }
      }
    }),
  );
  await Promise.all(writers.map((w) => w.stop()));

  // What a new process reads from the data file: every command that exited 0, or was killed after its
  // commit, has its audit entry; one killed inside its transaction has none; the flag holds the value
  // of the last command known to have committed or of one after it whose fate is unknown, whole, and
  // that value has its audit entry (the change and its entry are one transaction).
  const disk = await freshRead(dataDir);
  const lost: string[] = [];
  const partial: string[] = [];
  const outcomes = {
    acknowledged: 0,
    'killed-after-commit': 0,
    'killed-in-transaction': 0,
    'killed-unknown': 0,
    'killed-unknown-committed': 0,
  };
  for (const loop of loops) {
    const audited = new Map<string, number>();
    for (const e of disk.listAudit(loop.projectId, { limit: 1_000_000, before: null })) {
      if (e.flagId !== loop.flagId || e.action !== loop.action) continue;
      const after = (loop.action === 'flag.tags' ? e.changes.tags?.after : e.changes.cohorts?.after) as string[] | undefined;
      if (after?.[0] !== undefined) audited.set(after[0], (audited.get(after[0]) ?? 0) + 1);
    }
    for (const { value, outcome } of loop.history) {
      outcomes[outcome]++;
      const entries = audited.get(value) ?? 0;
      if (entries > 1) partial.push(`${loop.name}: ${value} has ${entries} audit entries`);
      if ((outcome === 'acknowledged' || outcome === 'killed-after-commit') && entries === 0)
        lost.push(`${loop.name}: ${value} (${outcome}) has no audit entry`);
      if (outcome === 'killed-in-transaction' && entries > 0)
        partial.push(`${loop.name}: ${value} was killed inside its transaction, yet has an audit entry`);
      if (outcome === 'killed-unknown' && entries > 0) outcomes['killed-unknown-committed']++;
    }
    let lastKnown = -1;
    for (const [i, h] of loop.history.entries()) if (h.outcome === 'acknowledged' || h.outcome === 'killed-after-commit') lastKnown = i;
    const allowed = loop.history
      .slice(Math.max(0, lastKnown))
      .filter((h, i) => (i === 0 && lastKnown >= 0) || h.outcome === 'killed-unknown');
    const flag = disk.getFlag(loop.flagId)!;
    const current = loop.action === 'flag.tags' ? flag.tags : flag.cohorts;
    const match = loop.history.find((h) => h.value === current[0]);
    if (lastKnown >= 0 && !allowed.some((h) => h.value === current[0])) {
      lost.push(`${loop.name}: holds ${current[0]}, expected one of ${allowed.map((h) => h.value).join(', ')}`);
    }
    if (match !== undefined && JSON.stringify(current) !== JSON.stringify(match.list))
      partial.push(`${loop.name}: holds ${current.length} entries of ${match.value}, not its whole list of ${match.list.length}`);
    if (match !== undefined && !audited.has(match.value)) partial.push(`${loop.name}: holds ${match.value} without its audit entry`);
  }
  const serverWrites = verifyPatches(disk, writers);
  const serverAcks = writers.reduce((n, w) => n + w.acked.length, 0);
  const maxPatchMs = Math.max(...writers.flatMap((w) => w.outcomes.map((o) => o.endedAt - o.startedAt)));

  const failedPatches = writers.flatMap((w) => w.outcomes.filter((o) => o.status === null).map((o) => `${w.tag}: ${o.error}`));

  t.comment(
    `crash-console: ${kills.all} console commands killed with SIGKILL, ${kills.afterOpen} of them after the command opened the store ` +
      `(${kills.inTransaction} held inside the write transaction, ${kills.afterCommit} after the commit, ${kills.afterOpen - kills.inTransaction - kills.afterCommit} at a random moment) ` +
      `and ${kills.beforeOpen} in Node's start-up; ${outcomes['killed-unknown-committed']} of the ${outcomes['killed-unknown']} killed at a random moment after open had committed; ` +
      `${completed} completed; ${outcomes.acknowledged + outcomes['killed-after-commit']} committed console changes checked, ${lost.length} lost, ${partial.length} partial; ` +
      `meanwhile the server acknowledged ${serverAcks} PATCHes, ${serverWrites.lost.length} lost, slowest ${maxPatchMs.toFixed(0)} ms`,
  );
  t.same(failures, [], 'no console command failed other than by being killed');
  t.same(lost, [], 'every console command that exited 0 or was killed after its commit is on disk');
  t.same(partial, [], 'a command killed inside its transaction left nothing, and no change is ever partial or without its audit entry');
  t.same(serverWrites.lost, [], 'every PATCH the server acknowledged is on disk');
  if (serverWrites.lost.length > 0 || lost.length > 0) {
    // Tell a loss on disk from a stale reader: the same check through this process's own reader.
    world.store.resetReadTxn();
    t.comment(
      `this process's reader sees: ${JSON.stringify(verifyPatches(storeReader(world.store), writers).lost)}; configSeq disk ${disk.configSeq} vs here ${world.store.configSeq()}`,
    );
    t.comment(
      `audit: meta auditSeq ${disk.auditSeq}, entries ${disk.auditCount} (fewer entries than sequence numbers: entries overwritten or missing)`,
    );
    for (const w of writers) {
      const entries = disk.listAudit(w.target.projectId, { limit: 1_000_000, before: null }).sort((a, b) => a.seq - b.seq);
      const seqOf = (v: string) =>
        entries.find((e) => e.flagId === w.target.flagId && (e.changes.cohorts?.after as string[] | undefined)?.[0] === v)?.seq;
      for (const v of w.acked) {
        if (seqOf(v) !== undefined) continue;
        const n = Number(v.split('-').pop());
        const lo = seqOf(`${w.tag}-${n - 1}`) ?? 0;
        const hi = seqOf(`${w.tag}-${n + 1}`) ?? Infinity;
        const around = entries
          .filter((e) => e.seq >= lo && e.seq <= hi)
          .map((e) => `${e.seq} ${e.actor} ${e.action} ${JSON.stringify(e.changes).slice(0, 80)}`);
        t.comment(`missing ${v}; entries between its neighbours:\n${around.join('\n')}`);
      }
    }
    t.comment(`data dir kept for inspection: ${dataDir}`);
  }
  t.same(
    writers.flatMap((w) => w.refused),
    [],
    'no PATCH was refused',
  );
  t.ok(serverAcks > 20, 'the server kept writing while consoles were killed');
  t.same(failedPatches, [], "every PATCH was answered (none gave up waiting on a killed console's write lock)");
  t.ok(
    maxPatchMs < kStallMs,
    `no PATCH stalled on a killed console's write lock (slowest ${maxPatchMs.toFixed(0)} ms, limit ${kStallMs} ms)`,
  );
  t.ok(kills.afterOpen >= kKills, `${kills.afterOpen} kills after the store was opened (${kKills} required)`);
  t.ok(kills.afterOpen >= kills.all / 2, `at least half of all kills landed after open (${kills.afterOpen} of ${kills.all})`);
  t.ok(
    kills.inTransaction > 0 && kills.afterCommit > 0,
    `kills inside the transaction (${kills.inTransaction}) and after the commit (${kills.afterCommit}) both happened`,
  );

  t.equal(await server.stop(), 0, 'the server stops cleanly');
  await t.resolves(verifyDataFile(dataFilePath(dataDir)), 'the data file passes the start-up check (read end to end)');
  const restarted = await startTestServer({ dataDir });
  t.equal(await restarted.stop(), 0, 'and the server starts on it again');
});
