// How fast this host runs allocating JavaScript at the moment: the CPU milliseconds of one fixed piece of
// work (objects and short strings made and dropped, as a test, a server or a build makes them), the least
// of three tries. Lower is faster.
//
// Why: the 2-core machine's speed moves under us. The same work, measured by its own CPU time so that
// waiting does not count, read 3.2 to 6.7 ms from one second to the next on an idle machine (2026-11-28),
// in runs of several seconds each way, while a loop of arithmetic alone held within 10%: the host's
// memory, shared with other machines, is sometimes half as fast. A run of the suite, which is CPU-bound
// and allocates throughout, moves with it (the same tree: 349 to 457 s of suite wall), so a figure of the
// suite says little without this one beside it. scripts/run-tests.mjs samples it through every run and
// says it as the run ends; `node scripts/host-speed.mjs [SECONDS]` samples the idle host alone, each second.
import { pathToFileURL } from 'node:url';

const kTries = 3;
// Sized to be short enough to sample often, long enough that the clock's resolution and a timer's
// wake-up do not count.
const kObjects = 200_000;

// Held beside the module, so that what the work makes is used and cannot be left out.
const kept = [];
function fixedWork() {
  for (let i = 0; i < kObjects; i++) {
    const made = { at: i, name: String(i & 1023) };
    kept.push(made);
    if (kept.length > 1000) kept.length = 0;
  }
}

/** The fixed work's CPU milliseconds now (`least`, of kTries) and what the tries cost in all (`spent`). */
function probe() {
  let least = Number.POSITIVE_INFINITY;
  let spent = 0;
  for (let i = 0; i < kTries; i++) {
    const before = process.cpuUsage();
    fixedWork();
    const used = process.cpuUsage(before);
    const ms = (used.user + used.system) / 1000;
    least = Math.min(least, ms);
    spent += ms;
  }
  return { least, spent };
}

/**
 * Probes every `everyMs` until `stop`, which answers the samples (each probe's least) and the CPU ms the
 * probes spent. The timer holds no process open.
 */
export function sampleHostSpeed(everyMs) {
  // Compiled and optimised before the first sample counts.
  for (let i = 0; i < 5; i++) fixedWork();
  const samples = [];
  let spentMs = 0;
  const timer = setInterval(() => {
    const { least, spent } = probe();
    samples.push(least);
    spentMs += spent;
  }, everyMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      return { samples, spentMs };
    },
  };
}

/** `samples` as one line: how many, then min / quartiles / max of the probe's CPU ms. */
export function describeSpeed(samples) {
  if (samples.length === 0) return 'no samples';
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const figures = [sorted[0], at(0.25), at(0.5), at(0.75), sorted.at(-1)].map((v) => v.toFixed(1));
  return `${samples.length} sample${samples.length === 1 ? '' : 's'}, the probe's CPU ms min / p25 / median / p75 / max: ${figures.join(' / ')}`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const seconds = Number(process.argv[2] ?? 30);
  if (!(seconds > 0)) {
    console.error('usage: node scripts/host-speed.mjs [SECONDS]');
    process.exit(2);
  }
  const sampler = sampleHostSpeed(1000);
  setTimeout(
    () => {
      const { samples } = sampler.stop();
      console.log(samples.map((v) => v.toFixed(1)).join(' '));
      console.log(describeSpeed(samples));
    },
    seconds * 1000 + 100,
  );
}
