// Events counted on two nodes sharing PostgreSQL (issue 58, item 4; docs/events.md: Where events are
// counted): exposures and outcomes of the same subjects sent to both nodes at once give, on either
// node, exactly the statistics a recomputation from the events gives (a subject exposed on one node has
// its outcomes on the other counted in its variant); kill -9 of a node while clients send batches
// under batch ids and send each again elsewhere until it is answered leaves every batch counted once;
// a batch sent again to the other node is answered as the first time and counted once, and its id is
// forgotten a day later; a subject erased on one node is gone from both nodes' statistics; a batch sent
// while PostgreSQL is down is refused and counts nothing, and counts once sent again after; batches of
// 1,000 subjects, 8 at once on each node, the same subjects on both, count each subject once; a batch
// counts while another session holds the cluster's write lock, which configuration writes wait for.
// Raw events (a project that keeps them; PostgreSQL schema 4): through the kill -9 above, and sent
// again, each kept exactly once; exported from the other node (JSON lines, Parquet, the command line)
// as sent, in an order whose replay gives the statistics exactly; a subject erased on one node is gone
// from both nodes' exports; expired ones forgotten by the batch that keeps more, or after any batch; and
// the storage limits, with batches sent at once to both nodes, refuse exactly at their bounds.
//
// The events are sent in phases (outcomes before any exposure, then exposures, then exposures again,
// then outcomes), each phase's batches at once to both nodes: within a phase the order PostgreSQL
// applies them in changes nothing (a subject's exposure fixes where its outcomes count; totals add
// up), so the recomputation replays the phases in order and any order within them. The nodes, the
// events and the recomputation are events-pg-world.ts's.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pgLib from 'pg';
import t from 'tap';
import type { CountedEvent } from '../../src/events/tally.js';
import { call, type Reply } from '../helpers/http.js';
import { parquetRows } from '../helpers/parquet-rows.js';
import { advanceClock } from '../helpers/test-hooks.js';
import { sharedPostgres, startPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/scratch-dir.js';
import type { TestServer } from '../helpers/server.js';
import { cli, startNode, until, waitReady } from './support.js';
import {
  kFlags,
  keepRaw,
  asKept,
  exported,
  jsonLinesOf,
  sortedKept,
  replayed,
  phases,
  batches,
  compare,
  eventNodes,
} from './events-pg-world.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());
const { world, projectWorld, clockWorld, usage } = eventNodes(pg);

t.test("the same subjects' events sent to both nodes at once: either node's statistics are exactly the recomputation's", async (t) => {
  // Two front-end threads a node (kDefaultNodesEnv, events-pg-world.ts): each counts on a pool of its own.
  const { nodes, key, token } = await projectWorld(t);
  const { before, exposures, again, after } = phases(1, 40);
  const counted: CountedEvent[] = [];
  let sent = 0;
  for (const [phase, events, size] of [
    ['before exposure', before, 20],
    ['exposures', exposures, 15],
    ['exposures again', again, 10],
    ['after exposure', after, 40],
  ] as const) {
    // Every batch of the phase at once, to the nodes in turn: the same subjects on both.
    const answers = await Promise.all(
      batches(events, size).map((batch) =>
        call(nodes[sent++ % 2]!.baseUrl, 'POST', '/ofrep/v1/events', { token: key, body: { events: batch.map((e) => e.wire) } }),
      ),
    );
    for (const r of answers) t.equal(r.status, 200, r.text);
    const accepted = answers.reduce((n, r) => n + r.json.accepted, 0);
    const duplicates = answers.reduce((n, r) => n + r.json.duplicates, 0);
    t.equal(accepted, events.length, `${phase}: every event accepted`);
    t.equal(duplicates, phase === 'exposures again' ? events.length : 0, `${phase}: ${duplicates} duplicates`);
    t.strictSame(
      answers.flatMap((r) => r.json.rejected),
      [],
      `${phase}: none rejected`,
    );
    counted.push(...events.map((e) => e.counted));
  }
  for (const node of nodes) await compare(t, node, token, counted, 'sent to both nodes');
  const stats = await call(nodes[0]!.baseUrl, 'GET', `/api/v1/experiments/${kFlags[0].experiment}/statistics`, { token });
  t.ok(
    stats.json.variants.some((v: { metrics: { events: number; covariate: { events: number } }[] }) =>
      v.metrics.some((m) => m.events > 0 && m.covariate.events > 0),
    ),
    'outcomes counted on both sides of exposures',
  );
});

t.test(
  'kill -9 of a node while clients send batches under batch ids, each sent again until answered: every batch counted once',
  async (t) => {
    const w = await world(t);
    const { url, nodes, key, token } = w;
    await keepRaw(t, w, 30);
    const { before, exposures, again, after } = phases(2, 60);
    const counted: CountedEvent[] = [];
    // Exposures first, to node A then B (their order decides nothing here).
    for (const [i, events] of [before, exposures, again].entries()) {
      const r = await call(nodes[i % 2]!.baseUrl, 'POST', '/ofrep/v1/events', { token: key, body: { events: events.map((e) => e.wire) } });
      t.equal(r.status, 200, r.text);
      counted.push(...events.map((e) => e.counted));
    }
    // Then the outcomes, many times over, as batches under ids, by four clients, while node A is killed
    // and started again. A client sends each batch to the nodes in turn, the next one after a failure,
    // until one answers 200; one in five answered it sends again to the other node, which must answer
    // the same and count nothing more.
    const load = [...after, ...after, ...after, ...after, ...after];
    const queue = batches(load, 25).map((batch, i) => ({ id: `client-batch-${i}`, batch }));
    const live: (TestServer | null)[] = [...nodes];
    const failures = new Map<string, number>();
    const note = (what: string) => failures.set(what, (failures.get(what) ?? 0) + 1);
    let answered = 0;
    let resent = 0;
    let answeredByRestarted = 0;
    /** Batches sent to each node and not yet answered. */
    const inFlight = [0, 0];
    let turn = 0;
    const body = (item: (typeof queue)[number]) => ({ batchId: item.id, events: item.batch.map((e) => e.wire) });
    const post = async (node: TestServer | null, item: (typeof queue)[number]): Promise<Reply | null> => {
      if (node === null) {
        note('node down');
        return null;
      }
      const at = live.indexOf(node);
      inFlight[at]!++;
      try {
        const r = await call(node.baseUrl, 'POST', '/ofrep/v1/events', { token: key, body: body(item) });
        if (r.status === 200) return r;
        note(`${r.status} ${r.json?.detail ?? r.text}`.slice(0, 100));
      } catch (err) {
        // The node died with the batch in flight: the client does not know whether it counted.
        note(String((err as Error).cause ?? err).slice(0, 60));
      } finally {
        inFlight[at]!--;
      }
      return null;
    };
    // The last third of the batches waits for A to be back: clients send to the restarted node too.
    let back!: () => void;
    const restarted = new Promise<void>((resolve) => (back = resolve));
    const gate = Math.floor((queue.length * 2) / 3);
    let taken = 0;
    const client = async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
        if (taken++ >= gate) await restarted;
        let answer: Reply | null = null;
        let at = turn++ % 2;
        while (answer === null) {
          answer = await post(live[at]!, item);
          if (answer === null) {
            at = 1 - at;
            await sleep(20);
          }
        }
        t.equal(answer.json.accepted, item.batch.length, `${item.id}: accepted whole`);
        if (at === 0 && live[0] !== nodes[0]) answeredByRestarted++;
        answered++;
        if (answered % 5 === 0) {
          let again: Reply | null = null;
          for (let other = 1 - at; again === null; other = 1 - other) {
            again = await post(live[other]!, item);
            if (again === null) await sleep(20);
          }
          t.strictSame(again.json, answer.json, `${item.id} sent again: answered as the first time`);
          resent++;
        }
      }
    };
    const chaos = async () => {
      // Killed once a quarter of the batches are answered, with batches in flight to it.
      await until(async () => answered >= 25 && inFlight[0]! > 0, 120_000, 'batches answered before the kill');
      const a = live[0]!;
      live[0] = null;
      a.proc.kill('SIGKILL');
      await a.stop();
      t.comment(`node A killed with ${answered} batches answered`);
      await sleep(500);
      const restarted = await startNode(url, a.dataDir);
      t.teardown(() => restarted.stop());
      await waitReady(restarted);
      live[0] = restarted;
      back();
      t.comment(`node A back with ${answered} batches answered`);
    };
    await Promise.all([chaos(), client(), client(), client(), client()]);
    t.comment(`answered ${answered}, sent again ${resent}, failures on the way: ${JSON.stringify([...failures])}`);
    t.ok(failures.size > 0, 'some batches were not answered by the killed node, and were sent again elsewhere');
    t.ok(answeredByRestarted > 0, `the restarted node answered ${answeredByRestarted} batches`);
    t.ok(live[0] !== null && live[0] !== nodes[0], 'node A was killed and started again');
    counted.push(...load.map((e) => e.counted));
    for (const node of live) await compare(t, node!, token, counted, 'after kill -9 under load');
    // Every event answered kept exactly once: none lost with the killed node, none twice for a batch sent again.
    const kept = await exported(live[1]!, token);
    t.strictSame(
      sortedKept(kept),
      sortedKept([...before, ...exposures, ...again, ...load].map((e) => asKept(e.wire))),
      'the raw events exported from B are those sent, each once',
    );
    for (const node of live) await compare(t, node!, token, replayed(kept), 'the raw events replayed in the order exported');
    const u = await usage(url);
    t.equal(u.rows, kept.length);
    t.equal(u.bytes, u.rawSum, "the project's raw bytes as counted are its raw events' bytes");
  },
);

