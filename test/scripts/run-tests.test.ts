// The suite's runner (scripts/run-tests.mjs) with files started beyond its jobs while the machine sits idle
// (FLAGWIRE_TEST_EXTRA_JOBS): every file runs once, every point is counted, a failed file is named and
// fails the run, and never more than the jobs and the extra files run at once. Whether an extra file starts
// depends on how idle the machine is, which a busy one never is: that is the bench's to show
// (bench/RESULTS.md), not asserted here.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { tempDir } from '../helpers/scratch-dir.js';

const kRoot = fileURLToPath(new URL('../../../', import.meta.url));
const kFiles = 8;
const kFailing = 5;

/** A test file that notes when it started and ended in `log`, waits without working, then prints TAP. */
function waitingFile(log: string, index: number): string {
  const first = index === kFailing ? 'not ok' : 'ok';
  return `const { appendFileSync } = require('node:fs');
appendFileSync(${JSON.stringify(log)}, 'start ${index} ' + Date.now() + '\\n');
setTimeout(() => {
  appendFileSync(${JSON.stringify(log)}, 'end ${index} ' + Date.now() + '\\n');
  console.log('TAP version 14\\n${first} 1 - waited\\nok 2 - and again\\n1..2');
  process.exitCode = ${index === kFailing ? 1 : 0};
}, 1500);
`;
}

t.test('two jobs and one extra: each file once, every point counted, the failure named, at most three at once', async (t) => {
  const dir = tempDir(t, 'flagwire-runner-');
  const log = join(dir, 'spans.log');
  writeFileSync(log, '');
  for (let i = 0; i < kFiles; i++) writeFileSync(join(dir, `f${i}.test.js`), waitingFile(log, i));
  const { FLAGWIRE_TEST_TIMES: _times, ...env } = process.env;
  const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      ['scripts/run-tests.mjs', dir],
      { cwd: kRoot, env: { ...env, FLAGWIRE_TEST_JOBS: '2', FLAGWIRE_TEST_EXTRA_JOBS: '1' } },
      (_err, stdout) => resolve({ code: child.exitCode, stdout }),
    );
  });
  t.equal(code, 1, 'a failed file fails the run');
  t.match(stdout, `# { total: ${2 * kFiles}, pass: ${2 * kFiles - 1}, fail: 1, skip: 0 }`);
  t.match(stdout, `# failed: ${relative(kRoot, join(dir, `f${kFailing}.test.js`))}`);
  t.match(stdout, `# files: ${kFiles}, failed files: 1`);
  // The host's speed through the run (scripts/host-speed.mjs): a probe every 4 s, so a short run may hold none.
  t.match(stdout, /^# host speed through the run \(scripts\/host-speed\.mjs\): (\d+ samples?, .+|no samples); the probes, [\d.]+ CPU s$/m);

  const spans = new Map<number, { start: number[]; end: number[] }>();
  for (const line of readFileSync(log, 'utf8').trim().split('\n')) {
    const [what, index, at] = line.split(' ') as ['start' | 'end', string, string];
    const span = spans.get(Number(index)) ?? { start: [], end: [] };
    span[what].push(Number(at));
    spans.set(Number(index), span);
  }
  t.same(
    [...spans.keys()].sort((a, b) => a - b),
    Array.from({ length: kFiles }, (_, i) => i),
  );
  t.ok(
    [...spans.values()].every((s) => s.start.length === 1 && s.end.length === 1),
    'each file started and ended once',
  );
  // The most files running at one moment: at each start, those started and not yet ended.
  const running = [...spans.values()].map((s) => [s.start[0]!, s.end[0]!] as const);
  const most = Math.max(...running.map(([at]) => running.filter(([start, end]) => start <= at && end > at).length));
  t.ok(most <= 3, `${most} files at once`);
});
