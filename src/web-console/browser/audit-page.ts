// A project's audit log.
import { api, dataTable, field, h, onSubmit, timeElement } from './dom.js';
import { crumbs, emptyState, projectTabs, show } from './shell.js';
import type { AuditView } from './views.js';

export type AuditEntry = AuditView['entries'][number];

export async function auditPage(projectId: string, params: URLSearchParams): Promise<void> {
  const data = await api<AuditView>('GET', `projects/${encodeURIComponent(projectId)}/audit?${params}`);
  const { project } = data;
  const flagNames = new Map(data.flags.map((f) => [f.id, f.name]));
  const peopleNames = new Map(data.people.map((p) => [p.ref, p.name]));
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
      // A search form: its fields are filters, not edits to keep (unsaved-edits.ts).
      { role: 'search', 'aria-label': 'Filter the audit log', onsubmit: onSubmit(async () => go({})) },
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
                h('td', {}, timeElement(e.at)),
                h('td', {}, named(e.actorName, e.actor)),
                h('td', {}, e.action),
                h('td', {}, e.flagId === null ? '' : named(flagNames.get(e.flagId) ?? null, e.flagId)),
                h('td', {}, e.env ?? ''),
                h(
                  'td',
                  {},
                  Object.entries(e.changes).map(([k, c]) =>
                    h('div', { class: 'change' }, changeKey(k, peopleNames), ': ', valueText(c.before, k), ' → ', valueText(c.after, k)),
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

/** Something by its name, its id kept as the tooltip and as smaller text after it (an unknown name: the id alone). */
function named(name: string | null, id: string): HTMLElement {
  if (name === null || name === id) return h('span', {}, id);
  return h('span', { title: id }, name, ' ', h('span', { class: 'muted id' }, id));
}

/** A change's key, a user it names by id (`role of user:usr_…`, the API's `people`) by their name, the id after it. */
function changeKey(key: string, peopleNames: ReadonlyMap<string, string>): HTMLElement {
  for (const [ref, name] of peopleNames) {
    const at = key.indexOf(ref);
    if (at !== -1) return h('span', {}, key.slice(0, at), named(name, ref), key.slice(at + ref.length));
  }
  return h('span', {}, key);
}

/** A field that holds a time (`at`, `expiresAt`, `graceEndsAt`, ...): Unix ms in the log. */
const isTimeKey = (key: string) => key === 'at' || /[a-z]At$/.test(key);

/**
 * A changed field's value as a reader reads it: text, numbers and true/false as they are, a time (a
 * number under a key such as `at` or `expiresAt`) as a date, nothing as "none", a list of text joined,
 * a record with a name (a token's) by that name; any other list or record field by field, `{key: value,
 * ...}`, each value read the same way, so a long one wraps between its fields (the table fits the page).
 */
function valueText(value: unknown, key: string): HTMLElement {
  if (value === null || value === undefined) return h('em', {}, 'none');
  if (typeof value === 'number' && isTimeKey(key)) return timeElement(value);
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return h('span', {}, String(value));
  if (Array.isArray(value) && value.every((v) => typeof v === 'string'))
    return value.length === 0 ? h('em', {}, 'none') : h('span', {}, value.join(', '));
  if (Array.isArray(value)) return h('span', {}, '[', joined(value.map((v) => valueText(v, key))), ']');
  const record = value as Record<string, unknown>;
  if (typeof record.name === 'string' && typeof record.id === 'string') return named(record.name, record.id);
  return h('span', {}, '{', joined(Object.entries(record).map(([k, v]) => h('span', {}, `${k}: `, valueText(v, k)))), '}');
}

/** Parts with ", " between them. */
function joined(parts: HTMLElement[]): (HTMLElement | string)[] {
  return parts.flatMap((part, i) => (i === 0 ? [part] : [', ', part]));
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
