// Processes as /proc lists them: whose children they are, and the CPU a process and everything below it
// used. Linux only, as the suite is.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

interface ProcessStat {
  pid: number;
  ppid: number;
  /** utime, stime, cutime, cstime: clock ticks (fields 14-17 of /proc/<pid>/stat). */
  ticks: [number, number, number, number];
}

/** Every process's stat line, parsed; a process that ends while the list is read is left out. */
function processes(): ProcessStat[] {
  const found: ProcessStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name, in parentheses, may hold spaces: the fields after its closing one are fixed
      // (fields[0] is field 3, the state).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = fields.slice(11, 15).map(Number) as ProcessStat['ticks'];
      found.push({ pid: Number(entry), ppid: Number(fields[1]), ticks });
    } catch {
      // The process ended while the list was read.
    }
  }
  return found;
}

/** The processes whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  return processes()
    .filter((p) => p.ppid === pid)
    .map((p) => p.pid);
}

let ticksPerSecond = 0;

/**
 * CPU seconds of process `root` and every process below it: those alive now, and those that ended and
 * were waited for by a parent in the tree (their parent's cutime and cstime). Not counted: a process
 * that left the tree (a daemon's double fork, given to init), and what `root` itself does from now on.
 */
export function treeCpuSeconds(root: number): { user: number; sys: number } {
  ticksPerSecond ||= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const all = processes();
  const inTree = new Set([root]);
  // Parents before children is not the order of /proc (pids wrap): pass until nothing is added.
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (!inTree.has(p.pid) && inTree.has(p.ppid)) {
        inTree.add(p.pid);
        grew = true;
      }
    }
  }
  let user = 0;
  let sys = 0;
  for (const p of all) {
    if (!inTree.has(p.pid)) continue;
    user += p.ticks[0] + p.ticks[2];
    sys += p.ticks[1] + p.ticks[3];
  }
  return { user: user / ticksPerSecond, sys: sys / ticksPerSecond };
}
