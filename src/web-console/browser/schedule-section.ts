// A flag's scheduled changes on the flag page (docs/release-plans.md): what is scheduled and what ran,
// a pending one cancelled with one click, and a form to schedule one: when (the browser's local time,
// sent as Unix ms), for a group flag the environment, and the change as the flag's own fields (enabled,
// percentage, audience, cohorts, default variant), the rest of a PATCH body as JSON. The server checks
// the change as the PATCH it will be.
import { api, dataTable, field, formNumber, h, listEditor, onSubmit, percentageField, say, sayError } from './dom.js';
import { formatTime } from '../../words/time.js';
import { emptyState } from './shell.js';
import { patchSentences } from '../../words/audit-sentences.js';
import { partElement } from './sentence-parts.js';
import type { FlagPageView } from './views.js';

export function scheduleSection(data: FlagPageView, reload: () => Promise<void>): HTMLElement {
  const { flag, can } = data;
  // A change reads as the audit log reads it once made: one sentence per field, audiences by name.
  const names = {
    flags: new Map([[flag.id, flag.name]]),
    audiences: new Map(data.audiences.map((a) => [a.id, a.name])),
    people: new Map(),
  };
  const rows = data.schedules.map((s) =>
    h(
      'tr',
      {},
      h('td', {}, formatTime(s.at)),
      flag.environments ? h('td', {}, s.env ?? '') : null,
      h(
        'td',
        {},
        patchSentences(s.patch, names).map((parts) => h('div', { class: 'change' }, parts.flatMap(partElement))),
      ),
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

/**
 * The form that schedules a change: when, for a group flag the environment, and the change as the flag's
 * own fields (each left as it is unless chosen), with the flag's other PATCH keys (variants, rule,
 * metadata) as JSON folded below for what the fields do not cover.
 */
function scheduleForm(data: FlagPageView, reload: () => Promise<void>): HTMLFormElement {
  const { flag } = data;
  const when = h('input', { type: 'datetime-local', name: 'at', required: true });
  const envs = flag.environments ? Object.keys(flag.environments) : [];
  const env = h(
    'select',
    { name: 'env' },
    envs.map((e) => h('option', { value: e }, e)),
  );
  const keep = () => h('option', { value: '' }, 'Leave as it is');
  const enabled = h('select', { name: 'enabled' }, keep(), h('option', { value: 'true' }, 'On'), h('option', { value: 'false' }, 'Off'));
  const percentage = h('input', { type: 'text', name: 'trafficPercentage', size: 6 });
  const audience = h(
    'select',
    { name: 'audienceId' },
    keep(),
    h('option', { value: 'none' }, 'Everyone (no audience)'),
    data.audiences.map((a) => h('option', { value: a.id }, a.name)),
  );
  const setCohorts = h('input', { type: 'checkbox', name: 'setCohorts' });
  const cohorts = listEditor('Cohorts', 'Scheduled cohort', []);
  // The default variant is one of the variants of the state the change is for (the environment chosen).
  const defaultVariant = h('select', { name: 'defaultVariant' });
  const variantsOf = () => {
    const state = envs.length > 0 ? flag.environments?.[env.value] : flag;
    return state?.variants ? Object.keys(state.variants) : [];
  };
  const defaultField = field('Default variant when due', defaultVariant);
  const showVariants = () => {
    const names = variantsOf();
    defaultVariant.replaceChildren(keep(), ...names.map((n) => h('option', { value: n }, n)));
    defaultField.hidden = names.length === 0;
  };
  showVariants();
  env.addEventListener('change', showVariants);
  const more = h('textarea', { name: 'more', rows: 2, placeholder: '{"targeting": {"fractional": [["on", 50], ["off", 50]]}}' });
  return h(
    'form',
    {
      onsubmit: onSubmit(async () => {
        const at = new Date(when.value).getTime();
        if (Number.isNaN(at)) {
          say('Choose when the change is due.', 'error');
          return;
        }
        const patch = otherFields(more.value);
        if (typeof patch === 'string') {
          say(`${patch}; nothing was scheduled.`, 'error');
          return;
        }
        if (enabled.value !== '') patch.enabled = enabled.value === 'true';
        if (percentage.value.trim() !== '') patch.trafficPercentage = formNumber(percentage.value);
        if (audience.value !== '') patch.audienceId = audience.value === 'none' ? null : audience.value;
        if (setCohorts.checked) patch.cohorts = cohorts.items();
        if (!defaultField.hidden && defaultVariant.value !== '') patch.defaultVariant = defaultVariant.value;
        if (Object.keys(patch).length === 0) {
          say('Choose at least one field to change; nothing was scheduled.', 'error');
          return;
        }
        const query = envs.length > 0 ? `?env=${encodeURIComponent(env.value)}` : '';
        await api('POST', `flags/${flag.id}/schedules${query}`, { at, patch });
        await reload();
        say(`Scheduled a change of ${flag.name} for ${formatTime(at)}.`);
      }),
    },
    h(
      'fieldset',
      {},
      h('legend', {}, 'Schedule a change'),
      h('div', { class: 'row' }, field('Due (local time)', when), envs.length > 0 ? field('Environment', env) : null),
      h(
        'div',
        { class: 'row' },
        field('On or off when due', enabled),
        percentageField('Percentage when due (blank: as it is)', percentage),
        field('Audience when due', audience),
        defaultField,
      ),
      h('div', { class: 'row' }, field('Replace the cohorts when due', setCohorts), cohorts.element),
      h(
        'details',
        {},
        h('summary', {}, 'Other fields (variants, rule, metadata) as JSON'),
        field('Other fields of the change (JSON, as a PATCH body)', more, 'block'),
      ),
      h('p', {}, h('button', { type: 'submit' }, 'Schedule')),
    ),
  );
}

/**
 * The other fields typed as JSON, as the start of the patch the form's fields are added to ({} when
 * blank), or why they cannot be: not JSON, or not an object to add fields to.
 */
function otherFields(text: string): Record<string, unknown> | string {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return `The other fields are not JSON (${(err as Error).message})`;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? { ...value }
    : 'The other fields must be a JSON object, such as {"targeting": {}}';
}
