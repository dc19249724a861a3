// The code references capability's web console routes (docs/web-console.md): a flag's references on its
// page, and the keys code names that are no flags on the project's lifecycle page. Read as the signed-in
// user: a member of the project sees them, as its read tokens do over the Management API.
import { projectAccess } from '../console-route/access.js';
import type { ApiCall, ApiRoute } from '../console-route/call.js';
import { flagAccess } from '../flags/flag-lookups.js';
import { codeRefsOfFlag, keysThatAreNoFlags } from './code-ref-reads.js';
import { type BranchScan, listBranchScans } from './records.js';

/** The places listed for each key that is no flag: enough to find it; the count says how many there are. */
const kPlacesShown = 10;

/** A scan as the pages name it (console-answers.ts: ScanHead). */
function scanHead(scan: Pick<BranchScan, 'repository' | 'branch' | 'commit' | 'pushedAt'>) {
  return { repository: scan.repository, branch: scan.branch, commit: scan.commit, pushedAt: scan.pushedAt };
}

export function flagCodeRefsView(call: ApiCall) {
  const { flag, access } = flagAccess(call.store, call.user, call.params.flagId!, call.now);
  return {
    scans: listBranchScans(call.store, access.project.id).map(scanHead),
    branches: codeRefsOfFlag(call.store, access.project.id, flag.name).branches.map((b) => ({ ...scanHead(b), references: b.references })),
  };
}

export function missingKeysView(call: ApiCall) {
  const { project } = projectAccess(call.store, call.user, call.params.projectId!, call.now);
  const { keys, unknown, scans } = keysThatAreNoFlags(call.store, project.id);
  return {
    scans: scans.length,
    missing: keys.map(([key, places]) => ({
      key,
      references: places.length,
      places: places
        .slice(0, kPlacesShown)
        .map(({ scan, ref }) => ({ repository: scan.repository, branch: scan.branch, file: ref.file, line: ref.line })),
    })),
    unknown,
  };
}

export const kCodeRefConsoleRoutes: readonly ApiRoute[] = [
  { method: 'GET', pattern: 'flags/:flagId/code-refs', run: flagCodeRefsView },
  { method: 'GET', pattern: 'projects/:projectId/code-refs/missing', run: missingKeysView },
];
