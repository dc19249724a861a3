// scripts/host-speed.mjs, the probe of the host's speed that every run of the suite says as it ends: run
// alone, it prints each second's sample and their summary, which must describe those samples; a bad
// duration is refused. What the figures are is the host's, not asserted here.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const kRoot = fileURLToPath(new URL('../../../', import.meta.url));

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, ['scripts/host-speed.mjs', ...args], { cwd: kRoot }, (_err, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout, stderr }),
    );
  });
}

t.test('three seconds sampled: the summary is of the samples printed', async (t) => {
  const { code, stdout } = await run(['3']);
  t.equal(code, 0);
  const [samplesLine, summary] = stdout.trim().split('\n') as [string, string];
  const samples = samplesLine.split(' ').map(Number);
  // A sample a second at most: a loaded machine (the suite at load 10) may run the timer late and leave
  // out some, which changes how many, not what the summary must say of them.
  t.ok(samples.length >= 1 && samples.length <= 3, `${samples.length} samples`);
  t.ok(
    samples.every((v) => Number.isFinite(v) && v > 0),
    'each sample is some CPU time',
  );
  const sorted = [...samples].sort((a, b) => a - b);
  const figures =
    /^(\d+) samples?, the probe's CPU ms min \/ p25 \/ median \/ p75 \/ max: ([\d.]+) \/ ([\d.]+) \/ ([\d.]+) \/ ([\d.]+) \/ ([\d.]+)$/.exec(
      summary,
    );
  t.ok(figures, summary);
  const [, count, min, p25, median, p75, max] = figures!.map(Number) as number[];
  t.equal(count, samples.length);
  t.equal(min, sorted[0]);
  t.equal(max, sorted.at(-1));
  t.equal(median, sorted[Math.floor(samples.length / 2)]);
  t.ok(min! <= p25! && p25! <= median! && median! <= p75! && p75! <= max!, 'the quartiles in order');
});

t.test('a duration that is not a positive number: the usage, exit 2', async (t) => {
  for (const bad of ['0', 'soon', '-4']) {
    const { code, stdout, stderr } = await run([bad]);
    t.equal(code, 2, bad);
    t.equal(stdout, '');
    t.equal(stderr, 'usage: node scripts/host-speed.mjs [SECONDS]\n');
  }
});
