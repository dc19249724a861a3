// What a report says about where and how it was made: the machine, the versions of what was measured,
// and the command line that reproduces it.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { kRepo } from './locations.js';

export function machineInfo(): Record<string, string> {
  let model = cpus()[0]?.model ?? '?';
  try {
    model = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? model;
  } catch {
    // not Linux
  }
  return {
    cores: String(availableParallelism()),
    cpu: model,
    memory: `${Math.round(totalmem() / 2 ** 30)} GiB`,
    kernel: release(),
    node: process.version,
  };
}

/**
 * The host's speed now, as scripts/host-speed.mjs says it (its summary line), sampled for `seconds` in a
 * process of its own while nothing else of the bench runs. The 2-core machine's memory moves by nearly two
 * to one from one minute to the next, and every figure of CPU or wall time moves with it (bench/RESULTS.md,
 * Running the benches): a bench says what its figures were measured beside, before and after its runs.
 */
export function hostSpeed(seconds = 2): string {
  const out = execFileSync(process.execPath, [join(kRepo, 'scripts/host-speed.mjs'), String(seconds)], { encoding: 'utf8' });
  return out.trim().split('\n').at(-1) ?? 'no samples';
}

export function versions(): Record<string, string> {
  const version = (pkg: string) => {
    try {
      const json = JSON.parse(readFileSync(join(kRepo, 'node_modules', pkg, 'package.json'), 'utf8')) as { name: string; version: string };
      return json.name === pkg ? json.version : `${json.name}@${json.version}`;
    } catch {
      return '?';
    }
  };
  return {
    'uWebSockets.js': version('uWebSockets.js'),
    lmdb: version('lmdb'),
    piscina: version('piscina'),
    msgpackr: version('msgpackr'),
    autocannon: version('autocannon'),
  };
}

export function commandLine(): string {
  const args = process.argv.slice(2).join(' ');
  return process.env.npm_lifecycle_event === 'bench'
    ? `npm run bench${args ? ` -- ${args}` : ''}`
    : `node dist/bench/run.js${args ? ` ${args}` : ''}`;
}

/** A bench's first line: the machine, its load average now and the run's own settings, as one JSON object. */
export function runHeader(settings: Record<string, unknown>): string {
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  return JSON.stringify({ machine: machineInfo(), load, ...settings });
}