t.test("a subject erased on one node is gone from both nodes' statistics, exactly", async (t) => {
  const { nodes, key, token } = await projectWorld(t);
  const { before, exposures, again, after } = phases(3, 30);
  const counted: CountedEvent[] = [];
  for (const [i, events] of [before, exposures, again, after].entries()) {
    const r = await call(nodes[i % 2]!.baseUrl, 'POST', '/ofrep/v1/events', { token: key, body: { events: events.map((e) => e.wire) } });
    t.equal(r.status, 200, r.text);
    counted.push(...events.map((e) => e.counted));
  }
  const erase = (node: TestServer, subject: string) =>
    call(node.baseUrl, 'POST', '/api/v1/events/subjects/erase', { token, body: { targetingKey: subject } });
  for (const subject of ['user-3', 'user-11']) {
    const r = await erase(nodes[1]!, subject);
    t.equal(r.status, 200, r.text);
    t.strictSame(r.json, { targetingKey: subject, environment: null, erased: true });
  }
  const twice = await erase(nodes[0]!, 'user-3');
  t.strictSame(twice.json, { targetingKey: 'user-3', environment: null, erased: false }, 'erased on B: nothing left of it on A');
  const kept = counted.filter((e) => e.subject !== 'user-3' && e.subject !== 'user-11');
  for (const node of nodes) await compare(t, node, token, kept, 'two subjects erased');
});

