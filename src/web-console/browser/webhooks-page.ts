// A project's webhooks (docs/webhooks.md): each with the newest of its delivery log and a Redeliver
// button per delivery; a form to make one (its secret shown once, above the form, after the page
// reloads); Delete confirmed in a dialog. Forms and buttons are offered to those who may change flags.
import { askToConfirm } from './confirm-dialog.js';
import { api, dataTable, field, h, onSubmit, onThisPage, say, sayError } from './dom.js';
import { formatTime } from '../../words/time.js';
import { crumbs, emptyState, projectTabs, secretBox, show, toForm } from './shell.js';
import type { WebhooksView } from './views.js';

type WebhookRow = WebhooksView['webhooks'][number];
type DeliveryRow = WebhookRow['deliveries'][number];

/** The events a webhook may subscribe to, as the form offers them (the server's list: WebhookCreate). */
const kEvents: readonly [string, string][] = [
  ['flag', 'flag (flags, environments, audiences)'],
  ['token', 'token (made, rotated, revoked)'],
  ['plan', 'plan (scheduled changes, rollouts)'],
];

export async function webhooksPage(projectId: string, created: HTMLElement | null = null): Promise<void> {
  const data = await api<WebhooksView>('GET', `projects/${encodeURIComponent(projectId)}/webhooks`);
  const { project, can } = data;
  const reload = onThisPage((box: HTMLElement | null = null) => webhooksPage(projectId, box));
  const create = can.manageWebhooks ? createWebhookForm(project.id, reload) : null;
  show(
    `Webhooks of ${project.name}`,
    crumbs([`#/projects/${project.id}`, project.name]),
    h('h1', {}, `Webhooks of ${project.name}`),
    projectTabs(project),
    h(
      'p',
      {},
      `Every change a webhook subscribes to is POSTed to its URL, signed as Standard Webhooks says. Each webhook's newest ${data.shown} deliveries are shown below it, newest first.`,
    ),
    can.manageWebhooks
      ? null
      : h('p', { class: 'muted' }, 'Making, deleting and redelivering webhooks needs a role that may change flags (Editor, Admin, Owner).'),
    created,
    create,
    data.webhooks.length > 0
      ? webhooksTable(data.webhooks, can.manageWebhooks, reload)
      : create === null
        ? emptyState('No webhooks yet. An Editor, Admin or Owner can create one.')
        : emptyState(
            "No webhooks yet. Create one with the New webhook form to have this project's changes sent to your URL as they happen.",
            toForm('Create a webhook', create),
          ),
    ...data.webhooks.map((hook) => deliveryLog(hook, data.shown, can.manageWebhooks, reload)),
  );
}

function createWebhookForm(projectId: string, reload: (box: HTMLElement) => Promise<void>): HTMLElement {
  const url = h('input', { type: 'url', name: 'url', required: true, placeholder: 'https://ci.example.com/flagwire', size: 40 });
  const events = kEvents.map(([value]) => h('input', { type: 'checkbox', name: 'events', value, checked: true }));
  const format = h(
    'select',
    { name: 'format' },
    h('option', { value: 'standard' }, 'standard (the change as JSON)'),
    h('option', { value: 'slack' }, 'slack (a Slack-compatible message)'),
  );
  return h(
    'form',
    {
      onsubmit: onSubmit(async () => {
        const hook = await api<{ url: string; secret: string }>('POST', `projects/${projectId}/webhooks`, {
          url: url.value,
          events: events.filter((e) => e.checked).map((e) => e.value),
          format: format.value,
        });
        await reload(
          secretBox({
            label: 'New webhook secret',
            heading: `Secret of the webhook to ${hook.url}`,
            advice:
              "Copy it now: it is shown only this once and cannot be shown again. The receiver checks each delivery's webhook-signature with it (any Standard Webhooks library does); a lost secret needs a new webhook.",
            id: 'webhook-secret',
            secret: hook.secret,
          }),
        );
        say(`Webhook to ${hook.url} created.`);
      }),
    },
    h(
      'fieldset',
      {},
      h('legend', {}, 'New webhook'),
      h(
        'div',
        { class: 'row' },
        field('URL', url),
        h(
          'span',
          { role: 'group', 'aria-label': 'Events' },
          'Events: ',
          events.map((e, i) => field(kEvents[i]![1], e)),
        ),
        field('Format', format),
        h('button', { type: 'submit' }, 'Create webhook'),
      ),
    ),
  );
}

