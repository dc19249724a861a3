// Child servers of a bench run, and what /proc says about them. Every child started here is
// remembered by pid and stopped by pid (SIGTERM, then SIGKILL) when the run ends, fails or is
// interrupted: a bench never leaves a server behind.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';

export interface Server {
  readonly name: string;
  readonly pid: number;
  readonly port: number;
  readonly url: string;
  /** The last lines the child wrote to stderr (for error reports). */
  stderrTail(): string;
  alive(): boolean;
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();
const kStopGraceMs = 5000;

/**
 * Starts `node args…` and waits until a stdout line matches `ready` (its first group is the URL).
 * Fails (and kills the child) after `timeoutMs`, or when the child exits first.
 */
export function startServer(name: string, args: string[], env: NodeJS.ProcessEnv, ready: RegExp, timeoutMs: number): Promise<Server> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  let stdout = '';
  return new Promise<Server>((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      void stopChild(child);
      reject(new Error(`${name}: ${why}\n${stderr.trim()}`));
    };
    const timer = setTimeout(() => fail(`not listening after ${timeoutMs} ms`), timeoutMs);
    child.once('exit', (code, signal) => fail(`exited (${code ?? signal}) before listening`));
    child.once('error', (err) => fail(err.message));
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = ready.exec(stdout);
      if (match === null) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.once('exit', () => children.delete(child));
      child.stdout!.removeAllListeners('data');
      child.stdout!.resume();
      const url = match[1]!;
      resolve({
        name,
        pid: child.pid!,
        port: Number(new URL(url).port),
        url,
        stderrTail: () => stderr,
        alive: () => child.exitCode === null && child.signalCode === null,
        stop: () => stopChild(child),
      });
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), kStopGraceMs);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Stops every child still running (by pid). */
export async function stopAll(): Promise<void> {
  await Promise.all([...children].map(stopChild));
}

/** Synchronous last resort at process exit: SIGKILL whatever is left. */
export function killAllSync(): void {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}

// ---- /proc -----------------------------------------------------------------------------------------

let clockTicks = 0;

/** USER_HZ, the unit of utime/stime in /proc/<pid>/stat (100 on every common Linux build). */
export function ticksPerSecond(): number {
  if (clockTicks === 0) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** utime + stime in seconds, from a /proc stat line (fields after the command name in parentheses). */
function statCpuSeconds(line: string): number {
  const fields = line.slice(line.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond();
}

/**
 * Seconds of CPU this process and its waited-for children used: a wrk run is a child, reaped when it
 * ends, so its CPU is counted here once the run is over (cutime and cstime are fields 16 and 17).
 */
export function generatorCpuSeconds(): number {
  const line = readFileSync('/proc/self/stat', 'utf8');
  const fields = line.slice(line.lastIndexOf(')') + 2).split(' ');
  return statCpuSeconds(line) + (Number(fields[13]) + Number(fields[14])) / ticksPerSecond();
}

export interface CpuSample {
  /** Whole process, seconds of CPU. */
  total: number;
  /** Per thread: `main`, `t<tid>` (or `<name>/<tid>` for a named thread) -> seconds. */
  threads: Map<string, number>;
}

export function cpuSample(pid: number): CpuSample {
  const total = statCpuSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  const threads = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const line = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = line.slice(line.indexOf('(') + 1, line.lastIndexOf(')'));
      // Node does not name its worker threads ("node"): the main thread is the one whose tid is the pid.
      const label = tid === String(pid) ? 'main' : name === 'node' ? `t${tid}` : `${name}/${tid}`;
      threads.set(label, statCpuSeconds(line));
    } catch {
      // the thread ended between readdir and read
    }
  }
  return { total, threads };
}

/** CPU between two samples, as % of one core over `seconds`; threads above 2% only, busiest first. */
export function cpuBetween(before: CpuSample, after: CpuSample, seconds: number): { percent: number; threads: Record<string, number> } {
  const threads: [string, number][] = [];
  for (const [name, end] of after.threads) {
    const percent = ((end - (before.threads.get(name) ?? 0)) / seconds) * 100;
    if (percent >= 2) threads.push([name, Math.round(percent)]);
  }
  threads.sort((a, b) => b[1] - a[1]);
  return { percent: ((after.total - before.total) / seconds) * 100, threads: Object.fromEntries(threads) };
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM' | 'RssAnon' | 'RssFile'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) : 0;
}

export function rssKb(pid: number): number {
  return statusKb(pid, 'VmRSS');
}

/** Resident memory split, kB: anonymous (heaps, buffers) and file-backed (LMDB's memory map, code). */
export interface RssSplit {
  rss: number;
  anon: number;
  file: number;
}

export function rssSplitKb(pid: number): RssSplit {
  return { rss: statusKb(pid, 'VmRSS'), anon: statusKb(pid, 'RssAnon'), file: statusKb(pid, 'RssFile') };
}

export function peakRssKb(pid: number): number {
  return statusKb(pid, 'VmHWM');
}

/** Resets VmHWM to the current RSS (Linux ≥ 4.0, our own child); false when not permitted. */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}
