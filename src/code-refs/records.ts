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
