// Code references as the store keeps them (keyedRecords): one record per project, repository and branch,
// the last scan pushed for it, replaced whole by the next push; found by project and by the flag keys it
// names.
import type { StoreReader, StoreWriter } from '../store/interfaces.js';
import { keyedRecords } from '../store/record-kinds.js';
import type { CodeReference } from './schemas.js';

export interface BranchScan {
  projectId: string;
  repository: string;
  branch: string;
  commit: string;
  pushedAt: number;
  /** Who pushed it, as the audit log names them (token:…). */
  pushedBy: string;
  references: CodeReference[];
}

export const kCodeRefRecords = keyedRecords<BranchScan>()({
  name: 'codeRefs',
  database: 'codeRefs',
  // Not configuration: no evaluation reads it, so relays are not sent it and a push moves no revision.
  relayed: false,
  key: (scan) => JSON.stringify([scan.projectId, scan.repository, scan.branch]),
  indexes: {
    /** A project's scans. */
    project: { keysOf: (scan) => [scan.projectId] },
    /** The scans that name a key. */
    flag: { keysOf: (scan) => [...keysNamed(scan)].map((key) => [scan.projectId, key]) },
    /**
     * A project's scans again, each weighed by when it was pushed and tallied: how many and their times'
     * sum (scansTag) change with every push, so what was derived from the scans is known current without
     * reading one (src/flags/lifecycle-facts.ts).
     */
    pushed: { keysOf: (scan) => [scan.projectId], weigh: (scan) => scan.pushedAt, tallied: true },
  },
});

/** The distinct keys a scan's references name (unknown ones name none). */
export function keysNamed(scan: Pick<BranchScan, 'references'>): Set<string> {
  const keys = new Set<string>();
  for (const ref of scan.references) if (ref.key !== null) keys.add(ref.key);
  return keys;
}

export function putBranchScan(w: Pick<StoreWriter, 'putKeyed'>, scan: BranchScan): void {
  w.putKeyed(kCodeRefRecords, scan);
}

/** What changes with every scan pushed for the project (a push replaces a branch's scan, and is later than it). */
export function scansTag(r: Pick<StoreReader, 'tallyOf'>, projectId: string): string {
  const { count, weight } = r.tallyOf(kCodeRefRecords, 'pushed', projectId);
  return `${count}:${weight}`;
}

/** A project's scans, by repository and branch. */
export function listBranchScans(r: Pick<StoreReader, 'listKeyedBy'>, projectId: string): BranchScan[] {
  return r.listKeyedBy(kCodeRefRecords, 'project', projectId).sort(byPlace);
}

/** The project's scans that name `key`, by repository and branch. */
export function scansNaming(r: Pick<StoreReader, 'listKeyedBy'>, projectId: string, key: string): BranchScan[] {
  return r.listKeyedBy(kCodeRefRecords, 'flag', [projectId, key]).sort(byPlace);
}

function byPlace(a: BranchScan, b: BranchScan): number {
  return a.repository === b.repository ? (a.branch < b.branch ? -1 : a.branch > b.branch ? 1 : 0) : a.repository < b.repository ? -1 : 1;
}
