// Slow and hostile clients (issue 8, item 6). At the same time, against one server:
//   - slowloris: connections that send a partial request line or headers and then one byte a second;
//   - slow bodies: PATCH requests whose body arrives one byte a second, or never;
//   - idle connections that never send anything;
//   - clients that ask for a large answer (a project of 1,500 flags) again and again, pipelined, and never
//     read (uWS closes a connection whose next request comes before the answer); clients that send one
//     such request and never read; and clients that ask for a 5 MB answer and never read (it cannot
//     all be written: uWS keeps the rest in its buffer and re-arms its idle timeout only when the client
//     takes some of it, so a client that takes nothing is closed by that timeout, 10 s);
//   - a header with a control character (uWS neither answers nor rejects it);
// while a well-behaved client keeps using the service. Checked: the well-behaved client is never
// blocked (every request answered, none waiting as long as uWS's idle timeout, the stall a blocking
// client would cause); the server closes every hostile connection by itself at uWS's idle timeout (10 s
// without progress, checked every 4 s: it covers answers nobody reads as well as requests that never
// complete), so it lets go of all of them while their clients still hold their ends; its memory stays
// bounded; shutdown is not held up. No bound here is a speed: on a loaded machine the idle timeout
// fires late too, and the clients hold their ends until the server has let go (a minute at most).
import t from 'tap';
import net from 'node:net';
import { call } from '../helpers/http.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';
import { kUnlimited, rssMiB, socketCount } from './support.js';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { putFlag } from '../../src/flags/records/flag-store.js';

const kNeverReads = 'never reads: ';
const kIdle = 'idle: connects, sends nothing';

interface Hostile {
  kind: string;
  /** ms from connecting until the server closed the connection; null if it had not when released. */
  closedAfterMs: number | null;
  bytesReceived: number;
}

/** What the hostile clients share: they hold their ends until `released`. */
interface Hold {
  released: Promise<void>;
  /** Connections that can see the server's close (not the never-reading ones) and have not yet. */
  open: number;
}

/**
 * Opens a connection, writes `first`, then one byte of `drip` every `everyMs`, until the server closes it
 * or the hold is released (the test has seen the server's side).
 */
function hostile(port: number, kind: string, first: string | Buffer, hold: Hold, drip = '', everyMs = 1000): Promise<Hostile> {
  const seesClose = !kind.startsWith(kNeverReads);
  if (seesClose) hold.open++;
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = net.connect(port, '127.0.0.1');
    let bytesReceived = 0;
    let done = false;
    let timer: NodeJS.Timeout | null = null;
    const finish = (closedAfterMs: number | null) => {
      if (done) return;
      done = true;
      if (timer) clearTimeout(timer);
      socket.destroy();
      if (seesClose && closedAfterMs !== null) hold.open--;
      resolve({ kind, closedAfterMs, bytesReceived });
    };
    void hold.released.then(() => finish(null));
    socket.on('data', (d: Buffer) => {
      bytesReceived += d.length;
      if (kind.startsWith('never reads')) socket.pause();
    });
    socket.on('close', () => finish(performance.now() - started));
    socket.on('error', () => {});
    socket.on('connect', () => {
      if (kind.startsWith('never reads')) socket.pause();
      if (first.length > 0) socket.write(first);
      let i = 0;
      const next = () => {
        if (done || i >= drip.length) return;
        socket.write(drip[i++]!);
        timer = setTimeout(next, everyMs);
      };
      if (drip.length > 0) timer = setTimeout(next, everyMs);
    });
  });
}

t.setTimeout(600_000);