t.test(
  'raw events kept in PostgreSQL: exported from the other node as sent, as JSON lines, Parquet and by the command line; a subject erased on one node is gone from both',
  async (t) => {
    const w = await projectWorld(t);
    const { url, nodes, key, token, projectId } = w;
    const [a, b] = nodes as [TestServer, TestServer];
    await keepRaw(t, w, 30);
    const { before, exposures, again, after } = phases(4, 10);
    const sent = [...before, ...exposures, ...again, ...after];
    for (const [i, events] of [before, exposures, again, after].entries()) {
      const body = { batchId: `raw-${i}`, events: events.map((e) => e.wire) };
      const r = await call(nodes[i % 2]!.baseUrl, 'POST', '/ofrep/v1/events', { token: key, body });
      t.equal(r.status, 200, r.text);
      const resent = await call(nodes[(i + 1) % 2]!.baseUrl, 'POST', '/ofrep/v1/events', { token: key, body });
      t.strictSame(resent.json, r.json, `batch ${i} sent again to the other node: answered as the first time`);
    }
    const kept = await exported(b, token);
    t.strictSame(sortedKept(kept), sortedKept(sent.map((e) => asKept(e.wire))), 'exported from B: every event sent, once');
    t.strictSame(await exported(a, token), kept, 'A exports the same, in the same order');
    for (const node of nodes) await compare(t, node, token, replayed(kept), 'the raw events replayed in the order exported');

    const p = await fetch(`${a.baseUrl}/api/v1/events/export?format=parquet`, { headers: { authorization: `Bearer ${token}` } });
    t.equal(p.status, 200);
    t.equal(p.headers.get('content-type'), 'application/vnd.apache.parquet');
    t.strictSame(await parquetRows(new Uint8Array(await p.arrayBuffer())), kept, "the Parquet file's rows are the JSON lines'");
    const out = join(tempDir(t), 'events.jsonl');
    const run = await cli(tempDir(t), ['events', 'export', projectId, '--out', out, '--database', url], { inProcess: true });
    t.equal(run.code, 0, run.stderr);
    t.strictSame(jsonLinesOf(readFileSync(out, 'utf8')), kept, 'the command line with --database exports the same');

    const erased = await call(a.baseUrl, 'POST', '/api/v1/events/subjects/erase', { token, body: { targetingKey: 'user-3' } });
    t.strictSame(erased.json, { targetingKey: 'user-3', environment: null, erased: true });
    const left = kept.filter((e) => e.targetingKey !== 'user-3');
    t.ok(left.length < kept.length, 'user-3 had raw events');
    for (const node of nodes) t.strictSame(await exported(node, token), left, `user-3 erased on A: none of its events on ${node.baseUrl}`);
    const twice = await call(b.baseUrl, 'POST', '/api/v1/events/subjects/erase', { token, body: { targetingKey: 'user-3' } });
    t.equal(twice.json.erased, false, 'erased on A: nothing left of it on B');
    for (const node of nodes)
      await compare(t, node, token, replayed(left), 'the statistics after the erasure are the replay of the raw events left');
    const u = await usage(url);
    t.equal(u.rows, left.length);
    t.equal(u.bytes, u.rawSum, "the project's raw bytes follow the erasure");
    t.equal(Number(u.subjects), u.subjectRows, 'the count of subjects follows the erasure');
  },
);

