// The webhooks capability's Management API routes: a project's webhooks made, listed and deleted, and
// their delivery logs read and sent again (docs/webhooks.md).
import type { ApiRequest } from '../routes/handler.js';
import { tokenPrincipal } from '../routes/route-helpers.js';
import type { ManagementRouteSpec } from '../capability/capability.js';
import { requireEveryEnvironment } from '../model/environments.js';
import { webhookNotFound } from '../model/records/lookups.js';
import { parseJsonObject } from '../model/request-body.js';
import type { AuthContext } from '../model/records/token-access.js';
import { apiErrors, json, pathParam } from '../routes/openapi-parts.js';
import { kWebhookCommands } from './command-table.js';
import {
  DeliveryBody,
  DeliveryList,
  deliveryView,
  WebhookCreate,
  WebhookCreated,
  WebhookDeleted,
  WebhookList,
  webhookView,
} from './schemas.js';
import { refuseUnreachableUrl } from './url-safety.js';
import { kKeptDeliveries, kWebhookWhat } from './webhook-commands.js';
import { getWebhook, listDeliveries, listWebhooks } from './records.js';

/**
 * A change to a webhook (make, delete, redeliver) by a token limited to some environments: the 403 before
 * the body is read or the URL resolved (the writer checks again, as it does for every webhook change).
 */
function precheckWebhookChange(_request: ApiRequest, auth: AuthContext): void {
  requireEveryEnvironment(auth.token.environments, kWebhookWhat);
}

export const kWebhookApiRoutes: Readonly<Record<string, ManagementRouteSpec>> = {
  apiCreateWebhook: {
    method: 'post',
    pattern: '/api/v1/webhooks',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'createWebhook',
      tag: 'Management API',
      summary:
        "Make a webhook of the token's project: every change of the events it names is POSTed to its URL, signed as Standard Webhooks says",
      request: { schema: WebhookCreate, required: true },
      responses: {
        '201': json(WebhookCreated, 'Made; its secret is shown only now'),
        ...apiErrors([400, 401, 402, 403, 413, 429, 500, 503]),
      },
    },
    handler: {
      kind: 'write',
      precheck: precheckWebhookChange,
      async run(_request, auth, received, release, deps) {
        const parsed = parseJsonObject(received, 'create');
        await refuseUnreachableUrl(parsed.ok ? parsed.value.url : undefined, deps.config.webhookAllow);
        const input = { principal: tokenPrincipal(auth), projectId: auth.project.id, received };
        return { status: 201, value: await deps.writer.call(kWebhookCommands.webhookCreate, input, release) };
      },
    },
  },
  apiListWebhooks: {
    method: 'get',
    pattern: '/api/v1/webhooks',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'listWebhooks',
      tag: 'Management API',
      summary: "The token's project's webhooks (without their secrets), oldest first",
      responses: { '200': json(WebhookList, 'The webhooks'), ...apiErrors([401, 402, 429, 500]) },
    },
    handler: {
      kind: 'read',
      run: (_request, auth, { store }) => ({ webhooks: listWebhooks(store, auth.project.id).map(webhookView) }),
    },
  },
  apiDeleteWebhook: {
    method: 'post',
    pattern: '/api/v1/webhooks/:webhook_id/delete',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'deleteWebhook',
      tag: 'Management API',
      summary: "Delete a webhook and its delivery log (a POST: the spec's CORS allows no DELETE)",
      parameters: [pathParam('webhook_id', 'Webhook id')],
      responses: { '200': json(WebhookDeleted, 'Deleted'), ...apiErrors([401, 402, 403, 404, 429, 500, 503]) },
    },
    handler: {
      kind: 'write',
      precheck: precheckWebhookChange,
      async run(request, auth, _received, release, deps) {
        const input = { principal: tokenPrincipal(auth), webhookId: request.params.webhook_id! };
        return { status: 200, value: await deps.writer.call(kWebhookCommands.webhookDelete, input, release) };
      },
    },
  },
  apiListDeliveries: {
    method: 'get',
    pattern: '/api/v1/webhooks/:webhook_id/deliveries',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'listDeliveries',
      tag: 'Management API',
      summary: "A webhook's delivery log, newest first: status, attempts, the receiver's last answer and latency, the next try",
      parameters: [pathParam('webhook_id', 'Webhook id')],
      responses: { '200': json(DeliveryList, 'The deliveries'), ...apiErrors([401, 402, 404, 429, 500]) },
    },
    handler: {
      kind: 'read',
      run(request, auth, { store }) {
        const hook = getWebhook(store, request.params.webhook_id!);
        if (hook === undefined || hook.projectId !== auth.project.id) throw webhookNotFound();
        return { deliveries: listDeliveries(store, hook.id, kKeptDeliveries).map(deliveryView) };
      },
    },
  },
  apiRedeliver: {
    method: 'post',
    pattern: '/api/v1/deliveries/:delivery_id/redeliver',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'redeliver',
      tag: 'Management API',
      summary: 'Send a delivery again, now: the same message (webhook-id and body), newly signed',
      parameters: [pathParam('delivery_id', 'Delivery id (msg_…)')],
      responses: { '200': json(DeliveryBody, 'Queued'), ...apiErrors([401, 402, 403, 404, 429, 500, 503]) },
    },
    handler: {
      kind: 'write',
      precheck: precheckWebhookChange,
      async run(request, auth, _received, release, deps) {
        const input = { principal: tokenPrincipal(auth), deliveryId: request.params.delivery_id! };
        return { status: 200, value: deliveryView(await deps.writer.call(kWebhookCommands.webhookRedeliver, input, release)) };
      },
    },
  },
};
