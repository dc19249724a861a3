// The test bundle's stand-in for async-hook-domain (scripts/tap-domain.mjs): tap run from that bundle, as
// every test file runs it, still fails the test whose asynchronous work threw or rejected and nothing
// caught it, and goes on with the next test. Each case is a small tap file run in a process of its own,
// its TAP read back.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { tempDir } from '../helpers/scratch-dir.js';

/** The tap every test file imports (dist/node_modules/tap: scripts/bundle-tap.mjs). */
const kTap = new URL('../../node_modules/tap/index.js', import.meta.url).href;

interface Point {
  ok: boolean;
  name: string;
  /** The subtest's own results, in order. */
  points: Point[];
}

/** The results in `tap`'s output, nested by indent: tap writes each subtest's points four spaces in. */
function results(tap: string): Point[] {
  const top: Point[] = [];
  // The points of each level not yet closed by its own result line: a subtest's come before its own.
  const pending: Point[][] = [[]];
  for (const line of tap.split('\n')) {
    const m = /^((?: {4})*)(not ok|ok) \d+ - (.*?)(?: # time=.*)?$/.exec(line);
    if (m === null) continue;
    const depth = m[1]!.length / 4;
    while (pending.length < depth + 2) pending.push([]);
    const point: Point = { ok: m[2] === 'ok', name: m[3]!, points: pending[depth + 1]! };
    pending[depth + 1] = [];
    pending[depth]!.push(point);
    if (depth === 0) top.push(point);
  }
  return top;
}

/** Each result's name with whether it passed, in order. tap repeats a test failed by a caught error at the end. */
const verdicts = (points: Point[]) => points.map((p) => [p.name, p.ok] as const);
/** Whether every one of `results` is the test `name`, failed. */
const onlyFailed = (results: (readonly [string, boolean])[], name: string) => results.every(([n, ok]) => n === name && !ok);

/** Runs `body` (a tap file's code after `import t from 'tap'`) alone: its exit code, its results and output. */
function runTapFile(t: { teardown(fn: () => void): void }, body: string): { code: number | null; points: Point[]; output: string } {
  const file = join(tempDir(t), 'case.mjs');
  writeFileSync(file, `import t from ${JSON.stringify(kTap)};\n${body}\n`);
  const run = spawnSync(process.execPath, [file], { encoding: 'utf8', env: { ...process.env, TAP_TIMEOUT: '60' } });
  return { code: run.status, points: results(run.stdout), output: `${run.stdout}\n${run.stderr}` };
}

// An uncaught error of either kind fails the test whose work raised it, and the next test still runs.
for (const c of [
  {
    what: 'an exception thrown in a test’s callback',
    failing: 'throws later',
    code: "setTimeout(() => { throw new Error('boom in a timer'); }, 5);\n  await new Promise((resolve) => setTimeout(resolve, 20));",
    message: /boom in a timer/,
    caught: 'uncaughtException',
  },
  {
    what: 'a rejection nothing handles',
    failing: 'rejects',
    code: "void Promise.reject(new Error('unhandled in a test'));\n  await new Promise((resolve) => setTimeout(resolve, 20));",
    message: /unhandled in a test/,
    caught: 'unhandledRejection',
  },
]) {
  t.test(`${c.what} fails that test; the next test still runs`, async (t) => {
    const { code, points, output } = runTapFile(
      t,
      `t.test(${JSON.stringify(c.failing)}, async (t) => {\n  t.pass('first');\n  ${c.code}\n});\nt.test('runs after', async (t) => { t.pass('still here'); });`,
    );
    t.equal(code, 1, output);
    const [first, next, ...repeats] = verdicts(points);
    t.same(
      [first, next],
      [
        [c.failing, false],
        ['runs after', true],
      ],
    );
    t.ok(onlyFailed(repeats, c.failing), output);
    t.match(output, c.message);
    t.match(output, `tapCaught: ${c.caught}`);
  });
}

t.test('a nested test’s error is its own; its parent and siblings go on', async (t) => {
  const { code, points, output } = runTapFile(
    t,
    `t.test('parent', async (t) => {
  t.test('child that throws', (t) => { setImmediate(() => { throw new Error('nested boom'); }); });
  t.test('sibling', async (t) => { t.pass('sibling ran'); });
});`,
  );
  t.equal(code, 1, output);
  t.ok(onlyFailed(verdicts(points), 'parent'), output);
  t.same(verdicts(points[0]!.points).slice(0, 2), [
    ['child that throws', false],
    ['sibling', true],
  ]);
});

t.test('an error after its test ended falls to the parent that is still running', async (t) => {
  const { code, points, output } = runTapFile(
    t,
    `t.test('parent', async (t) => {
  await t.test('child', async (t) => {
    setTimeout(() => { throw new Error('late boom'); }, 30);
    t.pass('child done');
  });
  await new Promise((resolve) => setTimeout(resolve, 100));
});`,
  );
  t.equal(code, 1, output);
  t.ok(onlyFailed(verdicts(points), 'parent'), output);
  // The child passed; its parent took the error.
  t.same(verdicts(points[0]!.points), [
    ['child', true],
    ['late boom', false],
  ]);
  t.match(output, /late boom/);
});

t.test('a process handler of the test’s own takes its errors first', async (t) => {
  const { code, points, output } = runTapFile(
    t,
    `t.test('own handler', async (t) => {
  const seen = new Promise((resolve) => process.once('uncaughtException', (er) => resolve(er.message)));
  setTimeout(() => { throw new Error('for the handler'); }, 5);
  t.equal(await seen, 'for the handler');
});`,
  );
  t.equal(code, 0, output);
  t.same(verdicts(points), [['own handler', true]], output);
});

t.test('a passing file exits 0 with every point passing', async (t) => {
  const { code, points, output } = runTapFile(
    t,
    `t.test('a', async (t) => { await new Promise((r) => setTimeout(r, 5)); t.pass('x'); });
t.test('b', async (t) => { t.pass('y'); });`,
  );
  t.equal(code, 0, output);
  t.same(
    verdicts(points),
    [
      ['a', true],
      ['b', true],
    ],
    output,
  );
});

// The stand-in is what the bundle holds: the package's own module never loads.
t.test('the bundle holds the stand-in, not the package', async (t) => {
  const bundle = readFileSync(fileURLToPath(new URL('../../node_modules/tap/index.script.js', import.meta.url)), 'latin1');
  t.notMatch(bundle, /node_modules\/async-hook-domain\//);
  t.match(bundle, /scripts\/tap-domain\.mjs/);
});
