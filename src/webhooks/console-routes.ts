// The console's webhooks page: a project's webhooks, each with the newest of its delivery log; making
// one (its URL checked where it resolves, as the Management API does), deleting one, sending a delivery
// again. Every change is the webhooks capability's writer command, as the signed-in user.
import type { FlagwireError } from '../errors.js';
import { deliveryNotFound, webhookNotFound } from '../model/records/lookups.js';
import { kWebhookCommands } from './command-table.js';
import { deliveryView, webhookView } from './schemas.js';
import { refuseUnreachableUrl } from './url-safety.js';
import { projectAccess } from '../console-route/access.js';
import type { ApiCall, ApiRoute } from '../console-route/call.js';
import { compileForm, JsonObject } from '../console-route/forms.js';
import { getDelivery, getWebhook, listDeliveries, listWebhooks } from './records.js';

/** The Management API's webhook body, checked by the writer. */
const kWebhookForm = compileForm(JsonObject);

/** Deliveries the page shows per webhook, newest first (the log keeps more: the CLI and the API list them all). */
export const kShownDeliveries = 50;

export function webhooksView(call: ApiCall) {
  const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
  const webhooks = listWebhooks(call.store, access.project.id).map((hook) => {
    const log = listDeliveries(call.store, hook.id, kShownDeliveries + 1);
    return { ...webhookView(hook), deliveries: log.slice(0, kShownDeliveries).map(deliveryView), more: log.length > kShownDeliveries };
  });
  return { ...access, webhooks, shown: kShownDeliveries };
}
export type WebhooksView = ReturnType<typeof webhooksView>;

/** The project a webhook or delivery belongs to, checked as the user's (a stranger gets the 404 of an unknown id). */
function requireOwn(call: ApiCall, found: { projectId: string } | undefined, notFound: () => FlagwireError): void {
  if (found === undefined) throw notFound();
  try {
    projectAccess(call.store, call.user, found.projectId, call.now);
  } catch {
    throw notFound();
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
      const input = { principal: call.principal, projectId: access.project.id, received: call.received! };
      return call.writer.call(kWebhookCommands.webhookCreate, input);
    },
  },
  {
    method: 'POST',
    pattern: 'webhooks/:webhookId/delete',
    run(call) {
      const id = call.params.webhookId!;
      requireOwn(call, getWebhook(call.store, id), webhookNotFound);
      return call.writer.call(kWebhookCommands.webhookDelete, { principal: call.principal, webhookId: id });
    },
  },
  {
    method: 'POST',
    pattern: 'deliveries/:deliveryId/redeliver',
    async run(call) {
      const id = call.params.deliveryId!;
      requireOwn(call, getDelivery(call.store, id), deliveryNotFound);
      return deliveryView(await call.writer.call(kWebhookCommands.webhookRedeliver, { principal: call.principal, deliveryId: id }));
    },
  },
];
