// The approvals capability's Management API routes (docs/approvals.md): a token reads its project's
// change requests, withdraws the ones it made and comments on them. Only a person approves or rejects
// (the web console, or `flagwire request approve --as USER_ID`): a token is never a second person.
import type { ManagementRouteSpec } from '../capability/capability.js';
import { FlagwireError } from '../errors.js';
import { parseJsonObject } from '../model/request-body.js';
import { apiErrors, json, pathParam, queryParam } from '../routes/openapi-parts.js';
import { tokenPrincipal } from '../routes/route-helpers.js';
import { kApprovalCommands } from './command-table.js';
import { ChangeRequestList, ChangeRequestView, CommentBody, requestView } from './request-view.js';
import { kRequestStatuses, type RequestStatus } from './records.js';
import { listRequests, requireRequest } from './requests.js';
import { requestEtag } from './request-version.js';
import { TaggedJson } from '../routes/handler.js';

function statusOf(query: URLSearchParams): RequestStatus | undefined {
  const status = query.get('status');
  if (status === null) return undefined;
  if (!(kRequestStatuses as readonly string[]).includes(status)) {
    throw new FlagwireError(
      'INVALID_REQUEST',
      `status must be one of ${kRequestStatuses.join(', ')} (or left out, for every request), not "${status}"`,
    );
  }
  return status as RequestStatus;
}

const kEtagHeaders = {
  ETag: {
    schema: { type: 'string' },
    description:
      'Names the request\'s version (`"chr_….v<version>-…"`) and covers this answer: an approval may send it as If-Match to name the version its approver saw',
  },
};

export const kApprovalApiRoutes: Readonly<Record<string, ManagementRouteSpec>> = {
  apiListChangeRequests: {
    method: 'get',
    pattern: '/api/v1/change-requests',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'listChangeRequests',
      tag: 'Management API',
      summary: "The token's project's change requests, newest first, each with what it changes against the flags as they are now",
      parameters: [queryParam('status', `only requests of this status: ${kRequestStatuses.join(', ')}`)],
      responses: { '200': json(ChangeRequestList, 'The change requests'), ...apiErrors([400, 401, 402, 429, 500]) },
    },
    handler: {
      kind: 'read',
      run: (request, auth, { store }) => ({
        changeRequests: listRequests(store, auth.project.id, statusOf(request.query)).map((q) => requestView(store, q)),
      }),
    },
  },
  apiGetChangeRequest: {
    method: 'get',
    pattern: '/api/v1/change-requests/:request_id',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'getChangeRequest',
      tag: 'Management API',
      summary: 'A change request: what it changes, its approvals, comments, state and version',
      parameters: [
        pathParam('request_id', 'Change request id'),
        { name: 'If-None-Match', in: 'header', schema: { type: 'string' }, description: 'ETag of a previous answer: 304 when unchanged' },
      ],
      responses: {
        '200': json(ChangeRequestView, 'The change request', kEtagHeaders),
        '304': { description: 'Not modified: the If-None-Match ETag is still current', headers: kEtagHeaders },
        ...apiErrors([401, 402, 404, 429, 500]),
      },
    },
    handler: {
      kind: 'read',
      run(request, auth, { store }) {
        const found = requireRequest(store, request.params.request_id!, auth.project.id);
        const text = JSON.stringify(requestView(store, found));
        return new TaggedJson(text, requestEtag(found, Buffer.from(text)));
      },
    },
  },
  apiWithdrawChangeRequest: {
    method: 'post',
    pattern: '/api/v1/change-requests/:request_id/withdraw',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'withdrawChangeRequest',
      tag: 'Management API',
      summary: 'Withdraw a pending change request this token made',
      parameters: [pathParam('request_id', 'Change request id')],
      responses: { '200': json(ChangeRequestView, 'Withdrawn'), ...apiErrors([401, 402, 403, 404, 409, 429, 500, 503]) },
    },
    handler: {
      kind: 'write',
      async run(request, auth, _received, release, deps) {
        const input = { principal: tokenPrincipal(auth), requestId: request.params.request_id! };
        return { status: 200, value: await deps.writer.call(kApprovalCommands.requestWithdraw, input, release) };
      },
    },
  },
  apiCommentChangeRequest: {
    method: 'post',
    pattern: '/api/v1/change-requests/:request_id/comments',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'commentChangeRequest',
      tag: 'Management API',
      summary: 'Comment on a change request of the token\'s project: {"text": "..."}',
      parameters: [pathParam('request_id', 'Change request id')],
      request: { schema: CommentBody, required: true },
      responses: { '200': json(ChangeRequestView, 'Commented'), ...apiErrors([400, 401, 402, 403, 404, 413, 429, 500, 503]) },
    },
    handler: {
      kind: 'write',
      async run(request, auth, received, release, deps) {
        const parsed = parseJsonObject(received, 'create');
        if (!parsed.ok) throw new FlagwireError('INVALID_REQUEST', parsed.problem);
        const { text, ...rest } = parsed.value;
        const unknown = Object.keys(rest);
        if (typeof text !== 'string' || unknown.length > 0) {
          throw new FlagwireError(
            'INVALID_REQUEST',
            [typeof text === 'string' ? null : 'text must be a string', ...unknown.map((k) => `unknown key "${k}"`)]
              .filter((p) => p !== null)
              .join('; '),
          );
        }
        const input = { principal: tokenPrincipal(auth), requestId: request.params.request_id!, text };
        return { status: 200, value: await deps.writer.call(kApprovalCommands.requestComment, input, release) };
      },
    },
  },
};
