// The webhooks capability's background work: the deliverer, sending the webhook outbox (deliverer.ts).
import type { NodeServices, RunningWork } from '../capability/background-work.js';
import { kWebhookCommands } from './command-table.js';
import { Deliverer } from './deliverer.js';
import { UrlGuard } from './url-safety.js';
import type { AttemptOutcome } from './webhook-commands.js';

/** The deliverer, polling from now on. */
export async function startDeliverer({ config, store, writer, clock, log }: NodeServices): Promise<RunningWork> {
  const work = {
    claim: (deliveryIds: string[], nodeId: string, claimMs: number) =>
      writer.call(kWebhookCommands.webhookClaimMany, { deliveryIds, nodeId, claimMs }),
    result: (results: { deliveryId: string; outcome: AttemptOutcome }[]) =>
      writer.call(kWebhookCommands.webhookResultMany, { results, giveUpMs: config.webhookGiveUpMs }),
  };
  const deliverer = new Deliverer(store, work, new UrlGuard(config.webhookAllow), clock, log, writer, {
    timeoutMs: config.webhookTimeoutMs,
  });
  deliverer.start();
  // After a failed start no request was answered: sends in progress are not waited for.
  return { stop: (reason) => (reason === 'failed start' ? deliverer.stop(0) : deliverer.stop()) };
}
