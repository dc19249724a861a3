// A change-stream client that never reads, against the real server over a real socket (issue 9, item 5:
// "a slow reader is dropped, not allowed to grow memory"). Two raw TCP clients open
// GET /v1/stream/project/{id} and then stop reading (the socket paused: Node reads at most its 16 KiB
// high-water mark, then the kernel's receive buffer fills and the window closes), while every flag of
// a 4,000-flag project changes again and again (about 340 KB of events a round). Once the kernel
// buffers are full, uWS refuses more without buffering; the connection then waits in its bounded queue
// (64 KiB) and is dropped when that overflows or when it has not drained for maxStallMs (1 s here,
// through FLAGWIRE_TEST_STREAM_MAX_STALL_MS, checked at each 100 ms heartbeat). Checked: the server
// closes both connections (the client, reading again, reaches the end of the stream),
// flagwire_stream_dropped_total counts exactly those two, and a reading EventSource client on the same
// project and one on another project stay connected, are never dropped, and still get the next change.
import { rmSync } from 'node:fs';
import net from 'node:net';
import t from 'tap';
import { EventSource } from 'eventsource';
import { buildEvalWorld } from '../evaluation/engine/eval-world.js';
import { call } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';
import { kOperator } from '../../src/actor/audit-actor.js';
import { putFlag } from '../../src/flags/records/flag-store.js';

const kFlags = 4000;
const kSlowClients = 2;

t.setTimeout(600_000);