t.test('slow and hostile clients do not block others, are disconnected by the server, and memory stays bounded', async (t) => {
  const dataDir = tempDataDir();
  const world = buildWorld(dataDir);
  // A project with 1,500 flags: its evaluation list and its Management API list are large answers (~100 KiB).
  const big = world.run('projectCreate', { principal: kOperator, name: 'Big', orgId: world.ids.orgA, kind: 'single' }).id;
  world.store.transact((w) => {
    for (let i = 0; i < 1500; i++)
      putFlag(w, {
        id: `flg_big${String(i).padStart(12, '0')}`,
        projectId: big,
        name: `big-flag-number-${i}`,
        description: '',
        tags: [],
        createdAt: i,
        updatedAt: i,
        kind: 'flag',
        cohorts: [],
        state: { enabled: true, trafficPercentage: 100, audienceId: null },
      });
  });
  const bigToken = world.run('tokenCreate', {
    projectId: big,
    principal: principalOf(world.ids.owner),
    name: 'big-read',
    permission: 'read',
  }).secret;
  // And one whose Management API list is ~5 MB (200 flags of 1,000 cohorts): more than the kernel's
  // socket buffers hold, so a client that does not read leaves the answer half-written.
  const huge = world.run('projectCreate', { principal: kOperator, name: 'Huge', orgId: world.ids.orgA, kind: 'single' }).id;
  const cohorts = Array.from({ length: 1000 }, (_, i) => `cohort-member-${String(i).padStart(10, '0')}`);
  world.store.transact((w) => {
    for (let i = 0; i < 200; i++)
      putFlag(w, {
        id: `flg_huge${String(i).padStart(11, '0')}`,
        projectId: huge,
        name: `huge-${i}`,
        description: '',
        tags: [],
        createdAt: i,
        updatedAt: i,
        kind: 'flag',
        cohorts,
        state: { enabled: true, trafficPercentage: 100, audienceId: null },
      });
  });
  const hugeToken = world.run('tokenCreate', {
    projectId: huge,
    principal: principalOf(world.ids.owner),
    name: 'huge-read',
    permission: 'read',
  }).secret;
  await world.store.close();
  const server = await startTestServer({ dataDir, env: { ...kUnlimited } });
  t.teardown(() => server.stop());
  server.proc.once('exit', (code, signal) => {
    if (code !== 0)
      t.comment(`server exited ${code} ${signal}; log tail:\n${server.logs().slice(-3000)}\nstdout tail:\n${server.output().slice(-1000)}`);
  });
  const pid = server.proc.pid!;
  const { port } = server;
  const listAnswer = await call(server.baseUrl, 'GET', `/v1/flags/project/${big}`);
  t.equal(listAnswer.status, 200);
  const rssBefore = rssMiB(pid);
  const socketsBefore = socketCount(pid);

  const patch = `PATCH /api/v1/flags/${world.ids.flag} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${world.secrets.write}\r\nContent-Type: application/json\r\nContent-Length: 64\r\n\r\n`;
  const evalBig = `GET /v1/flags/project/${big} HTTP/1.1\r\nHost: x\r\n\r\n`;
  const mgmtBig = `GET /api/v1/flags HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${bigToken}\r\n\r\n`;
  const attacks: Promise<Hostile>[] = [];
  // The hostile clients hold their ends until the test has seen the server's side (a minute at most).
  let release = () => {};
  const hold: Hold = { released: new Promise<void>((resolve) => (release = resolve)), open: 0 };
  const add = (n: number, make: () => Promise<Hostile>) => {
    for (let i = 0; i < n; i++) attacks.push(make());
  };
  const attackedAt = performance.now();
  add(300, () =>
    hostile(port, 'slowloris: partial request line, then 1 byte/s', 'GET /health HTT', hold, 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'),
  );
  add(300, () =>
    hostile(port, 'slowloris: request line, headers at 1 byte/s', 'GET /health HTTP/1.1\r\nHost: x\r\n', hold, `X-Slow: ${'y'.repeat(40)}`),
  );
  add(150, () => hostile(port, 'slow body: 1 byte/s', patch, hold, `{"enabled": true, "cohorts": ["${'z'.repeat(20)}"]}`));
  add(150, () => hostile(port, 'body never sent', patch, hold));
  add(300, () => hostile(port, kIdle, '', hold));
  add(50, () => hostile(port, 'never reads: 200 pipelined big management lists', mgmtBig.repeat(200), hold));
  add(50, () => hostile(port, 'never reads: 200 pipelined big evaluation lists', evalBig.repeat(200), hold));
  add(100, () => hostile(port, `${kNeverReads}one big answer`, evalBig, hold));
  // Answers given inside the request handler, pipelined faster than a non-reading client takes them.
  add(5, () => hostile(port, `${kNeverReads}5,000 pipelined /health`, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(5000), hold));
  add(5, () =>
    hostile(port, `${kNeverReads}5,000 pipelined CORS preflights`, 'OPTIONS /v1/flags/x HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(5000), hold),
  );
  add(3, () =>
    hostile(
      port,
      `${kNeverReads}one 5 MB answer`,
      `GET /api/v1/flags HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${hugeToken}\r\n\r\n`,
      hold,
    ),
  );
  add(20, () => hostile(port, 'control character in a header', 'GET /health HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n', hold));

  // Meanwhile, a well-behaved client: /health, an evaluation, a Management read and a PATCH, in turn, for
  // 16 s and at least kWellBehaved requests (a count, not a count per time: that is the machine's speed).
  const kWellBehaved = 51;
  const latencies: number[] = [];
  const failures: string[] = [];
  let rssPeak = rssBefore;
  const deadline = performance.now() + 16_000;
  for (let i = 0; performance.now() < deadline || i < kWellBehaved; i++) {
    const started = performance.now();
    try {
      const r =
        i % 4 === 0
          ? await call(server.baseUrl, 'GET', '/health')
          : i % 4 === 1
            ? await call(server.baseUrl, 'GET', `/v1/flags/${world.ids.flag}?targetingKey=k${i}`)
            : i % 4 === 2
              ? await call(server.baseUrl, 'GET', `/api/v1/flags/${world.ids.flag}`, { token: world.secrets.read })
              : await call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.flag}`, {
                  token: world.secrets.write,
                  body: { trafficPercentage: i % 100 },
                });
      if (r.status !== 200) failures.push(`#${i}: ${r.status} ${r.text.slice(0, 100)}`);
    } catch (err) {
      const cause = (err as Error & { cause?: Error & { code?: string } }).cause;
      failures.push(
        `#${i}: ${(err as Error).message} (${cause?.code ?? cause?.message ?? ''}) after ${(performance.now() - started).toFixed(0)} ms; server ${server.proc.exitCode === null ? 'running' : `exited ${server.proc.exitCode}`}`,
      );
    }
    latencies.push(performance.now() - started);
    rssPeak = Math.max(rssPeak, rssMiB(pid));
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  // The server's side: with the hostile clients still holding their ends, it must let go of every one by
  // itself (uWS's idle timeout, which also ends answers nobody reads), and each client that reads sees
  // its close. The bound only catches a hang.
  let socketsLeft = socketCount(pid);
  for (const deadline = performance.now() + 60_000; (socketsLeft > socketsBefore + 2 || hold.open > 0) && performance.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    socketsLeft = socketCount(pid);
  }
  const letGoAt = performance.now() - attackedAt;
  release();
  const results = await Promise.all(attacks);
  rssPeak = Math.max(rssPeak, rssMiB(pid));
  const rssAfter = rssMiB(pid);

  const byKind = new Map<string, Hostile[]>();
  for (const r of results) byKind.set(r.kind, [...(byKind.get(r.kind) ?? []), r]);
  for (const [kind, rs] of byKind) {
    const closed = rs
      .map((r) => r.closedAfterMs)
      .filter((ms): ms is number => ms !== null)
      .sort((a, b) => a - b);
    const answered = rs.filter((r) => r.bytesReceived > 0).length;
    t.comment(
      `${kind}: ${rs.length} connections, closed by the server after ${closed.length > 0 ? `${(closed[0]! / 1000).toFixed(1)}-${(closed.at(-1)! / 1000).toFixed(1)} s` : '-'}; ` +
        `${rs.length - closed.length} still open when released; ${answered} got some answer bytes`,
    );
    // A client that never reads cannot see the server's close once answers sit in the kernel's buffers:
    // the FIN waits behind bytes it does not read. The server's socket count below covers these.
    if (kind.startsWith(kNeverReads)) continue;
    t.equal(closed.length, rs.length, `${kind}: every connection closed by the server`);
  }
  t.comment(
    `server sockets: ${socketsBefore} before the attack, ${socketsLeft} ${(letGoAt / 1000).toFixed(1)} s into it (${attacks.length} hostile connections)`,
  );
  t.ok(socketsLeft <= socketsBefore + 2, 'the server let go of every hostile connection while their clients held their ends');
  latencies.sort((a, b) => a - b);
  const p99 = latencies[Math.floor(latencies.length * 0.99)]!;
  t.comment(
    `well-behaved client: ${latencies.length} requests during the attack, median ${latencies[latencies.length >> 1]!.toFixed(1)} ms, ` +
      `p99 ${p99.toFixed(1)} ms, slowest ${latencies.at(-1)!.toFixed(1)} ms; ${failures.length} failed`,
  );
  t.comment(
    `server memory (RSS): ${rssBefore.toFixed(0)} MiB before, ${rssPeak.toFixed(0)} MiB peak with ${attacks.length} hostile connections, ${rssAfter.toFixed(0)} MiB after`,
  );
  t.same(failures, [], 'every request of the well-behaved client was answered 200');
  // A server blocked by a hostile client would hold this one for as long as the stall lasts: until uWS's
  // idle timeout ends that client (10 s on a 4 s tick). The idle connections' own closes measure that
  // timeout on this machine as it is now (8-12 s quiet; 15-16 s beside eight busy loops, where a request
  // of this client once took 7.8 s with nothing blocked), so the distinction holds at any load.
  const idleTimeoutMs = Math.min(...byKind.get(kIdle)!.map((r) => r.closedAfterMs ?? Infinity));
  t.ok(
    latencies.at(-1)! < idleTimeoutMs,
    `never blocked (slowest ${latencies.at(-1)!.toFixed(0)} ms, under the idle timeout as it fired here: ${idleTimeoutMs.toFixed(0)} ms)`,
  );
  t.ok(rssPeak - rssBefore < 200, `memory stayed bounded (+${(rssPeak - rssBefore).toFixed(0)} MiB at the peak)`);

  t.equal(await server.stop(), 0, 'the server stops cleanly afterwards');
  t.notMatch(
    server.logs(),
    /drain budget ended with requests in flight/,
    'no abandoned request held its shutdown (none left when the drain ended)',
  );
});
