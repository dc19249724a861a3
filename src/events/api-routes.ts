// The events capability's Management API route: an experiment's statistics as counted (docs/api.md:
// Events), read with a token of the project, from the tally file this node keeps.
import type { ManagementRouteSpec } from '../capability/capability.js';
import { requireEnvironmentAllowed, resolveEnvParam } from '../model/environments.js';
import { apiErrors, json, pathParam } from '../routes/openapi-parts.js';
import { refuseUnlessCounted } from './event-counter.js';
import { ExperimentStatistics, statisticsView } from './statistics.js';

export const kEventsApiRoutes: Readonly<Record<string, ManagementRouteSpec>> = {
  apiExperimentStatistics: {
    method: 'get',
    pattern: '/api/v1/experiments/:experiment/statistics',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'getExperimentStatistics',
      tag: 'Management API',
      summary:
        "An experiment's exact sufficient statistics in an environment: per variant its subjects, per metric the sums of each subject's totals after and before exposure",
      parameters: [
        pathParam('experiment', 'The experiment key its flags carry (`experiment` on a flag state)'),
        { name: 'env', in: 'query', schema: { type: 'string' }, description: 'The environment (required on a multi-environment project)' },
      ],
      responses: {
        '200': json(ExperimentStatistics, 'The statistics; no variant yet when nothing was counted'),
        ...apiErrors([400, 401, 402, 403, 404, 429, 500]),
      },
    },
    handler: {
      kind: 'read',
      run(request, auth, { config, events }) {
        refuseUnlessCounted(config);
        const env = resolveEnvParam(auth.project, request.query.get('env'), true, 'list');
        requireEnvironmentAllowed(auth.token.environments, env);
        const experiment = request.params.experiment!;
        const tally = events.tally.experiment({ projectId: auth.project.id, environment: env ?? '' }, experiment);
        return statisticsView(experiment, env, tally);
      },
    },
  },
};
