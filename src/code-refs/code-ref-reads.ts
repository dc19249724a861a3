// What the code references' readers answer (the Management API, the web console): a flag's references
// on every pushed branch, and the keys code names that are no flag of the project.
import { findFlagByName } from '../flags/records/flag-store.js';
import type { StoreReader } from '../store/interfaces.js';
import { listBranchScans, scansNaming } from './records.js';
import type { CodeRefsMissing, CodeRefsOfFlag } from './schemas.js';

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

export function missingFlags(r: Pick<StoreReader, 'listKeyedBy'>, projectId: string): CodeRefsMissing {
  const byKey = new Map<string, { references: number; branches: Set<string> }>();
  let unknown = 0;
  for (const scan of listBranchScans(r, projectId))
    for (const ref of scan.references) {
      if (ref.key === null) {
        unknown++;
        continue;
      }
      let entry = byKey.get(ref.key);
      if (entry === undefined) {
        if (findFlagByName(r, projectId, ref.key) !== undefined) continue;
        entry = { references: 0, branches: new Set() };
        byKey.set(ref.key, entry);
      }
      entry.references++;
      entry.branches.add(`${scan.repository}@${scan.branch}`);
    }
  return {
    missing: [...byKey]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([key, entry]) => ({ key, references: entry.references, branches: [...entry.branches] })),
    unknown,
  };
}
