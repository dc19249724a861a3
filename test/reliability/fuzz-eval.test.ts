// Fuzzing the Evaluation API (issue 8, item 2): generated flag and project ids and query strings (raw
// bytes, bad percent escapes, invalid UTF-8, "+" and "%2B", prototype names, very long values,
// thousands of attributes), sent as raw HTTP. Properties checked on every request:
//   - never a 5xx, never a hang, never a connection dropped without an answer;
//   - the store is unchanged (evaluation writes nothing but flag usage, once a minute);
//   - a 200 is exactly {id, name, enabled} (an array of them on the project route); an error is {error, detail};
//   - a request carrying a targetingKey or cohort gets the same answer when repeated (spec rules 2-3).
// uWS limits the request line plus headers to 4 KiB by default (answering 431 beyond); the main run uses
// a server started with UWS_HTTP_MAX_HEADERS_SIZE=131072 so that long values and thousands of attributes
// reach the evaluation engine, and a second test checks the 431 of a default server.
// Default run: 5,000 requests; FLAGWIRE_LONG=1: 40,000.
import t from 'tap';
import fc from 'fast-check';
import { binaryString, kBadEscapes } from '../helpers/fuzz-bodies.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { HangError, RawClient, rawRequest, type RawReply } from '../helpers/raw-http.js';
import { StoreDigest } from '../helpers/store-digest.js';
import { buildRichWorld, evalShapeProblems, kLong, kUnlimited } from './support.js';

const kRuns = Number(process.env.FLAGWIRE_FUZZ_RUNS ?? (kLong ? 40_000 : 5_000));
const kSeed = Number(process.env.FLAGWIRE_FUZZ_SEED ?? Date.now() % 2 ** 31);
/** Requests above this size may reach the server in more than one read (see uWS's 505 below). */
const kOneSegmentBytes = 16 * 1024;
const kUws505Title = '<h1>HTTP Version Not Supported</h1>';

/** uWS's 505 to a long request line read in two parts (uNetworking/uWebSockets#1776; see its use below). */
function fragmented(reply: { status: number; body: Buffer }, bytes: Buffer): boolean {
  return reply.status === 505 && bytes.length > kOneSegmentBytes && reply.body.toString().includes(kUws505Title);
}
const kMaxHeaders = 131_072;

/** The first occurrence of a literal parameter name, raw (undefined when absent). */
function firstParam(query: string, name: string): string | undefined {
  for (const part of query.split('&')) {
    const eq = part.indexOf('=');
    if ((eq === -1 ? part : part.slice(0, eq)) === name) return eq === -1 ? '' : part.slice(eq + 1);
  }
  return undefined;
}

