// Issue 42, item 1: a flag file whose `$evaluators` refer to the level below twice, 20 levels deep (1.1 KB
// that resolve to about 40 MB), run as users run it: POST /api/v1/plan and /api/v1/apply, `flagwire
// flags import` of the same shape as a flagd file, and a node that follows such a file. Each refuses it
// with the spec's 400 naming the flag, before any work that grows with the expansion: the bounds (a
// minute, a process's peak memory) only catch the old behaviour (79 s and 2.2 GiB for one plan). A plan
// runs on a thread of its own: while the largest plan the limits accept runs, the node answers other
// projects' evaluations and Management API reads.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { kMaxRuleBytes } from '../../src/targeting/refs.js';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { heaviestFlagFile, probeFlagdDocument, probeFlagFile } from '../helpers/ref-expansion.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);

/** A bound that only catches a hang: the old build took 79 s for one such plan. */
const kHangMs = 60_000;
/** The server's peak resident memory bound: the old build reached 2.2 GiB planning the probe's file. */
const kPeakBytes = 1024 * 1024 * 1024;

const plan = (token: string, body: unknown) => call(server.baseUrl, 'POST', '/api/v1/plan', { token, body });
const apply = (token: string, body: unknown) => call(server.baseUrl, 'POST', '/api/v1/apply', { token, body });

/** A server process's peak resident memory so far (Linux: VmHWM). */
function peakBytes(pid = server.proc.pid): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
}
const files = tempDir(t, 'flagwire-rule-size-');

t.test("the probe's 20-level file: plan refused with the spec's 400 naming the flag", { timeout: kHangMs }, async (t) => {
  const file = probeFlagFile(20);
  t.ok(JSON.stringify(file).length < 1200, 'about 1.1 KB sent');
  const r = await plan(world.secrets.read, file);
  t.equal(r.status, 400, r.text);
  t.strictSame(Object.keys(r.json), ['error', 'detail', 'docs'], "the spec's error envelope");
  t.equal(r.json.error, 'Invalid request');
  t.match(r.json.detail, `flags.expanded.targeting: resolves to `, 'names the flag');
  t.match(r.json.detail, `a rule may be at most ${kMaxRuleBytes} bytes (1 MiB) resolved`, 'and the limit');
  t.match(r.json.detail, '$evaluators.l15: resolves to ', 'names the first evaluator over it');
  t.ok(peakBytes() < kPeakBytes, `peak memory ${peakBytes()} bytes`);
});

t.test('a rule nested thousands of levels deep: a 400 naming the flag, not a 500', { timeout: kHangMs }, async (t) => {
  // Written out as text: JSON.stringify itself recurses per level.
  const rule = `${'{"!":['.repeat(5000)}{"var":"x"}${']}'.repeat(5000)}`;
  const flag = `{"enabled":true,"trafficPercentage":100,"variants":{"on":true,"off":false},"defaultVariant":"off","targeting":{"if":[${rule},"on","off"]}}`;
  const raw = `{"flagwire":1,"kind":"single","flags":{"deep":${flag}}}`;
  const r = await call(server.baseUrl, 'POST', '/api/v1/plan', { token: world.secrets.read, raw });
  t.equal(r.status, 400, r.text.slice(0, 300));
  // Refused before it is parsed (src/http/json-bounds.ts), naming where: the flag's targeting.
  t.match(r.json, { error: 'Invalid request', detail: /deeper than 128 levels at flags\.deep\.targeting\.if\.0\./ });
});

t.test("the probe's 20-level file: apply refused, nothing changed", { timeout: kHangMs }, async (t) => {
  const before = world.snapshot();
  const r = await apply(world.secrets.write, probeFlagFile(20));
  t.equal(r.status, 400, r.text);
  t.strictSame(Object.keys(r.json), ['error', 'detail', 'docs']);
  t.match(r.json.detail, /^The file cannot be applied, nothing changed: .*flags\.expanded\.targeting: resolves to /);
  t.equal(world.snapshot(), before, 'nothing changed');
  t.ok(peakBytes() < kPeakBytes, `peak memory ${peakBytes()} bytes`);
});

