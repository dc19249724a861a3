// The command line's webhook commands (docs/cli.md): make, list, delete, read the delivery log, redeliver.
import { principalOf } from '../actor/audit-actor.js';
import { splitList } from '../cli/command/args.js';
import { command, kAsFlagEditor, str, type CliCommand } from '../cli/command/cli-command.js';
import * as out from '../cli/command/output.js';
import { requireProject, webhookNotFound } from '../model/records/lookups.js';
import { jsonBody } from '../model/request-body.js';
import { kWebhookCommands } from './command-table.js';
import { type DeliveryBody, deliveryView, type WebhookBody, type WebhookCreated, webhookView } from './schemas.js';
import { renderCreatedWebhook, renderDeliveries, renderWebhooks } from './webhook-text.js';
import { kKeptDeliveries } from './webhook-commands.js';
import { kWebhookEvents } from '../capability/webhook-events.js';
import { getWebhook, listDeliveries, listWebhooks } from './records.js';

export const kWebhookCli: readonly CliCommand[] = [
  command({
    name: 'webhook create',
    usage: `webhook create PROJECT_ID --url URL [--events ${kWebhookEvents.join(',')}] [--format standard|slack] [--as USER_ID]`,
    summary: 'POST every change of a project to a URL, signed as Standard Webhooks says -> the webhook, with its secret (shown only now)',
    positionals: ['PROJECT_ID'],
    options: {
      url: str(
        'URL',
        'where deliveries are POSTed (http:// or https://); a running server refuses to send to a private or loopback address unless FLAGWIRE_WEBHOOK_ALLOW names it',
        true,
      ),
      events: str('LIST', `of ${kWebhookEvents.join(', ')}, comma-separated (default: all)`),
      format: str('standard|slack', 'the change as JSON (default), or a Slack-compatible {text} message'),
      as: str('USER_ID', kAsFlagEditor),
    },
    run: (args, ctx) => {
      const events = args.string('events');
      const body: Record<string, unknown> = { url: args.required('url') };
      if (events !== undefined) body.events = splitList(events);
      const format = args.string('format');
      if (format !== undefined) body.format = format;
      const input = {
        principal: principalOf(args.string('as')),
        projectId: args.positional('PROJECT_ID'),
        received: jsonBody(JSON.stringify(body)),
      };
      return ctx.write(kWebhookCommands.webhookCreate, input);
    },
    human: (hook: WebhookCreated) => renderCreatedWebhook(hook, out.renderTable),
  }),
  command({
    name: 'webhook list',
    usage: 'webhook list PROJECT_ID',
    summary: "a project's webhooks, without their secrets -> {webhooks: [...]}",
    positionals: ['PROJECT_ID'],
    options: {},
    run: (args, ctx) =>
      ctx.read((r) => ({ webhooks: listWebhooks(r, requireProject(r, args.positional('PROJECT_ID')).id).map(webhookView) })),
    human: (result: { webhooks: WebhookBody[] }) => renderWebhooks(result.webhooks, out.renderTable),
  }),
  command({
    name: 'webhook delete',
    usage: 'webhook delete WEBHOOK_ID [--as USER_ID]',
    summary: 'delete a webhook and its delivery log -> {id, deleted}',
    positionals: ['WEBHOOK_ID'],
    options: { as: str('USER_ID', kAsFlagEditor) },
    run: (args, ctx) =>
      ctx.write(kWebhookCommands.webhookDelete, { principal: principalOf(args.string('as')), webhookId: args.positional('WEBHOOK_ID') }),
    human: (result: { id: string }) => `Deleted webhook ${result.id}.`,
  }),
  command({
    name: 'webhook deliveries',
    usage: 'webhook deliveries WEBHOOK_ID',
    summary: "a webhook's delivery log, newest first: status, attempts, the last answer, latency, the next try -> {deliveries: [...]}",
    positionals: ['WEBHOOK_ID'],
    options: {},
    run: (args, ctx) =>
      ctx.read((r) => {
        const hook = getWebhook(r, args.positional('WEBHOOK_ID'));
        if (hook === undefined) throw webhookNotFound();
        return { deliveries: listDeliveries(r, hook.id, kKeptDeliveries).map(deliveryView) };
      }),
    human: (result: { deliveries: DeliveryBody[] }) => renderDeliveries(result.deliveries, out.renderTable),
  }),
  command({
    name: 'webhook redeliver',
    usage: 'webhook redeliver DELIVERY_ID [--as USER_ID]',
    summary: 'send a delivery again now: the same message (webhook-id and body), newly signed -> the delivery',
    positionals: ['DELIVERY_ID'],
    options: { as: str('USER_ID', kAsFlagEditor) },
    run: async (args, ctx) =>
      deliveryView(
        await ctx.write(kWebhookCommands.webhookRedeliver, {
          principal: principalOf(args.string('as')),
          deliveryId: args.positional('DELIVERY_ID'),
        }),
      ),
    human: (delivery: DeliveryBody) => renderDeliveries([delivery], out.renderTable),
  }),
];