t.test(
  "raw events expire by retention: the batch that keeps more forgets its project's first; with none kept, any batch forgets them after",
  async (t) => {
    const w = await clockWorld(t);
    const { url, nodes, key, token } = w;
    const [a, b] = nodes as [TestServer, TestServer];
    await keepRaw(t, w, 1);
    const track = (subject: string) => ({ kind: 'track', key: 'purchase', targetingKey: subject, value: 1, timestamp: Date.now() });
    const send = (node: TestServer, events: unknown[]) => call(node.baseUrl, 'POST', '/ofrep/v1/events', { token: key, body: { events } });
    t.equal((await send(a, [track('ann'), track('bob'), track('cay')])).status, 200);
    t.equal((await usage(url)).rows, 3);
    // A day and an hour on, on A's clock: its next batch keeps two more and forgets the three, in its transaction.
    await advanceClock(a, 25 * 3600);
    t.equal((await send(a, [track('dan'), track('eve')])).status, 200);
    let u = await usage(url);
    t.equal(u.rows, 2, 'the expired three forgotten by the batch that kept two');
    t.equal(u.bytes, u.rawSum, 'and their bytes taken off');
    t.strictSame(
      // Stored at A's clock, a day on: B exports up to then.
      (await exported(b, token, `?to=${Date.now() + 30 * 3_600_000}`)).map((e) => e.targetingKey),
      ['dan', 'eve'],
      'B exports only what is kept',
    );
    // No raw events kept any more: a batch on B, two days on, forgets the last two after its commit.
    await keepRaw(t, w, null);
    await advanceClock(b, 50 * 3600);
    t.equal((await send(b, [track('fay')])).status, 200);
    await until(async () => (await usage(url)).rows === 0, 60_000, 'the expired raw events forgotten after a batch');
    u = await usage(url);
    t.equal(u.bytes, '0', 'no raw bytes left');
  },
);

