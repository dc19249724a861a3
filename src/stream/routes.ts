// The change streams' routes, declared (change-feed.ts serves them; the evaluation capability lists
// them: src/evaluation/capability.ts).
import { kLastEventId, kStreamErrors, pathParam, queryParam } from '../routes/openapi-parts.js';
import type { RouteDeclaration } from '../routes/route-table.js';

/** Both streams': the project, its environment, and where a reconnect resumes. */
const kStreamParams = [
  pathParam('project_id', 'Project id'),
  queryParam('env', 'Only changes that affect this environment (multi-environment projects)'),
  kLastEventId,
];

export const kStreamRoutes = {
  stream: {
    method: 'get',
    pattern: '/v1/stream/project/:project_id',
    auth: 'none',
    docs: {
      operationId: 'streamProject',
      tag: 'Evaluation API',
      summary: 'Change stream (Server-Sent Events)',
      parameters: kStreamParams,
      responses: {
        '200': {
          description:
            'First `ready` {seq}; then events `flag` {id, updatedAt}, `flag-deleted` {id}, `audience` {id, updatedAt}, each with ' +
            'the commit number as its id; `reset` {reason} when Last-Event-ID is beyond retention (docs/operations.md: Change stream); a comment ' +
            'heartbeat every 15 s',
          content: { 'text/event-stream': { schema: { type: 'string' } } },
        },
        ...kStreamErrors,
      },
    },
  },
  ofrepStream: {
    method: 'get',
    pattern: '/ofrep/v1/stream/project/:project_id',
    auth: 'none',
    docs: {
      operationId: 'ofrepStreamProject',
      tag: 'OFREP',
      summary: "OFREP change events (ADR-0008), advertised in the bulk answer's eventStreams",
      parameters: kStreamParams,
      responses: {
        '200': {
          description:
            'First `ready` {seq}; then, for every commit that changes the project (and environment), `message` ' +
            '{"type": "refetchEvaluation", "etag": "<configuration tag: the bulk ETag before its dash>"}; a comment heartbeat every 15 s',
          content: { 'text/event-stream': { schema: { type: 'string' } } },
        },
        ...kStreamErrors,
      },
    },
  },
} as const satisfies Record<string, RouteDeclaration>;
