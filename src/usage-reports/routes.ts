// Where usage counted outside the server's eval workers arrives (docs/api.md: Usage reports), each report
// one batch counted once by its id (commands.ts):
//   POST /v1/usage/{project_id}[?env=]  Flagwire's OpenFeature provider (src/provider/usage-reporter.ts),
//        with the read token it fetches its snapshot with: a Management API route outside /api/v1 as the
//        snapshot route is (src/snapshots/routes.ts), run by the Management API's pipeline.
//   POST /v1/relay/usage                a relay (src/evaluation/engine/usage.ts on the relay), with its relay key,
//        as GET /v1/relay; what the relay's own eval workers and Unleash reports counted.
// A report is answered once it is written (on PostgreSQL, committed): a sender keeps a batch and sends it
// again, to any node, until it has this answer, and a batch counted before is answered `counted: false`.
// A relay writes nothing: there a report joins the relay's own usage, which it forwards upstream in its
// own batches (src/relay/usage-forwarder.ts); a batch id it took lately (recentBatches) is answered
// without being counted again.
import type { ManagementRouteSpec } from '../capability/capability.js';
import { FlagwireError } from '../errors.js';
import type { UsageCount } from '../flags/records/usage-commands.js';
import { requireEnvironmentAllowed, resolveEnvParam } from '../model/environments.js';
import { addCount, kSingleState } from '../model/flags.js';
import { checkedBody } from '../model/request-body.js';
import { compileValidator } from '../model/validation.js';
import { notFoundDetail } from '../model/records/lookups.js';
import { apiErrors, json, pathParam, queryParam } from '../routes/openapi-parts.js';
import { kBatchIdKeepMs, type UsageReportInput, type UsageSender } from './usage-report-commands.js';
import { kUsageReportCommands } from './command-table.js';
import { UsageReport, UsageReportAnswer } from './report.js';
import type { UsageSink } from '../evaluation/engine/usage.js';
import type { StoreRevision } from '../store/interfaces.js';
import type { WriterClient } from '../writer/client.js';

export const kReport = compileValidator(UsageReport, { quoteKeys: false });
export const kRelayPath = '/v1/relay/usage';

/**
 * The report's counts summed per flag, environment and hour: each entry in `environment` when given (the
 * provider's ?env=; kSingleState for a single-environment project), else in its own `env` (a relay's).
 * Each is timed at the sender's latest evaluation, within the time a batch id is kept and never after
 * `now`: a sender's clock cannot move a flag's usage into the future.
 */
export function countsOfReport(report: UsageReport, now: number, environment: string | null): UsageCount[] {
  const counts = new Map<string, UsageCount>();
  for (const entry of report.counts) {
    const at = Math.max(now - kBatchIdKeepMs, Math.min(entry.lastEvaluatedAt ?? now, now));
    addCount(counts, {
      flagId: entry.flag,
      environment: environment ?? entry.env ?? kSingleState,
      evaluations: entry.evaluations,
      lastEvaluatedAt: at,
    });
  }
  return [...counts.values()];
}

/** The report as the writer counts it; `environment` as countsOfReport takes it (null: each entry names its own). */
export function inputOf(sender: UsageSender, report: UsageReport, now: number, environment: string | null): UsageReportInput {
  return { sender, batchId: report.batchId, counts: countsOfReport(report, now, environment) };
}

/** Batch ids a relay's front end remembers, the oldest forgotten first: a sender's retries come within minutes. */
const kRecentBatchIds = 100_000;
const recentBatches = new Set<string>();

/**
 * Counts the report: by the writer, once per batch id in the store; on a relay (`usage` given), into its
 * usage to forward, once per batch id this front end remembers.
 */
export async function countReport(
  deps: { writer: Pick<WriterClient, 'callAt'>; usage: UsageSink | null },
  input: UsageReportInput,
): Promise<{ answer: UsageReportAnswer; storeRevision?: StoreRevision }> {
  if (deps.usage !== null) {
    const counted = !recentBatches.has(input.batchId);
    if (counted) {
      if (recentBatches.size >= kRecentBatchIds) recentBatches.delete(recentBatches.values().next().value!);
      recentBatches.add(input.batchId);
      deps.usage.addUsage(input.counts);
    }
    return { answer: { batchId: input.batchId, counted } };
  }
  const { value, storeRevision } = await deps.writer.callAt(kUsageReportCommands.countUsageReport, input);
  return { answer: { batchId: input.batchId, counted: value.counted }, storeRevision };
}

export const kUsageReportRoutes: Readonly<Record<string, ManagementRouteSpec>> = {
  apiUsageReport: {
    method: 'post',
    pattern: '/v1/usage/:project_id',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'postUsageReport',
      tag: 'Management API',
      summary:
        "Evaluations Flagwire's OpenFeature provider made in-process, one batch counted once by its id (a read token of the project; docs/provider.md)",
      parameters: [
        pathParam('project_id', "The token's project"),
        queryParam('env', 'The environment evaluated (required for a multi-environment project, refused for a single one)'),
      ],
      request: { schema: UsageReport, required: true },
      responses: {
        '200': json(UsageReportAnswer, 'Counted (or counted before)'),
        ...apiErrors([400, 401, 402, 403, 404, 413, 429, 500, 503]),
      },
    },
    // A POST a read token may make: the provider holds only the read token it fetches its snapshot with.
    handler: {
      kind: 'write',
      permission: 'read',
      async run(request, auth, received, release, { clock, config, usage, writer }) {
        let input: UsageReportInput;
        try {
          const projectId = request.params.project_id!;
          if (projectId !== auth.project.id) throw new FlagwireError('NOT_FOUND', notFoundDetail('project', projectId));
          const env = resolveEnvParam(auth.project, request.query.get('env'), true, 'list');
          requireEnvironmentAllowed(auth.token.environments, env);
          const sender: UsageSender = { kind: 'token', tokenId: auth.token.id, projectId };
          const report = checkedBody(received, kReport);
          if (report.counts.some((entry) => entry.env !== undefined))
            throw new FlagwireError(
              'INVALID_REQUEST',
              'An entry names no "env" here: the "env" query parameter is the environment counted.',
            );
          input = inputOf(sender, report, clock.now(), env ?? kSingleState);
        } finally {
          release();
        }
        const { answer, storeRevision } = await countReport({ writer, usage: config.upstream === null ? null : usage }, input);
        return { status: 200, value: answer, ...(storeRevision === undefined ? {} : { storeRevision }) };
      },
    },
  },
};
