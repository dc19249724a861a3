// A project's audit log, newest first, each entry as sentences (audit-sentences.ts), filtered by flag and
// actor, the filters and the page in the address.
import { auditSentences, namesOf } from '../../words/audit-sentences.js';
import { api, dataTable, field, h, onSubmit, timeElement } from './dom.js';
import { named, partElement } from './sentence-parts.js';
import { crumbs, emptyState, projectTabs, show } from './shell.js';
import type { AuditView } from './views.js';

export async function auditPage(projectId: string, params: URLSearchParams): Promise<void> {
  const data = await api<AuditView>('GET', `projects/${encodeURIComponent(projectId)}/audit?${params}`);
  const { project } = data;
  const names = namesOf(data);
  const flag = h(
    'select',
    { name: 'flag' },
    h('option', { value: '' }, 'Any flag'),
    data.flags.map((f) => h('option', { value: f.id, selected: params.get('flag') === f.id }, f.name)),
  );
  // An actor the list does not hold (a release plan, the command line, someone who left) is offered by its reference.
  const chosen = params.get('actor') ?? '';
  const actors = chosen === '' || data.actors.some((a) => a.ref === chosen) ? data.actors : [...data.actors, { ref: chosen, name: chosen }];
  const actor = h(
    'select',
    { name: 'actor' },
    h('option', { value: '' }, 'Anyone'),
    actors.map((a) => h('option', { value: a.ref, selected: a.ref === chosen }, a.name)),
  );
  // Each filter is an address of its own (pushed): back and forward go through the filters chosen.
  const go = (extra: Record<string, string>) => {
    const next = new URLSearchParams();
    if (flag.value) next.set('flag', flag.value);
    if (actor.value) next.set('actor', actor.value);
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
      // A search form: its fields are filters, not edits to keep (unsaved-edits.ts).
      { role: 'search', 'aria-label': 'Filter the audit log', onsubmit: onSubmit(async () => go({})) },
      h('div', { class: 'row' }, field('Flag', flag), field('Actor', actor), h('button', { type: 'submit' }, 'Filter')),
    ),
    data.entries.length === 0
      ? noEntries(data, params)
      : dataTable(
          'Audit entries',
          ['At', 'Actor', 'What changed', 'Action'],
          h(
            'tbody',
            {},
            data.entries.map((e) =>
              h(
                'tr',
                {},
                h('td', {}, timeElement(e.at)),
                h('td', {}, named(e.actorName, e.actor)),
                h(
                  'td',
                  {},
                  auditSentences(e, names).map((parts) => h('div', { class: 'change' }, parts.flatMap(partElement))),
                ),
                h('td', {}, h('code', {}, e.action)),
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
