// The events capability's Management API routes (docs/api.md: Events): a subject erased, with a write
// token (what it added to the statistics taken back, in the tally file, never through the writer: its
// key is the personal data erased, so no audit entry names it), and an experiment's statistics as
// counted, with a read token; in the tally file, or PostgreSQL's (event-counter.ts).
import type { ManagementRouteSpec } from '../capability/capability.js';
import { requireEnvironmentAllowed, resolveEnvParam } from '../model/environments.js';
import { checkedBody } from '../model/request-body.js';
import { compileValidator } from '../model/validation.js';
import { apiErrors, json, kEnvParam, pathParam } from '../routes/openapi-parts.js';
import { refuseUnlessCounted } from './event-counter.js';
import { SubjectErase, SubjectErased } from './schemas.js';
import { eraseSubject } from './tally.js';
import { ExperimentStatistics, statisticsView } from './statistics.js';

const kEraseValidator = compileValidator(SubjectErase, { quoteKeys: false });

export const kEventsApiRoutes: Readonly<Record<string, ManagementRouteSpec>> = {
  apiEraseSubject: {
    method: 'post',
    pattern: '/api/v1/events/subjects/erase',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'eraseSubject',
      tag: 'Management API',
      summary:
        "Erase a subject's counted events in an environment: its exposures and totals forgotten, the statistics taken back to the other subjects' alone",
      parameters: [kEnvParam],
      request: { schema: SubjectErase, required: true },
      responses: { '200': json(SubjectErased, 'Erased, on disk'), ...apiErrors([400, 401, 402, 403, 404, 413, 429, 500, 503]) },
    },
    handler: {
      kind: 'write',
      async run(request, auth, received, release, { config, events }) {
        try {
          refuseUnlessCounted(config);
          const env = resolveEnvParam(auth.project, request.query.get('env'), true, 'list');
          requireEnvironmentAllowed(auth.token.environments, env);
          const { targetingKey } = checkedBody(received, kEraseValidator);
          const scope = { projectId: auth.project.id, environment: env ?? '' };
          const erased = await events.count(scope, { batchId: null, subjects: [targetingKey] }, (txn) =>
            eraseSubject(txn, scope, targetingKey),
          );
          return { status: 200, value: { targetingKey, environment: env, erased } };
        } finally {
          release();
        }
      },
    },
  },
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
      parameters: [pathParam('experiment', 'The experiment key its flags carry (`experiment` on a flag state)'), kEnvParam],
      responses: {
        '200': json(ExperimentStatistics, 'The statistics; no variant yet when nothing was counted'),
        ...apiErrors([400, 401, 402, 403, 404, 429, 500, 503]),
      },
    },
    handler: {
      kind: 'read',
      async run(request, auth, { config, events }) {
        refuseUnlessCounted(config);
        const env = resolveEnvParam(auth.project, request.query.get('env'), true, 'list');
        requireEnvironmentAllowed(auth.token.environments, env);
        const experiment = request.params.experiment!;
        const tally = await events.experiment({ projectId: auth.project.id, environment: env ?? '' }, experiment);
        return statisticsView(experiment, env, tally);
      },
    },
  },
};
