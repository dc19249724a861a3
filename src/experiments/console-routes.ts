// The console's experiments pages (docs/web-console.md: Experiments): a project environment's
// experiments with the flags they may run on, made, changed (arm weights, planned size), started and
// stopped through the experiments capability's writer commands as the signed-in user; and an experiment's results, the same look the
// Management API's results route takes (look.ts), so the page and the API answer alike.
import { projectAccess } from '../console-route/access.js';
import type { ApiCall, ApiRoute } from '../console-route/call.js';
import { listFlags } from '../flags/records/flag-store.js';
import { resolveEnvParam } from '../model/environments.js';
import { kExperimentCommands } from './command-table.js';
import { experimentView, flagVariants } from './experiment-commands.js';
import { listExperiments } from './records.js';
import { lookAtResults } from './look.js';

/**
 * The environment the page shows: the address's `env`, or a multi-environment project's first (a page
 * needs one to list), checked against the project as the Management API checks it.
 */
function pageEnv(call: ApiCall, access: ReturnType<typeof projectAccess>): string | null {
  const { project } = access;
  const asked = call.query.get('env') ?? (project.kind === 'multi' ? (project.environments[0] ?? null) : null);
  return resolveEnvParam(project, asked, true, 'list');
}

export function experimentsView(call: ApiCall) {
  const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
  const env = pageEnv(call, access);
  const flags = listFlags(call.store, access.project.id)
    .map((flag) => ({ id: flag.id, name: flag.name, variants: flagVariants(flag, env) }))
    .sort((a, b) => a.name.localeCompare(b.name));
  return { ...access, env, experiments: listExperiments(call.store, access.project.id, env).map(experimentView), flags };
}
export type ExperimentsView = ReturnType<typeof experimentsView>;

export async function experimentResultsPageView(call: ApiCall) {
  const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
  const env = pageEnv(call, access);
  const results = await lookAtResults(call, access.project.id, env, call.params.key!, call.now);
  return { ...access, env, results };
}
export type ExperimentResultsPageView = Awaited<ReturnType<typeof experimentResultsPageView>>;

/** A start or stop of the experiment the address names, as the signed-in user. */
function keyChange(command: typeof kExperimentCommands.experimentStart): ApiRoute['run'] {
  return (call) => {
    const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
    const input = { principal: call.principal, projectId: access.project.id, env: pageEnv(call, access), key: call.params.key! };
    return call.writer.call(command, input);
  };
}

export const kExperimentRoutes: readonly ApiRoute[] = [
  { method: 'GET', pattern: 'projects/:projectId/experiments', run: experimentsView },
  {
    method: 'POST',
    pattern: 'projects/:projectId/experiments',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      const input = { principal: call.principal, projectId: access.project.id, env: pageEnv(call, access), received: call.received! };
      return call.writer.call(kExperimentCommands.experimentCreate, input);
    },
  },
  {
    // PATCH /api/v1/experiments/{key}'s rules and texts (the page changes the weights and planned size):
    // refused while the experiment runs, as the API refuses it.
    method: 'PATCH',
    pattern: 'projects/:projectId/experiments/:key',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      const input = {
        principal: call.principal,
        projectId: access.project.id,
        env: pageEnv(call, access),
        key: call.params.key!,
        received: call.received!,
      };
      return call.writer.call(kExperimentCommands.experimentUpdate, input);
    },
  },
  { method: 'GET', pattern: 'projects/:projectId/experiments/:key/results', run: experimentResultsPageView },
  { method: 'POST', pattern: 'projects/:projectId/experiments/:key/start', run: keyChange(kExperimentCommands.experimentStart) },
  { method: 'POST', pattern: 'projects/:projectId/experiments/:key/stop', run: keyChange(kExperimentCommands.experimentStop) },
];