t.test(`Evaluation API fuzz: ${kRuns} generated requests (seed ${kSeed})`, async (t) => {
  const dataDir = tempDataDir();
  const world = buildRichWorld(dataDir);
  const server = await startTestServer({ dataDir, env: { ...kUnlimited, UWS_HTTP_MAX_HEADERS_SIZE: String(kMaxHeaders) } });
  // Flag usage counts evaluations by design, written once a minute (src/evaluation/engine/usage.ts), in
  // total and per environment: a run longer than that (FLAGWIRE_LONG=1) sees it. Evaluation writes
  // nothing else.
  const digest = new StoreDigest(dataDir, new Set(['usage', 'usageByEnvironment']));
  const client = new RawClient(server.port);
  t.teardown(async () => {
    client.close();
    await server.stop();
    await digest.close();
    await world.store.close();
  });

  // The Management API fuzz's escapes, but for its '+%2B+', and two more (in this order: the same draws).
  const badEscapes = [...kBadEscapes.filter((e) => e !== '+%2B+'), '%2', '%u0041'];
  const protoWords = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty'];
  const unicode = binaryString(20);
  // Raw bytes as they go on the wire: anything but the separators that end the request line or the target.
  const rawBytes = fc
    .uint8Array({ minLength: 1, maxLength: 24 })
    .map((b) => Buffer.from(b.filter((x) => x > 0x20 && x !== 0x7f && x !== 0x26 && x !== 0x3d && x !== 0x23)).toString('latin1'));
  const id = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...world.flags.map((f) => f.id)) },
    { weight: 1, arbitrary: fc.constantFrom('flg_doesNotExist0000', '', ...protoWords, ...badEscapes, 'x'.repeat(5000)) },
    { weight: 1, arbitrary: unicode.map(encodeURIComponent) },
    { weight: 1, arbitrary: rawBytes.map((s) => s.replaceAll('/', '%2F').replaceAll('?', '%3F')) },
  );
  const projectId = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...world.projects) },
    { weight: 1, arbitrary: fc.constantFrom('prj_doesNotExist', ...protoWords, ...badEscapes) },
  );
  const name = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom('cohort', 'env', 'targetingKey', 'plan', 'constructor', '__proto__') },
    { weight: 1, arbitrary: fc.constantFrom(...protoWords, 'Cohort', 'targetingkey', 'env[]', 'a') },
    { weight: 1, arbitrary: unicode.map(encodeURIComponent) },
    { weight: 1, arbitrary: fc.constantFrom(...badEscapes) },
    { weight: 1, arbitrary: rawBytes },
  );
  const value = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constantFrom(
        'staging',
        'production',
        'constructor',
        'toString',
        'valueOf',
        'beta',
        'alice',
        'qa',
        'wide-1',
        'x',
        'y',
        'user-42',
        '',
      ),
    },
    { weight: 3, arbitrary: unicode.map(encodeURIComponent) },
    { weight: 2, arbitrary: fc.constantFrom(...badEscapes, '+', '%2B', 'a+b', 'a%20b', 'al+ice', '%61lice') },
    { weight: 2, arbitrary: rawBytes },
    { weight: 1, arbitrary: fc.integer({ min: 1000, max: kMaxHeaders - 2000 }).map((n) => 'v'.repeat(n)) },
  );
  const param = fc.tuple(name, value, fc.boolean()).map(([k, v, eq]) => (eq || v !== '' ? `${k}=${v}` : k));
  const thousands = fc
    .tuple(fc.integer({ min: 1000, max: 8000 }), fc.constantFrom('a', 'plan', 'constructor'))
    .map(([n, prefix]) => Array.from({ length: n }, (_, i) => `${prefix}${i % 3 === 0 ? '' : i}=${i % 7 === 0 ? 'beta' : i}`).join('&'));
  const query = fc.oneof(
    { weight: 12, arbitrary: fc.array(param, { maxLength: 8 }).map((ps) => ps.join('&')) },
    { weight: 1, arbitrary: thousands },
    { weight: 1, arbitrary: fc.constantFrom('', '&', '&&&', '=', '==', '&=&', '?', '??a=b', '#frag', 'cohort=%', 'cohort=alice%') },
  );
  const request = fc.record({
    route: fc.constantFrom('flag', 'flag', 'flag', 'project'),
    id,
    projectId,
    query: fc.option(query, { freq: 10, nil: undefined }),
    method: fc.oneof(
      { weight: 20, arbitrary: fc.constant('GET') },
      { weight: 1, arbitrary: fc.constantFrom('HEAD', 'POST', 'OPTIONS', 'DELETE') },
    ),
  });

  const baseline = digest.take();
  const statuses = new Map<number, number>();
  let sent = 0;
  let fiveHundreds = 0;
  let fragmented505 = 0;
  let repeated = 0;
  let attributesSent = 0;

  const send = async (bytes: Buffer, head: boolean, dirty: boolean): Promise<RawReply> => {
    try {
      return await client.request(bytes, { timeoutMs: 60_000, head, closeAfter: dirty });
    } catch (err) {
      if (err instanceof HangError)
        throw new Error(`hang: ${err.message}\nrequest: ${JSON.stringify(bytes.subarray(0, 400).toString('latin1'))}`);
      throw err;
    }
  };

  const property = fc.asyncProperty(request, async (r) => {
    const path = r.route === 'flag' ? `/v1/flags/${r.id}` : `/v1/flags/project/${r.projectId}`;
    const target = r.query === undefined ? path : `${path}?${r.query}`;
    const bytes = rawRequest(r.method, target, [['Host', `127.0.0.1:${server.port}`]]);
    const head = r.method === 'HEAD';
    const reply = await send(bytes, head, head);
    sent++;
    if (r.query !== undefined) attributesSent += r.query.split('&').length;
    statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
    const describe = () =>
      `${reply.status} ${reply.body.subarray(0, 300).toString()}\nrequest: ${JSON.stringify(bytes.subarray(0, 400).toString('latin1'))}`;
    if (server.proc.exitCode !== null || server.proc.signalCode !== null) throw new Error(`server died: ${describe()}`);
    if (fragmented(reply, bytes)) {
      // Known upstream defect, not Flagwire's: uWS answers 505 when a request line reaches it in two TCP
      // reads (uNetworking/uWebSockets#1776, fixed upstream after the uws-pack 20.0.8 build this project
      // can install). One write of a request this long goes over loopback in more than one segment, so it
      // happens here by chance; counted apart, and only for such requests. Any other 5xx fails.
      fragmented505++;
      return;
    }
    if (reply.status >= 500) {
      fiveHundreds++;
      throw new Error(`5xx: ${describe()}`);
    }
    if (reply.status === 0) throw new Error(`connection dropped without an answer: ${describe()}`);
    const changed = StoreDigest.changed(baseline, digest.take());
    if (changed.length > 0) throw new Error(`an evaluation changed the store (${changed.join(', ')}): ${describe()}`);
    const json =
      !head && (reply.headers.get('content-type') ?? '').startsWith('application/json') && reply.body.length > 0
        ? JSON.parse(reply.body.toString())
        : undefined;
    if (reply.status === 200 && r.method === 'GET') {
      const answers = r.route === 'project' ? json : [json];
      if (!Array.isArray(answers)) throw new Error(`project answer is not an array: ${describe()}`);
      for (const a of answers) {
        const problems = evalShapeProblems(a);
        if (problems.length > 0) throw new Error(`answer with a broken shape (${problems.join(', ')}): ${describe()}`);
      }
      // Sticky (spec rules 2-3): with a targetingKey, or else a cohort, the answer is the same every time.
      const q = r.query ?? '';
      const key = firstParam(q, 'targetingKey');
      const cohort = firstParam(q, 'cohort');
      const literalNames = q.split('&').every((p) => !/[%+]/.test(p.split('=')[0]!));
      if (
        literalNames &&
        ((key !== undefined && key !== '') || ((key === undefined || key === '') && cohort !== undefined && cohort !== ''))
      ) {
        const again = await send(bytes, false, false);
        repeated++;
        // The repeat may meet the same upstream defect as any request (above): counted apart, not an answer.
        if (fragmented(again, bytes)) {
          fragmented505++;
          return;
        }
        if (again.status !== 200 || !again.body.equals(reply.body)) {
          throw new Error(
            `not sticky: ${reply.body.toString()} then ${again.status} ${again.body.toString()}\nrequest: ${JSON.stringify(bytes.subarray(0, 400).toString('latin1'))}`,
          );
        }
      }
    } else if (json !== undefined && reply.status >= 400) {
      if (Object.keys(json).sort().join(',') !== 'detail,error') throw new Error(`error body is not {error, detail}: ${describe()}`);
    }
  });

  const started = Date.now();
  const run = await fc.check(property, { numRuns: kRuns, seed: kSeed, endOnFailure: true });
  if (run.failed) {
    const cause = run.errorInstance instanceof Error ? run.errorInstance.message : String(run.errorInstance);
    t.fail(
      `property failed after ${run.numRuns} requests (replay: FLAGWIRE_FUZZ_SEED=${run.seed}, path ${run.counterexamplePath}): ${cause.slice(0, 2000)}`,
    );
  }
  const seconds = (Date.now() - started) / 1000;
  t.comment(
    `fuzz-eval: ${sent} requests (+${repeated} repeats for stickiness) in ${seconds.toFixed(1)} s, seed ${kSeed}; 5xx: ${fiveHundreds}; ` +
      `uWS 505 for a request line of over ${kOneSegmentBytes} bytes read in two parts (uNetworking/uWebSockets#1776): ${fragmented505}; ` +
      `query parameters sent: ${attributesSent}`,
  );
  t.comment(
    `fuzz-eval statuses: ${[...statuses]
      .sort((a, b) => a[0] - b[0])
      .map(([s, n]) => `${s}:${n}`)
      .join(' ')}`,
  );
  t.ok(sent >= kRuns, `${sent} requests sent`);
  t.equal(fiveHundreds, 0, 'no 5xx');
  t.ok((statuses.get(200) ?? 0) > kRuns / 5, 'a good share were evaluated (the generators reach the engine)');
  t.ok((statuses.get(400) ?? 0) > 0 && (statuses.get(404) ?? 0) > 0, 'and some were refused (400 undecodable, 404 unknown)');
  const errors = server
    .logs()
    .split('\n')
    .filter((line) => /"level":(50|60)/.test(line));
  t.same(errors, [], 'the server logged no error');
  t.equal(await server.stop(), 0, 'the server stops cleanly afterwards');
});

t.test('with uWS defaults, a request line over 4 KiB (thousands of attributes) is a 431, not a 5xx', async (t) => {
  const dataDir = tempDataDir();
  const world = buildRichWorld(dataDir);
  const server = await startTestServer({ dataDir });
  const client = new RawClient(server.port);
  t.teardown(async () => {
    client.close();
    await server.stop();
    await world.store.close();
  });
  const attributes = Array.from({ length: 3000 }, (_, i) => `a${i}=${i}`).join('&');
  const big = await client.request(rawRequest('GET', `/v1/flags/${world.ids.flag}?${attributes}`, [['Host', 'x']]), { closeAfter: true });
  t.equal(big.status, 431);
  const fits = await client.request(
    rawRequest('GET', `/v1/flags/${world.ids.flag}?${attributes.slice(0, 3500).replace(/&[^&]*$/, '')}`, [['Host', 'x']]),
  );
  t.equal(fits.status, 200, 'a few hundred attributes within the limit are evaluated');
  t.equal(server.proc.exitCode, null, 'the server is still running');
});
