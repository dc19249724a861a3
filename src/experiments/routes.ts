// The experiments capability's Management API routes (docs/api.md: Experiments): the token's project's
// experiments in an environment (`?env=`, as a flag's), listed, made, changed, started, stopped, deleted,
// and their results. Another project's experiment is not found.
import type { ManagementRouteSpec } from '../capability/capability.js';
import { refuseUnlessCounted } from '../events/event-counter.js';
import { requireEnvironmentAllowed, resolveEnvParam } from '../model/environments.js';
import type { ReceivedBody } from '../model/request-body.js';
import type { ApiRequest } from '../routes/handler.js';
import type { AuthContext } from '../model/records/token-access.js';
import { apiErrors, changeRequested, json, kEnvParam, pathParam } from '../routes/openapi-parts.js';
import { tokenPrincipal } from '../routes/route-helpers.js';
import { kExperimentCommands } from './command-table.js';
import { type ExperimentKeyInput, experimentNotFound, experimentView } from './experiment-commands.js';
import type { WriterCommand } from '../writer/command.js';
import { getExperiment, listExperiments } from './records.js';
import { lookAtResults } from './look.js';
import { ExperimentBody, ExperimentCreate, ExperimentDeleted, ExperimentList, ExperimentResultsBody, ExperimentUpdate } from './schemas.js';

const kKeyParam = pathParam('experiment', "The experiment's key (what its flag state carries as `experiment`)");

/** What each command of one experiment is given from a request. */
function keyInput(request: ApiRequest, auth: AuthContext) {
  return { principal: tokenPrincipal(auth), projectId: auth.project.id, env: request.query.get('env'), key: request.params.experiment! };
}

/** The environment a read names, checked against the project and the token's environments. */
function readEnv(request: ApiRequest, auth: AuthContext): string | null {
  const env = resolveEnvParam(auth.project, request.query.get('env'), true, 'list');
  requireEnvironmentAllowed(auth.token.environments, env);
  return env;
}

/** A write of one experiment by key: the command's answer, 200. */
function keyWrite<O>(command: WriterCommand<ExperimentKeyInput, O>): ManagementRouteSpec['handler'] {
  return {
    kind: 'write',
    async run(request, auth, _received: ReceivedBody, release, { writer }) {
      return { status: 200, value: await writer.call(command, keyInput(request, auth), release) };
    },
  };
}

const kWriteErrors = apiErrors([400, 401, 402, 403, 404, 413, 429, 500, 503]);
/**
 * A start or stop changes the flag state evaluation reads, and a change to the plan or a delete may
 * change what a pending start will run, so where the environment is guarded the approvals gate holds
 * it as a change request (202, docs/approvals.md), or refuses it (409 Approval required) where it
 * cannot be held; nothing changes.
 */
const kGuardedWriteErrors = { ...changeRequested(), ...apiErrors([400, 401, 402, 403, 404, 409, 413, 429, 500, 503]) };