t.test('a stream client that never reads is dropped and counted; readers beside it are not', async (t) => {
  const world = buildEvalWorld();
  const big = world.run('projectCreate', { principal: kOperator, name: 'Big', orgId: world.ids.orgTeams, kind: 'single' }).id;
  const flagIds = Array.from({ length: kFlags }, (_, i) => `flg_slow${String(i).padStart(12, '0')}`);
  let version = 1;
  // Every flag of the project gets a new updatedAt: one event per flag for every watcher. Written
  // straight into the store (as the console does from its own process); the server sees the commit.
  const touchAll = (): number => {
    const at = Date.now() * 10 + version++;
    world.store.transact((w) => {
      for (const [i, id] of flagIds.entries()) {
        putFlag(w, {
          id,
          projectId: big,
          name: `slow-${i}`,
          description: '',
          tags: [],
          createdAt: 1,
          updatedAt: at,
          kind: 'flag',
          cohorts: [],
          state: { enabled: true, trafficPercentage: 100, audienceId: null },
        });
      }
    });
    return at;
  };
  touchAll();
  const server = await startTestServer({
    dataDir: world.dataDir,
    env: { FLAGWIRE_TEST_STREAM_HEARTBEAT_MS: '100', FLAGWIRE_TEST_STREAM_MAX_STALL_MS: '1000' },
  });
  const sockets: net.Socket[] = [];
  const sources: EventSource[] = [];
  t.teardown(async () => {
    for (const s of sockets) s.destroy();
    for (const es of sources) es.close();
    await server.stop();
    await world.store.close();
    rmSync(world.dataDir, { recursive: true, force: true });
  });
  const dropped = async () => {
    const text = (await call(server.baseUrl, 'GET', '/metrics')).text;
    return Number(/^flagwire_stream_dropped_total (\d+)$/m.exec(text)?.[1] ?? NaN);
  };
  t.equal(await dropped(), 0, 'nothing dropped at the start');

  // The slow clients: a raw socket each, reading only the response head, then paused for good.
  const slow = await Promise.all(
    Array.from(
      { length: kSlowClients },
      () =>
        new Promise<{ socket: net.Socket; closed: Promise<number> }>((resolve, reject) => {
          const socket = net.connect(server.port, '127.0.0.1');
          sockets.push(socket);
          let head = '';
          const onData = (d: Buffer) => {
            head += d.toString('latin1');
            if (head.includes('\r\n\r\n')) {
              socket.off('data', onData);
              socket.pause();
              if (!/^HTTP\/1\.1 200 /.test(head) || !/text\/event-stream/i.test(head))
                reject(new Error(`not a stream: ${head.slice(0, 300)}`));
              resolve({ socket, closed: new Promise<number>((done) => socket.once('close', () => done(performance.now()))) });
            }
          };
          socket.on('data', onData);
          socket.on('error', () => {});
          socket.once('connect', () =>
            socket.write(`GET /v1/stream/project/${big} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n`),
          );
        }),
    ),
  );

  // The well-behaved clients: EventSource on the same project and on another one.
  const watch = async (projectId: string) => {
    const es = new EventSource(`${server.baseUrl}/v1/stream/project/${projectId}`);
    sources.push(es);
    const state = { events: 0, ids: [] as string[], lastRound: 0, opens: 0, errors: 0 };
    es.addEventListener('flag', (e) => {
      state.events++;
      const { id, updatedAt } = JSON.parse(e.data) as { id: string; updatedAt: number };
      if (!id.startsWith('flg_slow')) state.ids.push(id);
      else if (id === flagIds.at(-1)) state.lastRound = updatedAt;
    });
    es.onerror = () => state.errors++;
    await new Promise<void>((resolve) => {
      es.onopen = () => {
        state.opens++;
        resolve();
      };
    });
    return state;
  };
  const sameProject = await watch(big);
  const otherProject = await watch(world.ids.single);

  // Change every flag, round after round, until the server has dropped both slow clients (a deadline
  // far beyond what filling a few MB of socket buffers takes, for a loaded machine).
  const started = performance.now();
  let rounds = 0;
  let count = 0;
  while (performance.now() - started < 60_000) {
    touchAll();
    rounds++;
    await new Promise((resolve) => setTimeout(resolve, 200));
    count = await dropped();
    if (count >= kSlowClients) break;
  }
  const dropMs = performance.now() - started;
  t.comment(
    `slow stream readers: ${kSlowClients} dropped after ${rounds} rounds of ${kFlags} changed flags (${(dropMs / 1000).toFixed(1)} s); ` +
      `the reading client on the same project got ${sameProject.events} events meanwhile`,
  );
  t.equal(count, kSlowClients, 'flagwire_stream_dropped_total counts the slow clients');

  // The server closed them: reading again, each client drains what the kernel held and reaches the end.
  const resumedAt = performance.now();
  for (const { socket } of slow) socket.resume();
  // The bound's timer is cleared once the race is decided: left to run, it kept the file's process
  // alive for a minute after its last test (67 s of wall time for 4 CPU s in a suite run).
  let bound: NodeJS.Timeout | undefined;
  const closedAt = await Promise.race([
    Promise.all(slow.map((s) => s.closed)),
    new Promise<null>((resolve) => {
      bound = setTimeout(() => resolve(null), 60_000);
    }),
  ]);
  clearTimeout(bound);
  t.ok(
    closedAt !== null,
    `both slow connections were closed by the server (end of stream ${closedAt === null ? 'not reached' : `reached ${(Math.max(...closedAt) - resumedAt).toFixed(0)} ms after reading again`})`,
  );

  // The readers beside them were never dropped and still get the next change.
  const patch = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.half}`, {
    token: world.writeToken,
    body: { trafficPercentage: 61 },
  });
  t.equal(patch.status, 200);
  const deadline = Date.now() + 60_000;
  while (!otherProject.ids.includes(world.ids.half) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  t.ok(otherProject.ids.includes(world.ids.half), 'the client on another project got the change');
  const lastRound = touchAll();
  while (sameProject.lastRound !== lastRound && Date.now() < deadline + 60_000) await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(
    sameProject.lastRound,
    lastRound,
    `the reading client on the same project got the next round to its last flag (${sameProject.events} events in all)`,
  );
  t.same([sameProject.opens, sameProject.errors, otherProject.opens, otherProject.errors], [1, 0, 1, 0], 'neither reader was disconnected');
  t.equal(await dropped(), kSlowClients, 'and neither was counted as dropped');
});
