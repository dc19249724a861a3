// A flag's scheduled changes on the flag page (docs/release-plans.md): what is scheduled and what ran,
// a pending one cancelled with one click, and a form to schedule one: when (the browser's local time,
// sent as Unix ms), for a group flag the environment, and the change as a PATCH body in JSON. The JSON is
// checked in the page before anything is sent; the server then checks it as the PATCH it will be.
import { api, dataTable, field, formatTime, h, onSubmit, say, sayError } from './dom.js';
import { emptyState } from './shell.js';
import type { FlagPageView } from './views.js';

export function scheduleSection(data: FlagPageView, reload: () => Promise<void>): HTMLElement {
  const { flag, can } = data;
  const rows = data.schedules.map((s) =>
    h(
      'tr',
      {},
      h('td', {}, formatTime(s.at)),
      flag.environments ? h('td', {}, s.env ?? '') : null,
      h('td', {}, h('code', {}, JSON.stringify(s.patch))),
      h('td', {}, s.status),
      h('td', {}, s.outcome ?? ''),
      h(
        'td',
        {},
        can.editFlags && s.status === 'pending'
          ? h(
              'button',
              {
                type: 'button',
                'aria-label': `Cancel the change due ${formatTime(s.at)}`,
                onclick: () =>
                  api('POST', `schedules/${s.id}/cancel`)
                    .then(reload)
                    .then(() => say(`Cancelled the change due ${formatTime(s.at)}.`))
                    .catch(sayError),
              },
              'Cancel',
            )
          : null,
      ),
    ),
  );
  const table =
    rows.length === 0
      ? emptyState(
          `No scheduled changes.${can.editFlags ? ' Schedule one with the form below: a change applied at the time you choose.' : ''}`,
        )
      : dataTable(
          'Scheduled changes',
          ['Due', ...(flag.environments ? ['Environment'] : []), 'Change', 'Status', 'Outcome', 'Actions'],
          h('tbody', {}, rows),
        );
  return h('section', {}, h('h2', {}, 'Scheduled changes'), table, can.editFlags ? scheduleForm(data, reload) : null);
}

function scheduleForm(data: FlagPageView, reload: () => Promise<void>): HTMLFormElement {
  const { flag } = data;
  const when = h('input', { type: 'datetime-local', name: 'at', required: true });
  const envs = flag.environments ? Object.keys(flag.environments) : [];
  const env = h(
    'select',
    { name: 'env' },
    envs.map((e) => h('option', { value: e }, e)),
  );
  const patch = h('textarea', { name: 'patch', rows: 2, placeholder: '{"enabled": true, "trafficPercentage": 100}' });
  return h(
    'form',
    {
      onsubmit: onSubmit(async () => {
        const at = new Date(when.value).getTime();
        if (Number.isNaN(at)) {
          say('Choose when the change is due.', 'error');
          return;
        }
        let body: unknown;
        try {
          body = JSON.parse(patch.value);
        } catch (err) {
          say(`The change is not JSON (${(err as Error).message}); nothing was scheduled.`, 'error');
          return;
        }
        const query = envs.length > 0 ? `?env=${encodeURIComponent(env.value)}` : '';
        await api('POST', `flags/${flag.id}/schedules${query}`, { at, patch: body });
        await reload();
        say(`Scheduled a change of ${flag.name} for ${formatTime(at)}.`);
      }),
    },
    h(
      'fieldset',
      {},
      h('legend', {}, 'Schedule a change'),
      h(
        'div',
        { class: 'row' },
        field('Due (local time)', when),
        envs.length > 0 ? field('Environment', env) : null,
        field('Change (a PATCH body, JSON)', patch),
        h('button', { type: 'submit' }, 'Schedule'),
      ),
    ),
  );
}
