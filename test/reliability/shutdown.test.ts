// Graceful shutdown under load (issue 8, item 4): SIGTERM while evaluation and PATCH load runs. The load
// runs until the server has acknowledged a set number of PATCHes (however long a loaded machine takes,
// within a generous deadline), then the signal. Checked: every request sent before the signal gets its
// normal answer, a 200 (evaluations) or a 200 with the change made (PATCH), never a 503 and never a
// dropped connection; every PATCH acknowledged (before or after the signal) is on disk; requests sent
// after it get a 200, the defined 503 (evaluation: the overload body; PATCH: the `Storage unavailable`
// envelope), or are refused at the socket once the server stops listening or closes its connections,
// never a 500; and the process exits 0 within 5 s.
//
// "Sent" means written to the socket: node:http writes a request on a kept-alive connection before the
// event loop turns, and over loopback the bytes are in the server's receive buffer when write returns,
// so a request started in an earlier turn than the kill is in the server's hands before the signal.
import { once } from 'node:events';
import t from 'tap';
import type { Test } from 'tap';
import http from 'node:http';
import net from 'node:net';
import { call } from '../helpers/http.js';
import { freshRead } from '../helpers/fresh-read.js';
import { startTestServer, tempDataDir, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/smtp.js';
import { PatchWriter, request, verifyPatches, type Outcome, type PatchTarget } from './load.js';
import { buildRichWorld, kUnlimited } from './support.js';

const kEvalClients = 12;
/** PATCHes the server must have acknowledged before the signal, and evaluations answered. */
const kAckedBeforeSignal = 60;
const kEvalsBeforeSignal = 500;
/** How long the load may take to reach those counts on a loaded machine. */
const kLoadDeadlineMs = 90_000;
const kEvalStopping = JSON.stringify({
  error: 'Service unavailable',
  detail: 'The evaluation queue is full or the server is stopping; retry after a second.',
});

t.setTimeout(600_000);

t.test('SIGTERM under evaluation and PATCH load', async (t) => {
  const dataDir = tempDataDir();
  const world = buildRichWorld(dataDir);
  await world.store.close();
  const { ids, secrets } = world;
  const server = await startTestServer({ dataDir, env: { ...kUnlimited } });
  const targets: PatchTarget[] = [
    { secret: secrets.write, flagId: ids.flag, projectId: ids.single, env: null },
    { secret: secrets.write, flagId: ids.flag2, projectId: ids.single, env: null },
    { secret: secrets.multiWrite, flagId: ids.groupFlag, projectId: ids.multi, env: 'production' },
    { secret: secrets.stagingWrite, flagId: ids.groupFlag, projectId: ids.multi, env: 'staging' },
  ];
  const writers = targets.map((target, i) => new PatchWriter(server.baseUrl, `w${i}`, target).start());

  // Evaluation clients: each its own keep-alive connection, requests back to back until one fails.
  const evalOutcomes: Outcome[] = [];
  const evalPaths = [
    `/v1/flags/${ids.flag}?targetingKey=u`,
    `/v1/flags/${ids.groupFlag}?env=staging&cohort=qa`,
    `/v1/flags/project/${ids.single}?cohort=alice`,
  ];
  let stopEval = false;
  const evalLoops = Array.from({ length: kEvalClients }, async (_, i) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    for (let n = 0; !stopEval; n++) {
      const o: Outcome = { startedAt: performance.now(), endedAt: 0, status: null, error: null };
      evalOutcomes.push(o);
      try {
        const r = await request(server.baseUrl, agent, 'GET', evalPaths[(i + n) % evalPaths.length]!, {});
        o.status = r.status;
        if (r.status !== 200) o.text = r.text;
      } catch (err) {
        o.error = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      }
      o.endedAt = performance.now();
      if (o.error !== null) break;
    }
    agent.destroy();
  });

  // Load until enough writes were acknowledged (not for a fixed time: a loaded machine is slower).
  const loadStarted = performance.now();
  const acked = () => writers.reduce((n, w) => n + w.acked.length, 0);
  const evaluated = () => evalOutcomes.filter((o) => o.status === 200).length;
  while ((acked() < kAckedBeforeSignal || evaluated() < kEvalsBeforeSignal) && performance.now() - loadStarted < kLoadDeadlineMs) {
    if (writers.some((w) => w.outcomes.some((o) => o.status === null && o.endedAt > 0))) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const loadMs = performance.now() - loadStarted;
  const ackedAtSignal = acked();
  const evaluatedAtSignal = evaluated();

  const exited = new Promise<number | null>((resolve) => server.proc.once('exit', (code) => resolve(code)));
  const signalledAt = performance.now();
  server.proc.kill('SIGTERM');
  const code = await exited;
  const exitMs = performance.now() - signalledAt;
  stopEval = true;
  await Promise.all(evalLoops);
  await Promise.all(writers.map((w) => w.stop()));

  const all = [
    ...evalOutcomes.map((o) => ({ ...o, kind: 'eval' })),
    ...writers.flatMap((w) => w.outcomes.map((o) => ({ ...o, kind: 'patch' }))),
  ];
  const before = all.filter((o) => o.startedAt < signalledAt);
  const after = all.filter((o) => o.startedAt >= signalledAt);
  const inFlightAtSignal = before.filter((o) => o.endedAt >= signalledAt);
  const notNormal = before.filter((o) => o.status !== 200);
  // A 200 that did not change the flag (every PATCH sets a new value): never right, before or after.
  const patchesNotApplied = writers.flatMap((w) =>
    w.refused.filter((r) => r.status === 200).map((r) => `${w.tag}: ${JSON.stringify(r.body).slice(0, 160)}`),
  );
  // A refusal after the signal: a 503 with its defined body, or the connection refused or closed before an answer.
  const undefinedAfter = after.filter((o) => {
    if (o.status === 200) return false;
    if (o.status === 503) {
      if (o.kind === 'eval') return o.text !== kEvalStopping;
      const body = JSON.parse(o.text ?? '{}');
      return body.error !== 'Storage unavailable' || typeof body.detail !== 'string' || !String(body.docs).endsWith('#storage-unavailable');
    }
    return o.status !== null || !['ECONNREFUSED', 'ECONNRESET', 'EPIPE'].includes(o.error ?? '');
  });
  const answeredAfter = after.filter((o) => o.status !== null);
  const refusedAfter = after.filter((o) => o.status === null);
  const lastAnswer = Math.max(...all.filter((o) => o.status !== null).map((o) => o.endedAt)) - signalledAt;

  const disk = await freshRead(dataDir);
  const verdict = verifyPatches(disk, writers);
  t.comment(
    `shutdown: SIGTERM after ${(loadMs / 1000).toFixed(1)} s of load (${kEvalClients} evaluation clients, ${writers.length} PATCH writers), ` +
      `once ${ackedAtSignal} PATCHes were acknowledged and ${evaluatedAtSignal} evaluations answered; exit ${code} after ${exitMs.toFixed(0)} ms; ` +
      `${before.length} requests sent before the signal (${inFlightAtSignal.length} of them still unanswered when it was sent), ${notNormal.length} without their 200; ` +
      `after it ${answeredAfter.length} answered (${after.filter((o) => o.status === 503).length} of them 503) and ${refusedAfter.length} refused at the socket ` +
      `(${[...new Set(refusedAfter.map((o) => o.error))].join(', ')}); last answer ${lastAnswer.toFixed(0)} ms after the signal; ` +
      `${verdict.checked} acknowledged PATCHes checked on disk, ${verdict.lost.length} lost`,
  );
  t.ok(
    ackedAtSignal >= kAckedBeforeSignal && evaluatedAtSignal >= kEvalsBeforeSignal,
    `the load was real: ${ackedAtSignal} PATCHes acknowledged (${kAckedBeforeSignal} required) and ${evaluatedAtSignal} evaluations (${kEvalsBeforeSignal}) before the signal, in ${(loadMs / 1000).toFixed(1)} s`,
  );
  t.equal(code, 0, 'exit code 0');
  t.notMatch(server.logs(), /shutdown did not finish in time/, `exited before the shutdown deadline (${exitMs.toFixed(0)} ms)`);
  t.same(
    notNormal.map(
      (o) =>
        `${o.kind} sent ${(signalledAt - o.startedAt).toFixed(1)} ms before the signal: ${o.status ?? o.error} ${o.text?.slice(0, 120) ?? ''}`,
    ),
    [],
    'every request sent before SIGTERM got its normal 200',
  );
  t.same(patchesNotApplied, [], 'every PATCH answered 200 was applied (changed)');
  t.same(
    undefinedAfter.map((o) => `${o.kind} ${o.status ?? o.error} ${o.text?.slice(0, 160) ?? ''}`),
    [],
    'requests sent after SIGTERM got a 200, the defined 503, or were refused at the socket',
  );
  t.same(verdict.lost, [], 'every acknowledged PATCH is on disk');
  t.ok(verdict.checked >= kAckedBeforeSignal, `${verdict.checked} acknowledged PATCHes checked`);
});

/**
 * A server on a rich world and a PATCH sent to it as headers and half its body, the rest never sent.
 * Once a request on another connection is answered, the server's loop has read those bytes (it reads
 * every ready socket in its turn): the PATCH is in flight.
 */
async function halfSentPatch(t: Test, env: Record<string, string> = {}): Promise<{ server: TestServer; socket: net.Socket }> {
  const dataDir = tempDataDir();
  const world = buildRichWorld(dataDir);
  await world.store.close();
  const server = await startTestServer({ dataDir, env: { ...kUnlimited, ...env } });
  const socket = net.connect(server.port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(
    `PATCH /api/v1/flags/${world.ids.flag} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${world.secrets.write}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"enabled":',
  );
  t.equal((await call(server.baseUrl, 'GET', '/health')).status, 200);
  return { server, socket };
}

t.test('a client that went away in the middle of a request body does not hold up shutdown', async (t) => {
  const { server, socket } = await halfSentPatch(t);
  // The client disconnects: the request never completes.
  socket.destroy();
  await new Promise((resolve) => setTimeout(resolve, 300));
  const started = performance.now();
  t.equal(await server.stop(), 0, 'exit 0');
  t.comment(`shutdown after an abandoned upload: ${(performance.now() - started).toFixed(0)} ms`);
  t.notMatch(
    server.logs(),
    /drain budget ended with requests in flight/,
    'not held for the drain budget: the abandoned upload was no longer in flight',
  );
});

t.test('an upload still open when the drain budget ends is cut off, and the log says so', async (t) => {
  // The client keeps its end open: the request stays in flight.
  const { server } = await halfSentPatch(t);
  t.equal(await server.stop(), 0, 'exit 0: the drain budget ends the wait, not the shutdown deadline');
  t.match(server.logs(), /drain budget ended with requests in flight/, 'the request it cut off is logged');
  t.match(server.logs(), /"inFlight":1\b/, 'one request');
});

t.test('a second SIGTERM while the node drains changes nothing: it still drains and exits 0', async (t) => {
  // The half-sent upload holds the drain open to its budget (3.5 s): the second signal comes within it.
  const { server } = await halfSentPatch(t, { FLAGWIRE_LOG_LEVEL: 'info' });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    server.proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  server.proc.kill('SIGTERM');
  await until('the node shutting down', () => /shutting down/.test(server.logs()));
  server.proc.kill('SIGTERM');
  const { code, signal } = await exited;
  if (!server.proc.stderr!.closed) await once(server.proc.stderr!, 'close');
  t.same({ code, signal }, { code: 0, signal: null }, 'exit 0, not ended by the second signal', {
    logs: code === 0 ? '' : server.logs().slice(-4000),
  });
  t.match(server.logs(), /already shutting down/, 'the second signal is logged');
  t.match(server.logs(), /drain budget ended with requests in flight/, 'the drain ran to its budget');
});
