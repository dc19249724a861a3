// Three nodes on one PostgreSQL, writes on all of them, kill -9 of nodes and of PostgreSQL, and hangs
// of PostgreSQL (SIGSTOP of every process of the cluster, then SIGCONT), at random moments. During a
// hang every node's /ready says PostgreSQL is not connected (while it is hung), and connected again
// after it. Afterwards every acknowledged write (a 201) is in PostgreSQL and on every node, and every
// refused one (503 "nothing was changed") is nowhere. Each write creates a flag of a unique name, so
// a write's presence is a name's presence.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, keptAliveCall } from '../helpers/http.js';
import { cli } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { startPostgres } from '../helpers/postgres.js';
import type { TestServer } from '../helpers/server.js';
import { kLong, kUnlimited } from '../reliability/support.js';
import { seedInProcess, startNode, startReadyNodes, until, waitReady } from './support.js';

const kChaosMs = kLong ? 120_000 : 20_000;
/** Short, so that writes caught by a hang are refused (at their timeout) within it. */
const kEnv = { ...kUnlimited, FLAGWIRE_WRITE_TIMEOUT_MS: '1500' };
/** A node says PostgreSQL does not answer within 2 s of a hang (the heartbeat's target); slack for a loaded machine. */
const pg = await startPostgres();
t.teardown(() => pg.destroy());

t.test('kill -9 of nodes and PostgreSQL under writes on three nodes', async (t) => {
  const url = await pg.newDatabase();
  const seeded = await seedInProcess(t, url);
  const nodes: (TestServer | null)[] = await startReadyNodes(t, url, 3, kEnv);
  const acked = new Set<string>();
  const refused = new Set<string>();
  const unknown = new Map<string, number>();
  const count = (what: string) => unknown.set(what, (unknown.get(what) ?? 0) + 1);
  /** Per hang and node: the milliseconds until /ready said not connected, then connected again after SIGCONT. */
  const hangs: { seen: number; back: number }[] = [];
  // Polled every 10 ms on every node through each hang, as the writers ask: over kept-alive node:http,
  // which costs the test process a fraction of fetch's CPU a request (helpers/http.ts).
  const replicaConnected = async (node: TestServer) =>
    (await keptAliveCall(node.baseUrl, 'GET', '/ready')).json?.replica?.connected as boolean | undefined;
  let stopping = false;

  const writer = async (slot: number) => {
    for (let i = 0; !stopping; i++) {
      const node = nodes[slot];
      if (node === null) {
        await sleep(20);
        continue;
      }
      const name = `n${slot}-${i}`;
      try {
        const r = await keptAliveCall(node!.baseUrl, 'POST', '/api/v1/flags', { token: seeded.secret, body: { name } });
        if (r.status === 201) acked.add(name);
        else if (r.status === 503 && /nothing was changed/.test(r.json?.detail ?? '')) refused.add(name);
        else count(`${r.status} ${r.json?.detail ?? r.text}`.slice(0, 80));
      } catch (err) {
        // The node died with the request in flight (its outcome unknown to the client), or was down.
        count(String((err as Error).cause ?? err).slice(0, 80));
        await sleep(20);
      }
    }
  };

  const chaos = async () => {
    const end = Date.now() + kChaosMs;
    // PostgreSQL killed, PostgreSQL hung and a node killed in turn, each at a random moment and for a
    // random time: every run has every kind (a coin per round once gave a run without a PostgreSQL
    // kill, so no refusals).
    for (let round = 0; Date.now() < end; round++) {
      await sleep(500 + Math.random() * 1500);
      if (round % 3 === 0) {
        pg.kill9();
        await sleep(300 + Math.random() * 1500);
        await pg.start();
      } else if (round % 3 === 1) {
        const live = nodes.filter((n): n is TestServer => n !== null);
        pg.hang();
        const hungAt = performance.now();
        try {
          // Each node must say so; the hang is held until all have (or the bound, generously, has passed).
          const seen = await Promise.all(
            live.map((n) =>
              until(async () => (await replicaConnected(n)) === false, 60_000, 'not connected during a hang').catch(() => Infinity),
            ),
          );
          await sleep(Math.random() * 1500);
          pg.resume();
          const resumedAt = performance.now();
          const back = await Promise.all(
            live.map((n) =>
              until(async () => (await replicaConnected(n)) === true, 60_000, 'connected after a hang').catch(() => Infinity),
            ),
          );
          for (const [i, ms] of seen.entries()) hangs.push({ seen: ms, back: back[i]! });
          t.comment(
            `hang: seen after ${seen.map(Math.round).join(', ')} ms; held ${Math.round(resumedAt - hungAt)} ms; back after ${back.map(Math.round).join(', ')} ms`,
          );
        } finally {
          pg.resume();
        }
      } else {
        const slot = Math.floor(Math.random() * 3);
        const node = nodes[slot]!;
        nodes[slot] = null;
        node.proc.kill('SIGKILL');
        await node.stop();
        await sleep(Math.random() * 1000);
        nodes[slot] = await startNode(url, node.dataDir, kEnv);
      }
    }
  };

  await Promise.all([chaos().finally(() => (stopping = true)), writer(0), writer(1), writer(2)]);
  const live = nodes as TestServer[];
  t.teardown(async () => {
    await Promise.all(live.map((n) => n.stop()));
  });
  t.comment(`acknowledged ${acked.size}, refused ${refused.size}, other: ${JSON.stringify([...unknown])}`);
  t.ok(acked.size > 20, 'writes were acknowledged');
  t.ok(refused.size > 0, 'writes were refused while PostgreSQL was down');
  t.ok(hangs.length > 0, 'PostgreSQL hung');
  for (const { seen, back } of hangs) {
    // The hang is held until each node has said so: seen at all (a minute only catches a hang) is seen during it.
    t.ok(seen !== Infinity, `during a hang /ready says PostgreSQL is not connected (${Math.round(seen)} ms)`);
    t.ok(back !== Infinity, `after it, connected again (${Math.round(back)} ms)`);
  }

  // Every node caught up with PostgreSQL's last revision.
  const dbName = url.split('/').pop()!;
  const latest = Number((await pg.admin<{ revision: string }>(dbName, 'SELECT revision FROM flagwire_meta')).rows[0]!.revision);
  for (const node of live) {
    await waitReady(node);
    for (const until = Date.now() + 60_000; (await call(node.baseUrl, 'GET', '/ready')).json.replica.revision < latest; ) {
      if (Date.now() > until) throw new Error('a node did not catch up');
      await sleep(50);
    }
  }
  // In this process (PostgreSQL no longer hung): a console process of its own cost ten times the CPU.
  const inPg = await cli(tempDir(t), ['flag', 'list', seeded.projectId, '--database', url], { inProcess: true });
  t.equal(inPg.code, 0, `flag list from PostgreSQL: ${inPg.stdout}${inPg.stderr}`);
  const names = (flags: { name: string }[]) => new Set(flags.map((f) => f.name));
  const sets = [names(inPg.json.flags)];
  for (const node of live) sets.push(names((await call(node.baseUrl, 'GET', '/api/v1/flags', { token: seeded.secret })).json.flags));
  sets.forEach((set, i) => {
    const where = i === 0 ? 'PostgreSQL' : `node ${i}`;
    t.strictSame(
      [...acked].filter((n) => !set.has(n)),
      [],
      `every acknowledged write in ${where}`,
    );
    t.strictSame(
      [...refused].filter((n) => set.has(n)),
      [],
      `no refused write in ${where}`,
    );
    t.strictSame([...set].sort(), [...sets[0]!].sort(), `${where} holds what PostgreSQL holds`);
  });
});
