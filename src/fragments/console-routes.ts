// The console's shared fragments (the project's fragments page, and the rule builder's list of them):
// listed for anyone who may see the project; made, changed and deleted by the fragments capability's
// writer commands, as the signed-in user.
import { projectAccess } from '../console-route/access.js';
import { type ApiCall, type ApiRoute, requireReceived } from '../console-route/call.js';
import { kFragmentCommands } from './command-table.js';
import { fragmentUses, fragmentView } from './fragment-commands.js';
import { checkFragmentRule } from './rule-checker.js';
import { listFragments } from '../flag-records/fragment-records.js';

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
    run: (call) =>
      call.writer.call(kFragmentCommands.fragmentCreate, {
        principal: call.principal,
        projectId: projectOf(call),
        received: requireReceived(call),
      }),
  },
  {
    method: 'POST',
    pattern: 'projects/:projectId/fragments/:name',
    run: async (call) => {
      const received = requireReceived(call);
      // As the API's: the rule's own check off the writer thread (rule-checker.ts).
      const ruleProblems = (await checkFragmentRule(received)) ?? undefined;
      return call.writer.call(kFragmentCommands.fragmentUpdate, {
        principal: call.principal,
        projectId: projectOf(call),
        name: call.params.name!,
        received,
        ruleProblems,
      });
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