t.test('the storage limits, with batches sent at once to both nodes, refuse exactly at their bounds', async (t) => {
  const kSubjects = 50;
  const kRawBytes = 20_000;
  const w = await world(t, {
    FLAGWIRE_EVENT_SUBJECTS_PER_ENVIRONMENT: String(kSubjects),
    FLAGWIRE_RAW_EVENT_BYTES_PER_PROJECT: String(kRawBytes),
  });
  const { url, nodes, key, token } = w;
  const send = (n: number, events: unknown[]) => call(nodes[n % 2]!.baseUrl, 'POST', '/ofrep/v1/events', { token: key, body: { events } });
  /**
   * Each batch's answer, 8 sent at once to each node. Batches of a project that take the same limit's
   * row commit one at a time, so on a busy machine one may wait past its pool's 5 s for a connection:
   * that 503 counted nothing, and the batch is sent again under its id, as a client does.
   */
  let batchNo = 0;
  const sendAll = async (bodies: unknown[][]): Promise<Reply[]> => {
    const answers: Reply[] = [];
    const first = batchNo;
    batchNo += bodies.length;
    let next = 0;
    const worker = async (node: number) => {
      for (let i = next++; i < bodies.length; i = next++) {
        const body = { batchId: `limits-${first + i}`, events: bodies[i] };
        let r = await call(nodes[node]!.baseUrl, 'POST', '/ofrep/v1/events', { token: key, body });
        while (r.status === 503) r = await call(nodes[node]!.baseUrl, 'POST', '/ofrep/v1/events', { token: key, body });
        answers[i] = r;
      }
    };
    await Promise.all(Array.from({ length: 16 }, (_, i) => worker(i % 2)));
    return answers;
  };
  const subject = (i: number) => `s-${String(i).padStart(3, '0')}`;
  const exposure = (i: number) => ({
    kind: 'exposure',
    key: kFlags[0].name,
    targetingKey: subject(i),
    variant: 'on',
    timestamp: Date.now(),
  });
  // A new subject a batch, 100 of them, 8 at once on each node: 50 counted, exactly.
  const answers = await sendAll(Array.from({ length: 100 }, (_, i) => [exposure(i)]));
  const ok = answers.flatMap((r, i) => (r.status === 200 ? [i] : []));
  t.equal(ok.length, kSubjects, `${kSubjects} batches counted`);
  for (const r of answers.filter((r) => r.status !== 200)) {
    t.equal(r.status, 429, r.text);
    t.equal(r.headers.get('retry-after'), '3600');
    t.match(r.json, {
      error: 'Event storage full',
      detail: /this batch would add 1: at most 50 are kept \(FLAGWIRE_EVENT_SUBJECTS_PER_ENVIRONMENT\)/,
    });
  }
  const stats = await call(nodes[1]!.baseUrl, 'GET', `/api/v1/experiments/${kFlags[0].experiment}/statistics`, { token });
  t.strictSame(stats.json.variants, [{ variant: 'on', subjects: kSubjects, metrics: [] }], 'the refused ones counted nothing');
  let u = await usage(url);
  t.equal(u.subjects, String(kSubjects));
  t.equal(u.subjectRows, kSubjects);
  t.equal((await send(1, [exposure(ok[0]!)])).status, 200, 'a subject already kept still counts');

  // Raw events: one track of one kept subject a batch, each of the same bytes b; a batch passes while the
  // project's bytes are below the limit, so exactly ceil(limit / b) pass, however the nodes interleave.
  await keepRaw(t, w, 30);
  const track = () => ({ kind: 'track', key: 'purchase', targetingKey: subject(ok[0]!), value: 5, timestamp: Date.now() });
  t.equal((await send(0, [track()])).status, 200);
  const b = Number((await usage(url)).bytes);
  const passes = Math.ceil(kRawBytes / b);
  const more = await sendAll(Array.from({ length: passes + 30 }, () => [track()]));
  t.equal(more.filter((r) => r.status === 200).length, passes - 1, `${passes} batches of ${b} bytes kept in all, the first included`);
  for (const r of more.filter((r) => r.status !== 200)) {
    t.equal(r.status, 429, r.text);
    const wait = Number(r.headers.get('retry-after'));
    t.ok(wait > 30 * 86_400 - 600 && wait <= 30 * 86_400, `Retry-After ${wait}: when the oldest raw event expires`);
    t.match(r.json, { error: 'Event storage full', detail: /bytes of raw events, its most \(FLAGWIRE_RAW_EVENT_BYTES_PER_PROJECT\)/ });
  }
  u = await usage(url);
  t.equal(u.rows, passes, 'the refused batches kept nothing');
  t.equal(u.bytes, String(passes * b));
  t.equal(u.rawSum, u.bytes);
  const after = await call(nodes[0]!.baseUrl, 'GET', `/api/v1/experiments/${kFlags[0].experiment}/statistics`, { token });
  t.equal(after.json.variants[0].metrics[0].events, passes, 'and counted nothing');
});