function webhooksTable(hooks: readonly WebhookRow[], manage: boolean, reload: () => Promise<void>): HTMLElement {
  const remove = (hook: WebhookRow) => async () => {
    const confirmed = await askToConfirm({
      title: `Delete the webhook to ${hook.url}?`,
      text: 'Nothing more is sent to it, and its delivery log goes with it.',
      confirm: 'Delete',
      danger: true,
    });
    if (!confirmed) return;
    api('POST', `webhooks/${hook.id}/delete`)
      .then(() => reload())
      .then(() => say(`Webhook to ${hook.url} deleted.`))
      .catch(sayError);
  };
  return dataTable(
    'Webhooks',
    ['URL', 'Events', 'Format', 'Created by', 'Created', manage ? 'Actions' : null].filter((c): c is string => c !== null),
    h(
      'tbody',
      {},
      hooks.map((hook) =>
        h(
          'tr',
          {},
          h('td', {}, h('code', {}, hook.url)),
          h('td', {}, hook.events.join(', ')),
          h('td', {}, hook.format),
          h('td', {}, `${hook.createdByName} (${hook.createdBy})`),
          h('td', {}, formatTime(hook.createdAt)),
          manage
            ? h(
                'td',
                {},
                h(
                  'button',
                  { type: 'button', class: 'danger', 'aria-label': `Delete webhook ${hook.url}`, onclick: remove(hook) },
                  'Delete',
                ),
              )
            : null,
        ),
      ),
    ),
  );
}

/** What the receiver last answered: its status code, or why there was no answer. */
function lastAnswer(d: DeliveryRow): string {
  if (d.attempts === 0) return '—';
  const code = d.lastStatus === null ? 'no answer' : `HTTP ${d.lastStatus}`;
  return d.lastError === null ? code : `${code}: ${d.lastError}`;
}

function deliveryLog(hook: WebhookRow, shown: number, manage: boolean, reload: () => Promise<void>): HTMLElement {
  const redeliver = (d: DeliveryRow) => () => {
    api('POST', `deliveries/${d.id}/redeliver`)
      .then(() => reload())
      .then(() => say(`Delivery ${d.id} (${d.event}) queued again: it is sent now, with the same webhook-id.`))
      .catch(sayError);
  };
  const columns = ['Message id', 'Event', 'Status', 'Attempts', 'Last answer', 'Latency', 'Next try', 'Created'];
  return h(
    'section',
    { 'aria-label': `Deliveries to ${hook.url}` },
    h('h2', {}, 'Deliveries to ', h('code', {}, hook.url)),
    hook.deliveries.length === 0
      ? emptyState('No deliveries yet: one is sent each time a change this webhook subscribes to is made.')
      : dataTable(
          `Delivery log of ${hook.url}`,
          manage ? [...columns, 'Actions'] : columns,
          h(
            'tbody',
            {},
            hook.deliveries.map((d) =>
              h(
                'tr',
                {},
                h('td', {}, h('code', {}, d.id)),
                h('td', {}, d.event),
                h('td', {}, h('span', { class: `pill ${d.status}` }, d.status)),
                h('td', {}, d.attempts),
                h('td', {}, lastAnswer(d)),
                h('td', {}, d.lastLatencyMs === null ? '—' : `${d.lastLatencyMs} ms`),
                h('td', {}, formatTime(d.nextAttemptAt)),
                h('td', {}, formatTime(d.createdAt)),
                manage
                  ? h(
                      'td',
                      {},
                      h(
                        'button',
                        { type: 'button', class: 'secondary', 'aria-label': `Redeliver ${d.id}`, onclick: redeliver(d) },
                        'Redeliver',
                      ),
                    )
                  : null,
              ),
            ),
          ),
        ),
    hook.more
      ? h(
          'p',
          { class: 'muted' },
          `Only the newest ${shown} are shown: flagwire webhook deliveries ${hook.id} and GET /api/v1/webhooks/${hook.id}/deliveries list the whole log.`,
        )
      : null,
  );
}