export const kExperimentApiRoutes: Readonly<Record<string, ManagementRouteSpec>> = {
  apiListExperiments: {
    method: 'get',
    pattern: '/api/v1/experiments',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'listExperiments',
      tag: 'Management API',
      summary: "The token's project's experiments in an environment, by key",
      parameters: [kEnvParam],
      responses: { '200': json(ExperimentList, 'The experiments'), ...apiErrors([400, 401, 402, 403, 429, 500]) },
    },
    handler: {
      kind: 'read',
      run: (request, auth, { store }) => ({
        experiments: listExperiments(store, auth.project.id, readEnv(request, auth)).map(experimentView),
      }),
    },
  },
  apiCreateExperiment: {
    method: 'post',
    pattern: '/api/v1/experiments',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'createExperiment',
      tag: 'Management API',
      summary:
        'Make an experiment in an environment: the flag it runs on, the arms compared, the control, the metrics and the plan (not started)',
      parameters: [kEnvParam],
      request: { schema: ExperimentCreate, required: true },
      responses: { '201': json(ExperimentBody, 'Made'), ...kWriteErrors },
    },
    handler: {
      kind: 'write',
      async run(request, auth, received, release, { writer }) {
        const input = { principal: tokenPrincipal(auth), projectId: auth.project.id, env: request.query.get('env'), received };
        return { status: 201, value: await writer.call(kExperimentCommands.experimentCreate, input, release) };
      },
    },
  },
  apiGetExperiment: {
    method: 'get',
    pattern: '/api/v1/experiments/:experiment',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'getExperiment',
      tag: 'Management API',
      summary: "An experiment of the token's project in an environment",
      parameters: [kKeyParam, kEnvParam],
      responses: { '200': json(ExperimentBody, 'The experiment'), ...apiErrors([400, 401, 402, 403, 404, 429, 500]) },
    },
    handler: {
      kind: 'read',
      run(request, auth, { store }) {
        const key = request.params.experiment!;
        const experiment = getExperiment(store, auth.project.id, readEnv(request, auth), key);
        if (experiment === undefined) throw experimentNotFound(key);
        return experimentView(experiment);
      },
    },
  },
  apiUpdateExperiment: {
    method: 'patch',
    pattern: '/api/v1/experiments/:experiment',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'updateExperiment',
      tag: 'Management API',
      summary: "Change an experiment's plan: refused while it runs (stop it first)",
      parameters: [kKeyParam, kEnvParam],
      request: { schema: ExperimentUpdate, required: true },
      responses: { '200': json(ExperimentBody, 'Changed (or already so)'), ...kGuardedWriteErrors },
    },
    handler: {
      kind: 'write',
      async run(request, auth, received, release, { writer }) {
        return {
          status: 200,
          value: await writer.call(kExperimentCommands.experimentUpdate, { ...keyInput(request, auth), received }, release),
        };
      },
    },
  },
  apiStartExperiment: {
    method: 'post',
    pattern: '/api/v1/experiments/:experiment/start',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'startExperiment',
      tag: 'Management API',
      summary: "Start an experiment: its flag's state there takes its key, so answers say inExperiment and exposures are counted",
      parameters: [kKeyParam, kEnvParam],
      responses: { '200': json(ExperimentBody, 'Started'), ...kGuardedWriteErrors },
    },
    handler: keyWrite(kExperimentCommands.experimentStart),
  },
  apiStopExperiment: {
    method: 'post',
    pattern: '/api/v1/experiments/:experiment/stop',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'stopExperiment',
      tag: 'Management API',
      summary: "Stop an experiment: its flag's state there drops its key; its statistics are kept",
      parameters: [kKeyParam, kEnvParam],
      responses: { '200': json(ExperimentBody, 'Stopped'), ...kGuardedWriteErrors },
    },
    handler: keyWrite(kExperimentCommands.experimentStop),
  },
  apiDeleteExperiment: {
    method: 'post',
    pattern: '/api/v1/experiments/:experiment/delete',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'deleteExperiment',
      tag: 'Management API',
      summary: "Delete an experiment that is not running (a POST: the spec's CORS allows no DELETE); its statistics stay counted",
      parameters: [kKeyParam, kEnvParam],
      responses: { '200': json(ExperimentDeleted, 'Deleted'), ...kGuardedWriteErrors },
    },
    handler: keyWrite(kExperimentCommands.experimentDelete),
  },
  apiExperimentResults: {
    method: 'get',
    pattern: '/api/v1/experiments/:experiment/results',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'getExperimentResults',
      tag: 'Management API',
      summary:
        "An experiment's results against its plan: per metric and treatment the effect with always-valid intervals, CUPED's reduction, the chance to beat control, a verdict; and the sample-ratio check",
      parameters: [kKeyParam, kEnvParam],
      responses: { '200': json(ExperimentResultsBody, 'The results'), ...apiErrors([400, 401, 402, 403, 404, 429, 500, 503]) },
    },
    // A GET answered as a write (permission read): the look's sample-ratio p-value is kept through the
    // writer, on disk before the answer, where it is the lowest yet (docs/decisions.md: Experiments).
    handler: {
      kind: 'write',
      permission: 'read',
      async run(request, auth, _received, release, { clock, config, events, store, writer }) {
        release();
        refuseUnlessCounted(config);
        const env = readEnv(request, auth);
        store.resetReadTxn();
        const view = await lookAtResults({ store, events, writer }, auth.project.id, env, request.params.experiment!, clock.now());
        return { status: 200, value: view };
      },
    },
  },
};
