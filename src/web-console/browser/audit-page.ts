// A project's audit log.
import { api, dataTable, field, formatTime, h, onSubmit } from './dom.js';
import { crumbs, emptyState, projectTabs, show } from './shell.js';
import type { AuditView } from './views.js';

export type AuditEntry = AuditView['entries'][number];

export async function auditPage(projectId: string, params: URLSearchParams): Promise<void> {
  const data = await api<AuditView>('GET', `projects/${encodeURIComponent(projectId)}/audit?${params}`);
  const { project } = data;
  const flagNames = new Map(data.flags.map((f) => [f.id, f.name]));
  const flag = h(
    'select',
    { name: 'flag' },
    h('option', { value: '' }, 'Any flag'),
    data.flags.map((f) => h('option', { value: f.id, selected: params.get('flag') === f.id }, f.name)),
  );
  const actor = h('input', { type: 'text', name: 'actor', value: params.get('actor') ?? '', placeholder: 'user:usr_… or token:…' });
  const go = (extra: Record<string, string>) => {
    const next = new URLSearchParams();
    if (flag.value) next.set('flag', flag.value);
    if (actor.value.trim()) next.set('actor', actor.value.trim());
    for (const [k, v] of Object.entries(extra)) next.set(k, v);
    location.hash = `#/projects/${project.id}/audit?${next}`;
  };
  show(
    `Audit log of ${project.name}`,
    crumbs([`#/projects/${project.id}`, project.name]),
    h('h1', {}, `Audit log of ${project.name}`),
    projectTabs(project),
    h(
      'form',
      { onsubmit: onSubmit(async () => go({})) },
      h('div', { class: 'row' }, field('Flag', flag), field('Actor', actor), h('button', { type: 'submit' }, 'Filter')),
    ),
    data.entries.length === 0
      ? noEntries(data, params)
      : dataTable(
          'Audit entries',
          ['At', 'Actor', 'Action', 'Flag', 'Environment', 'Changes'],
          h(
            'tbody',
            {},
            data.entries.map((e) =>
              h(
                'tr',
                {},
                h('td', {}, formatTime(e.at)),
                h('td', {}, `${e.actorName} (${e.actor})`),
                h('td', {}, e.action),
                h('td', {}, e.flagId === null ? '' : (flagNames.get(e.flagId) ?? e.flagId)),
                h('td', {}, e.env ?? ''),
                h(
                  'td',
                  {},
                  Object.entries(e.changes).map(([k, c]) =>
                    h('div', {}, h('code', {}, `${k}: ${JSON.stringify(c.before)} → ${JSON.stringify(c.after)}`)),
                  ),
                ),
              ),
            ),
          ),
        ),
    h(
      'p',
      {},
      params.has('before') ? h('a', { href: `#/projects/${project.id}/audit` }, 'Newest entries') : null,
      ' ',
      data.nextBefore !== null
        ? h('button', { type: 'button', onclick: () => go({ before: String(data.nextBefore) }) }, 'Older entries')
        : null,
    ),
  );
}

/** An empty page of the log: filters that match nothing, or a project nothing has been done in yet. */
function noEntries(data: AuditView, params: URLSearchParams): HTMLElement {
  const { project, can } = data;
  if (params.has('flag') || params.has('actor'))
    return emptyState('No entries match these filters.', h('a', { href: `#/projects/${project.id}/audit` }, 'Show every entry'));
  const text =
    'Nothing has been changed in this project yet: every change to its flags, environments, audiences, tokens and webhooks is listed here, newest first.';
  return can.editFlags ? emptyState(text, h('a', { href: `#/projects/${project.id}` }, 'Go to the flags')) : emptyState(text);
}