t.test('while the largest plan the limits accept runs, other projects are answered', { timeout: kHangMs }, async (t) => {
  const file = heaviestFlagFile();
  // Another tenant's evaluation and read, answered before (the node is warm) and during the plan.
  const otherEval = () => call(server.baseUrl, 'GET', `/v1/flags/${world.ids.flagB}`);
  const otherRead = () => call(server.baseUrl, 'GET', '/api/v1/flags', { token: world.secrets.writeB });
  t.equal((await otherEval()).status, 200);
  t.equal((await otherRead()).status, 200);

  let planned = false;
  const started = performance.now();
  const planning = plan(world.secrets.read, file).then((r) => {
    planned = true;
    return r;
  });
  // Asked once the plan's body is on its way: on the front-end thread, the plan would hold both until it ends.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const during = await Promise.all([otherEval(), otherRead()]);
  const answeredWhilePlanning = !planned;
  const r = await planning;
  const planMs = performance.now() - started;
  t.equal(r.status, 200, r.text.slice(0, 500));
  t.ok(
    r.json.changes.some((c: { name: string }) => c.name === 'expanded'),
    'the flag whose references add 320 KB is planned',
  );
  t.strictSame(
    during.map((d) => d.status),
    [200, 200],
  );
  t.ok(answeredWhilePlanning, `another project was answered while the plan ran (the plan took ${Math.round(planMs)} ms)`);
  t.ok(peakBytes() < kPeakBytes, `peak memory ${peakBytes()} bytes`);
});

t.test("the probe's shape as a flagd file: `flagwire flags import` refuses it, nothing changed", { timeout: kHangMs }, async (t) => {
  const path = join(files, 'probe.flagd.json');
  writeFileSync(path, JSON.stringify(probeFlagdDocument(20)));
  const before = world.snapshot();
  // The real binary beside the running server, as an operator runs it: its own process, its own memory.
  const r = await cli(server.dataDir, ['flags', 'import', world.ids.single, '--file', path], { process: true });
  t.equal(r.code, 1, r.stderr);
  t.equal(r.json?.error, 'Invalid request');
  t.match(r.json?.detail, /^The file was not imported, nothing changed: .*flags\.expanded\.targeting: resolves to /);
  t.equal(world.snapshot(), before, 'nothing changed');
});

t.test(
  "a node following the probe's file listens at once, refuses the file naming the flag, and serves",
  { timeout: kHangMs },
  async (t) => {
    const followed = tempDataDir();
    t.teardown(() => rmSync(followed, { recursive: true, force: true }));
    const other = buildWorld(followed);
    const { ids } = other;
    await other.store.close();
    const path = join(files, 'probe.flags.json');
    writeFileSync(path, JSON.stringify(probeFlagFile(20)));
    // startTestServer's own bound (40 s to print its listening line) catches a node that never listens.
    const node = await startTestServer({
      dataDir: followed,
      env: { FLAGWIRE_FLAGS_FILE: path, FLAGWIRE_FLAGS_PROJECT: ids.single, FLAGWIRE_LOG_LEVEL: 'info' },
    });
    t.teardown(() => node.stop());
    // Logged before the listening line, but on the other pipe: it may be read just after it.
    const refusal =
      /"detail":"The file cannot be applied, nothing changed: .*flags\.expanded\.targeting: resolves to .*"msg":"flag file refused; flags unchanged"/;
    await pollUntil(
      'the refusal is logged',
      async () => node.logs(),
      (logs) => refusal.test(logs),
    );
    const reply = await call(node.baseUrl, 'GET', `/v1/flags/${ids.flag}?targetingKey=u1`);
    t.equal(reply.status, 200, 'the node serves its flags as they were');
    const flags = await call(node.baseUrl, 'GET', '/api/v1/flags?name=expanded', { token: other.secrets.read });
    t.strictSame(flags.json.flags, [], 'the flag was not created');
    t.ok(peakBytes(node.proc.pid) < kPeakBytes, `peak memory ${peakBytes(node.proc.pid)} bytes`);
  },
);