t.test('a batch id is one for both nodes, and forgotten 24 hours on by the batches that follow', async (t) => {
  const { url, nodes, key, token } = await clockWorld(t);
  const [a, b] = nodes as [TestServer, TestServer];
  // The raw events test left B's clock a day past A's: B's batches would forget A's ids at once. The
  // clock behind is moved to the other's (each has moved by whole seconds).
  const apart = Math.round(((await advanceClock(b, 0)) - (await advanceClock(a, 0))) / 1000);
  if (apart !== 0) await advanceClock(apart > 0 ? a : b, Math.abs(apart));
  const database = new URL(url).pathname.slice(1);
  const ids = async () =>
    (
      await pg.admin<{ id: string }>(database, "SELECT convert_from(batch_id, 'UTF8') AS id FROM flagwire_tally_batches ORDER BY 1")
    ).rows.map((r) => r.id);
  const send = (node: TestServer, batchId: string, subject: string) =>
    call(node.baseUrl, 'POST', '/ofrep/v1/events', {
      token: key,
      body: { batchId, events: [{ kind: 'exposure', key: kFlags[0].name, targetingKey: subject, variant: 'on', timestamp: Date.now() }] },
    });
  const first = await send(a, 'day-1', 'ann');
  t.strictSame(first.json, { accepted: 1, duplicates: 0, rejected: [] });
  // The same id from B (another subject: were it counted, ann's exposure would not be the one counted).
  const again = await send(b, 'day-1', 'bob');
  t.strictSame(again.json, first.json, 'B answers the batch A counted as A did');
  t.strictSame(await ids(), ['day-1']);
  // A day and an hour later on A's clock, a batch there forgets the first one's id.
  await advanceClock(a, 25 * 3600);
  t.strictSame((await send(a, 'day-2', 'cat')).json, { accepted: 1, duplicates: 0, rejected: [] });
  t.strictSame(await ids(), ['day-2'], "day-1's id forgotten, day-2's kept");
  const stats = await call(b.baseUrl, 'GET', `/api/v1/experiments/${kFlags[0].experiment}/statistics`, { token });
  t.strictSame(
    stats.json.variants.map((v: { variant: string; subjects: number }) => [v.variant, v.subjects]),
    [['on', 2]],
    'ann and cat exposed; bob, in the batch sent again, not',
  );
});

t.test("a batch counts while a transaction holds the cluster's write lock: events never take it", async (t) => {
  // On the shared nodes: the lock is let go before the test ends, and the statistics read are its project's.
  const { url, nodes, key, token } = await projectWorld(t);
  const a = nodes[0]!.baseUrl;
  // What every configuration write takes first (src/store/pg/pg-system.ts: the revision row), held by
  // another session as a stuck writer of another node would hold it.
  const holder = new pgLib.Client({ connectionString: url });
  await holder.connect();
  t.teardown(() => holder.end());
  await holder.query('BEGIN');
  await holder.query('SELECT revision FROM flagwire_meta FOR UPDATE');
  let written = false;
  const write = call(a, 'POST', '/api/v1/flags', { token, body: { name: 'made-while-held' } }).then((r) => {
    written = true;
    return r;
  });
  const sent = await call(a, 'POST', '/ofrep/v1/events', {
    token: key,
    body: { events: [{ kind: 'exposure', key: kFlags[0].name, targetingKey: 'held', variant: 'on', timestamp: Date.now() }] },
  });
  t.strictSame(sent.json, { accepted: 1, duplicates: 0, rejected: [] }, 'counted and answered');
  const stats = await call(nodes[1]!.baseUrl, 'GET', `/api/v1/experiments/${kFlags[0].experiment}/statistics`, { token });
  t.strictSame(
    stats.json.variants.map((v: { variant: string; subjects: number }) => [v.variant, v.subjects]),
    [['on', 1]],
    "and in the other node's statistics",
  );
  t.notOk(written, 'while a configuration write waits for the lock');
  await holder.query('ROLLBACK');
  t.equal((await write).status, 201, 'which goes through once it is free');
});

