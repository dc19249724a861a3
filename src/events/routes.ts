// The events capability's Management API routes (docs/api.md: Events): a subject erased, with a write
// token (what it added to the statistics taken back, in the tally file, never through the writer: its
// key is the personal data erased, so no audit entry names it), and an experiment's statistics as
// counted, with a read token; in the tally file, or PostgreSQL's, read and written as JSON on the events
// thread (event-counter.ts).
import type { ManagementRouteSpec } from '../capability/capability.js';
import { requireEnvironmentAllowed, resolveEnvParam } from '../model/environments.js';
import { checkedBody } from '../model/request-body.js';
import { compileValidator } from '../model/validation.js';
import { apiErrors, json, kEnvParam, pathParam, queryParam } from '../routes/openapi-parts.js';
import { JsonText, StreamedAnswer } from '../routes/handler.js';
import { projectBodyWrite } from '../routes/route-helpers.js';
import { refuseUnlessCounted } from './event-counter.js';
import { exportFormat, jsonLines, parquet, parquetWriter, timeParam } from './export.js';
import { EventSettings, EventSettingsPatch, SubjectErase, SubjectErased } from './schemas.js';
import { eventSettingsOf } from './settings-commands.js';
import { kEventCommands } from './command-table.js';
import { ExperimentStatistics } from './statistics.js';

const kEraseValidator = compileValidator(SubjectErase, { quoteKeys: false });
const kJsonLines = 'application/jsonl';
const kParquet = 'application/vnd.apache.parquet';

export const kEventsApiRoutes: Readonly<Record<string, ManagementRouteSpec>> = {
  apiEventSettings: {
    method: 'get',
    pattern: '/api/v1/events/settings',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'getEventSettings',
      tag: 'Management API',
      summary: "The token's project's events settings: how many days its raw events are kept (null: none are)",
      responses: { '200': json(EventSettings, 'The settings'), ...apiErrors([401, 402, 429, 500]) },
    },
    handler: { kind: 'read', run: (_request, auth) => eventSettingsOf(auth.project) },
  },
  apiSetEventSettings: {
    method: 'patch',
    pattern: '/api/v1/events/settings',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'setEventSettings',
      tag: 'Management API',
      summary:
        "Change the token's project's events settings (a token of every environment): `rawEventRetentionDays` 1 to 400 keeps each counted event as received for that many days, null keeps none; audited",
      request: { schema: EventSettingsPatch, required: true },
      responses: { '200': json(EventSettings, 'The settings now, on disk'), ...apiErrors([400, 401, 402, 403, 413, 429, 500, 503]) },
    },
    handler: projectBodyWrite(kEventCommands.eventSettingsSet, 200),
  },
  apiExportEvents: {
    method: 'get',
    pattern: '/api/v1/events/export',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'exportEvents',
      tag: 'Management API',
      summary:
        "A project environment's raw events (kept while its project's settings ask) stored from `from` to before `to`, in the order they were counted, as JSON lines or Parquet, streamed",
      parameters: [
        kEnvParam,
        queryParam('from', 'The earliest time of storing, Unix ms or an ISO 8601 time (default: the first)'),
        queryParam('to', 'The time of storing to stop before, Unix ms or an ISO 8601 time (default: now)'),
        queryParam('format', '`jsonl` (the default) or `parquet`'),
      ],
      responses: {
        '200': {
          description: 'The events: one JSON object a line, or a Parquet file (written by DuckDB)',
          content: { [kJsonLines]: { schema: { type: 'string' } }, [kParquet]: { schema: { type: 'string', format: 'binary' } } },
        },
        ...apiErrors([400, 401, 402, 403, 404, 429, 500, 503]),
      },
    },
    handler: {
      kind: 'read',
      async run(request, auth, { config, events, clock }) {
        refuseUnlessCounted(config);
        const env = resolveEnvParam(auth.project, request.query.get('env'), true, 'list');
        requireEnvironmentAllowed(auth.token.environments, env);
        const now = clock.now();
        const format = exportFormat(request.query.get('format'));
        const range = { from: timeParam('from', request.query.get('from'), 0), to: timeParam('to', request.query.get('to'), now + 1), now };
        const scope = { projectId: auth.project.id, environment: env ?? '' };
        const name = `attachment; filename="events-${auth.project.id}${env === null ? '' : `-${env}`}.${format}"`;
        const disposition = [['Content-Disposition', name]] as const;
        const pages = events.exportPages();
        if (format === 'jsonl') return new StreamedAnswer(kJsonLines, jsonLines(pages, scope, range), disposition);
        await parquetWriter();
        return new StreamedAnswer(kParquet, parquet(pages, scope, range, events.scratch), disposition);
      },
    },
  },
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
          // Nothing to erase where no event was ever counted: no file is created for it.
          const erased = !events.countedNothing && (await events.erase(scope, targetingKey));
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
        return new JsonText(await events.statisticsJson({ projectId: auth.project.id, environment: env ?? '' }, experiment, env));
      },
    },
  },
};
