// The console's webhooks page: a project's webhooks, each with the newest of its delivery log; making
// one (its URL checked where it resolves, as the Management API does), deleting one, sending a delivery
// again. Every change is the writer's console command, as the signed-in user.
import { FlagwireError } from '../../errors.js';
import { deliveryView, webhookView } from '../../webhooks/schemas.js';
import { refuseUnreachableUrl } from '../../webhooks/url-safety.js';
import { projectAccess } from '../access.js';
import type { ApiCall, ApiRoute } from './call.js';
import { compileForm, JsonObject } from '../forms.js';

/** The Management API's webhook body, checked by the writer. */
const kWebhookForm = compileForm(JsonObject);

/** Deliveries the page shows per webhook, newest first (the log keeps more: the CLI and the API list them all). */
export const kShownDeliveries = 50;

export function webhooksView(call: ApiCall) {
  const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
  const webhooks = call.store.listWebhooks(access.project.id).map((hook) => {
    const log = call.store.listDeliveries(hook.id, kShownDeliveries + 1);
    return { ...webhookView(hook), deliveries: log.slice(0, kShownDeliveries).map(deliveryView), more: log.length > kShownDeliveries };
  });
  return { ...access, webhooks, shown: kShownDeliveries };
}
export type WebhooksView = ReturnType<typeof webhooksView>;

/** The project a webhook or delivery belongs to, checked as the user's (a stranger gets the 404 of an unknown id). */
function requireOwn(call: ApiCall, found: { projectId: string } | undefined, what: 'webhook' | 'delivery', id: string): void {
  if (found === undefined) throw new FlagwireError('NOT_FOUND', `No ${what} ${id} exists.`);
  try {
    projectAccess(call.store, call.user, found.projectId, call.now);
  } catch {
    throw new FlagwireError('NOT_FOUND', `No ${what} ${id} exists.`);
  }
}

export const kWebhookRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    pattern: 'projects/:projectId/webhooks',
    run: webhooksView,
  },
  {
    method: 'POST',
    pattern: 'projects/:projectId/webhooks',
    async run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      const body = kWebhookForm.read(call.received);
      // Where the URL resolves is asked only for those who may make one: the writer refuses the others in its words.
      if (access.can.manageWebhooks) await refuseUnreachableUrl(body.url, call.config.webhookAllow);
      return call.writer.call('consoleWebhookCreate', { projectId: access.project.id, body, asUserId: call.user.id });
    },
  },
  {
    method: 'POST',
    pattern: 'webhooks/:webhookId/delete',
    run(call) {
      const id = call.params.webhookId!;
      requireOwn(call, call.store.getWebhook(id), 'webhook', id);
      return call.writer.call('consoleWebhookDelete', { webhookId: id, asUserId: call.user.id });
    },
  },
  {
    method: 'POST',
    pattern: 'deliveries/:deliveryId/redeliver',
    async run(call) {
      const id = call.params.deliveryId!;
      requireOwn(call, call.store.getDelivery(id), 'delivery', id);
      return deliveryView(await call.writer.call('consoleWebhookRedeliver', { deliveryId: id, asUserId: call.user.id }));
    },
  },
];
