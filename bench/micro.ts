// The micro-benches, each a child process after the load runs; their output goes into RESULTS.md as is.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { kDist } from './locations.js';
import { log } from './log.js';

export interface MicroResult {
  name: string;
  output: string;
}

export function runMicroBenches(): MicroResult[] {
  const out: MicroResult[] = [];
  for (const name of ['eval.bench.js', 'handoff.bench.js', 'metrics.bench.js', 'rate-limit.bench.js']) {
    const file = join(kDist, 'bench', name);
    try {
      readFileSync(file);
    } catch {
      out.push({ name, output: `(not built: ${file} missing)` });
      continue;
    }
    log(`micro-bench ${name} …`);
    try {
      // --expose-gc: rate-limit.bench.js measures memory per entry after a collection.
      const output = execFileSync(process.execPath, ['--expose-gc', file], {
        encoding: 'utf8',
        timeout: 120_000,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      out.push({ name, output });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      out.push({ name, output: `FAILED: ${e.message.split('\n')[0]}\n${e.stdout ?? ''}${e.stderr ?? ''}` });
    }
  }
  return out;
}
