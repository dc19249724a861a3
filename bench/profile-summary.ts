// Where the time goes, from V8 .cpuprofile files (`node --cpu-prof`, one file per thread): self time
// by function and by origin (our src/ files, each node_modules package, node internals, GC, idle).
//
//   node dist/bench/profile-summary.js DIR [--top N]
//
// `npm run bench -- --profile` starts Flagwire with --cpu-prof and prints this at the end.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

function origin(url: string, name: string): string {
  if (url === '') return name.startsWith('(') ? name : '(native)';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1]!;
  const ours = /\/dist\/(src|bench)\/(.+)\.js$/.exec(url);
  if (ours) return `${ours[1]}/${ours[2]}`;
  if (url.startsWith('node:')) return 'node internals';
  return url;
}

/**
 * Time that is waiting, not work: the event loop's idle, and Piscina's Atomics.wait loop (a blocked
 * futex wait, which V8 records as JS self time).
 */
function isWaiting(name: string): boolean {
  return name === '(idle)' || name === 'atomicsWaitLoop';
}

/** One thread's profile, summarised as text; shares are of the thread's busy (non-waiting) time. */
export function summariseProfile(profile: CpuProfile, top: number): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  // Sample i took timeDeltas[i + 1] (the delta before the next sample); the last one gets the mean.
  const total = profile.endTime - profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i + 1] ?? total / Math.max(1, profile.samples.length);
    selfUs.set(profile.samples[i]!, (selfUs.get(profile.samples[i]!) ?? 0) + dt);
  }
  const byFunction = new Map<string, number>();
  const byOrigin = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName || '(anonymous)';
    if (isWaiting(name)) continue;
    busy += us;
    const where = origin(url, name);
    byOrigin.set(where, (byOrigin.get(where) ?? 0) + us);
    const key = `${name} ${url ? `${where}:${lineNumber + 1}` : ''}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  }
  const share = (us: number) => `${((us / Math.max(1, busy)) * 100).toFixed(1).padStart(5)}%`;
  const lines = [
    `${(total / 1e6).toFixed(1)} s profiled, ${(busy / 1e6).toFixed(2)} s busy in JS or native code called from JS ` +
      '(time in uWS/libuv C++ outside JS calls counts as idle); shares below are of the busy time',
  ];
  lines.push('  by origin:');
  for (const [where, us] of [...byOrigin].sort((a, b) => b[1] - a[1]).slice(0, 12)) lines.push(`    ${share(us)}  ${where}`);
  lines.push('  by function (self time):');
  for (const [fn, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`    ${share(us)}  ${fn}`);
  return lines.join('\n');
}

export function summariseProfileDir(dir: string, top = 20): string {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort();
  const parts: string[] = [];
  for (const file of files) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    parts.push(`== ${file}\n${summariseProfile(profile, top)}`);
  }
  return parts.length === 0 ? `(no .cpuprofile files in ${dir})` : parts.join('\n\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2];
  if (!dir) {
    process.stderr.write('usage: node dist/bench/profile-summary.js DIR [--top N]\n');
    process.exit(2);
  }
  const at = process.argv.indexOf('--top');
  process.stdout.write(`${summariseProfileDir(dir, at === -1 ? 20 : Number(process.argv[at + 1]))}\n`);
}
