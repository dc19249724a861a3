// Whether the process that left a mark in a data dir (a claim: data-dir-claim.ts; an export's scratch
// folder: src/events/export-scratch.ts) still runs. A pid alone cannot say: one left by a process killed
// with kill -9 may since have been given to another, so the mark records its process's start time too.
import { readFileSync } from 'node:fs';

/** Whether process `pid` runs and is the one that started at `recordedStart` ('' when unknown: any process with that pid). */
export function isRunning(pid: number, recordedStart: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: a process of another user has this pid; only its start time can tell whether it is ours.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const start = startTimeOf(pid);
  return start === null || recordedStart === '' || start === recordedStart;
}

/** The process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat), or null off Linux. */
export function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}
