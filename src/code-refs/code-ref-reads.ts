// What the code references' readers answer (the Management API, the web console): a flag's references
// on every pushed branch, and the keys code names that are no flags of the project.
import { findFlagByName } from '../flags/records/flag-store.js';
import type { StoreReader } from '../store/interfaces.js';
import { type BranchScan, listBranchScans, scansNaming } from './records.js';
import type { CodeReference, CodeRefsMissing, CodeRefsOfFlag } from './schemas.js';

export function codeRefsOfFlag(r: Pick<StoreReader, 'listKeyedBy'>, projectId: string, flag: string): CodeRefsOfFlag {
  return {
    flag,
    exists: findFlagByName(r, projectId, flag) !== undefined,
    branches: scansNaming(r, projectId, flag).map((scan) => ({
      repository: scan.repository,
      branch: scan.branch,
      commit: scan.commit,
      pushedAt: scan.pushedAt,
      references: scan.references.filter((ref) => ref.key === flag),
    })),
  };
}

/** A reference to a key that is no flag, with the scan it was found in. */
export interface MissingPlace {
  scan: BranchScan;
  ref: CodeReference;
}

/**
 * The keys the project's scans name that are no flag of the project, by key, each with where it is
 * named (scan by scan, in file order within one); and how many references have a computed key.
 */
export function keysThatAreNoFlags(
  r: Pick<StoreReader, 'listKeyedBy'>,
  projectId: string,
): { keys: [string, MissingPlace[]][]; unknown: number; scans: BranchScan[] } {
  const scans = listBranchScans(r, projectId);
  const byKey = new Map<string, MissingPlace[]>();
  const flags = new Set<string>();
  let unknown = 0;
  for (const scan of scans)
    for (const ref of scan.references) {
      if (ref.key === null) {
        unknown++;
        continue;
      }
      if (flags.has(ref.key)) continue;
      let places = byKey.get(ref.key);
      if (places === undefined) {
        if (findFlagByName(r, projectId, ref.key) !== undefined) {
          flags.add(ref.key);
          continue;
        }
        places = [];
        byKey.set(ref.key, places);
      }
      places.push({ scan, ref });
    }
  return { keys: [...byKey].sort(([a], [b]) => (a < b ? -1 : 1)), unknown, scans };
}

export function missingFlags(r: Pick<StoreReader, 'listKeyedBy'>, projectId: string): CodeRefsMissing {
  const { keys, unknown } = keysThatAreNoFlags(r, projectId);
  return {
    missing: keys.map(([key, places]) => ({
      key,
      references: places.length,
      branches: [...new Set(places.map(({ scan }) => `${scan.repository}@${scan.branch}`))],
    })),
    unknown,
  };
}