t.test('PostgreSQL down: a batch is refused and counts nothing; sent again under its id once it is back, it counts once', async (t) => {
  // A cluster of this test's own: it is stopped. One node: what it refuses and counts is the test.
  const own = await startPostgres();
  t.teardown(() => own.destroy());
  const { url, nodes, key, token } = await world(t, {}, own, 1);
  const node = nodes[0]!;
  const database = new URL(url).pathname.slice(1);
  const batch = {
    batchId: 'while-down',
    events: [
      { kind: 'exposure', key: kFlags[0].name, targetingKey: 'ann', variant: 'on', timestamp: Date.now() },
      { kind: 'track', key: 'purchase', targetingKey: 'ann', value: 5, timestamp: Date.now() },
    ],
  };
  const send = () => call(node.baseUrl, 'POST', '/ofrep/v1/events', { token: key, body: batch });
  const statistics = () => call(node.baseUrl, 'GET', `/api/v1/experiments/${kFlags[0].experiment}/statistics`, { token });
  await own.stop();
  const refused = await send();
  t.equal(refused.status, 503, refused.text);
  t.match(refused.json, { error: 'Storage unavailable', detail: /nothing of this request was counted/ });
  t.equal((await statistics()).status, 503, 'the statistics cannot be read either');
  await own.start();
  const kept = await own.admin<{ n: number }>(database, 'SELECT count(*)::int AS n FROM flagwire_tally_subjects');
  t.equal(kept.rows[0]!.n, 0, 'the refused batch left nothing in PostgreSQL');
  // Sent again until PostgreSQL answers (the node's pool reconnects on use).
  const answers: Reply[] = [];
  await until(
    async () => {
      answers.push(await send());
      return answers.at(-1)!.status === 200;
    },
    60_000,
    'the batch counted once PostgreSQL is back',
  );
  const answer = answers.at(-1)!;
  t.strictSame(answer.json, { accepted: 2, duplicates: 0, rejected: [] });
  t.strictSame((await send()).json, answer.json, 'and once only');
  const stats = await statistics();
  t.equal(stats.status, 200, stats.text);
  t.strictSame(
    stats.json.variants.map((v: { variant: string; subjects: number; metrics: { sum: string }[] }) => [
      v.variant,
      v.subjects,
      v.metrics[0]?.sum,
    ]),
    [['on', 1, '5']],
  );
});

t.test('batches of 1,000 subjects each, 8 at once on each node: every one counted, every subject once', async (t) => {
  const { nodes, key, token } = await projectWorld(t);
  const now = Date.now();
  // Each subject twice, at once: in a batch to A and in one to B (the second counted a duplicate, whichever it is).
  const batchOf = (n: number) =>
    Array.from({ length: 1000 }, (_, i) => {
      const subject = `user-${(n % 8) * 1000 + i}`;
      return { kind: 'exposure', key: kFlags[0].name, targetingKey: subject, variant: 'on', timestamp: now };
    });
  const answers = await Promise.all(
    Array.from({ length: 16 }, (_, n) =>
      call(nodes[Math.floor(n / 8)]!.baseUrl, 'POST', '/ofrep/v1/events', { token: key, body: { events: batchOf(n) } }),
    ),
  );
  t.strictSame(
    answers.map((r) => r.status),
    Array(16).fill(200),
    answers.find((r) => r.status !== 200)?.text ?? 'all answered 200',
  );
  t.equal(
    answers.reduce((n, r) => n + r.json.duplicates, 0),
    8000,
    'each subject exposed once, its second exposure a duplicate',
  );
  const stats = await call(nodes[1]!.baseUrl, 'GET', `/api/v1/experiments/${kFlags[0].experiment}/statistics`, { token });
  t.strictSame(stats.json.variants, [{ variant: 'on', subjects: 8000, metrics: [] }]);
});
