// The console's shared fragments (the project's fragments page, and the rule builder's list of them):
// listed for anyone who may see the project; made, changed and deleted by the fragments capability's
// writer commands, as the signed-in user.
import { projectAccess } from '../console-route/access.js';
import { type ApiCall, type ApiRoute, requireReceived } from '../console-route/call.js';
import { kFragmentCommands } from './command-table.js';
import { fragmentUses, fragmentView } from './fragment-commands.js';
import { putPrepared } from './fragment-prepare.js';
import { listFragments } from '../flags/records/fragment-records.js';

export function fragmentsView(call: ApiCall) {
  const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
  const fragments = listFragments(call.store, access.project.id).map((f) => ({
    ...fragmentView(f),
    usedBy: [...new Set(fragmentUses(call.store, access.project.id, f.name).map((use) => use.flag.name))],
  }));
  return { ...access, fragments };
}
export type FragmentsView = ReturnType<typeof fragmentsView>;

/** The project named, checked as the user's (a stranger gets the project's 404). */
function projectOf(call: ApiCall): string {
  return projectAccess(call.store, call.user, call.params.projectId!, call.now).project.id;
}

export const kFragmentConsoleRoutes: readonly ApiRoute[] = [
  { method: 'GET', pattern: 'projects/:projectId/fragments', run: fragmentsView },
  {
    method: 'POST',
    pattern: 'projects/:projectId/fragments',
    // As the API's: prepared on the side thread (fragment-prepare.ts).
    run: async (call) =>
      fragmentView(
        await putPrepared(
          call,
          kFragmentCommands.fragmentCreate,
          { principal: call.principal, projectId: projectOf(call) },
          requireReceived(call),
          null,
        ),
      ),
  },
  {
    method: 'POST',
    pattern: 'projects/:projectId/fragments/:name',
    run: async (call) => {
      const input = { principal: call.principal, projectId: projectOf(call), name: call.params.name! };
      return fragmentView(await putPrepared(call, kFragmentCommands.fragmentUpdate, input, requireReceived(call), null));
    },
  },
  {
    method: 'POST',
    pattern: 'projects/:projectId/fragments/:name/delete',
    run: (call) =>
      call.writer.call(kFragmentCommands.fragmentDelete, {
        principal: call.principal,
        projectId: projectOf(call),
        name: call.params.name!,
      }),
  },
];
