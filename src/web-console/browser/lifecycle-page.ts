// A project's flag lifecycle (docs/web-console.md; issue 99): what to remove this week, by owner (the
// flags ready to archive), every flag in service by its stage, and the archived flags. Archive and
// Restore are offered to those who may change flags; in a guarded environment they open a change
// request, as any change there does. The stages are the server's (src/flags/lifecycle.ts). Last, the
// keys code reads that are no flags (code-refs-section.ts).
import { api, dataTable, h, onThisPage, say, sayError } from './dom.js';
import { formatTime } from '../../words/time.js';
import { crumbs, emptyState, projectTabs, show } from './shell.js';
import type { LifecyclePageView, MissingKeysView } from './views.js';
import { missingKeysSection } from './code-refs-section.js';

type Row = LifecyclePageView['flags'][number];

/** The words of each stage, in the order the page lists them. */
const kStageWords: Readonly<Record<Row['stage'], string>> = {
  'ready-to-archive': 'ready to archive',
  unused: 'unused',
  settled: 'settled',
  live: 'live',
  new: 'new',
  archived: 'archived',
};

export async function lifecyclePage(projectId: string): Promise<void> {
  const data = await api<LifecyclePageView>('GET', `projects/${encodeURIComponent(projectId)}/lifecycle`);
  const missing = await api<MissingKeysView>('GET', `projects/${encodeURIComponent(projectId)}/code-refs/missing`);
  const { project, can } = data;
  const reload = onThisPage(() => lifecyclePage(projectId));
  const act = async (row: Row, verb: 'archive' | 'restore') => {
    try {
      await api('POST', `flags/${encodeURIComponent(row.id)}/${verb}`);
      await reload();
      say(verb === 'archive' ? `Flag ${row.name} archived: nothing serves it now.` : `Flag ${row.name} restored: it serves again.`);
    } catch (err) {
      sayError(err);
    }
  };
  const button = (row: Row, verb: 'archive' | 'restore') =>
    can.editFlags
      ? h('button', { type: 'button', class: 'secondary', onclick: () => void act(row, verb) }, verb === 'archive' ? 'Archive' : 'Restore')
      : null;
  const ready = data.flags.filter((f) => f.stage === 'ready-to-archive');
  const serving = data.flags.filter((f) => f.stage !== 'archived' && f.stage !== 'ready-to-archive');
  const archived = data.flags.filter((f) => f.stage === 'archived');
  const owners = [...new Set(ready.map((f) => f.owner ?? ''))].sort();
  const usageUnknown = data.flags.some((f) => !f.usageKnown);
  show(
    `Lifecycle of ${project.name}`,
    crumbs([`#/projects/${project.id}`, project.name]),
    h('h1', {}, `Lifecycle of ${project.name}`),
    projectTabs(project),
    usageUnknown
      ? h(
          'p',
          { class: 'muted' },
          "In-process providers (Flagwire's, flagd's) report no evaluations yet, so no flag is called unused: a flag is ready to archive once it has served one answer everywhere past its lifetime and a code scan found no reference to it.",
        )
      : null,
    h('h2', {}, 'To remove this week'),
    ready.length === 0
      ? emptyState('No flag is ready to archive.')
      : owners.map((owner) =>
          h(
            'section',
            {},
            h('h3', {}, owner === '' ? 'No owner' : owner),
            table(
              'Ready to archive',
              ready.filter((f) => (f.owner ?? '') === owner),
              (f) => button(f, 'archive'),
            ),
          ),
        ),
    h('h2', {}, 'In service'),
    serving.length === 0 ? emptyState('No other flag.') : table('Flags in service', serving, (f) => button(f, 'archive')),
    h('h2', {}, 'Archived'),
    archived.length === 0
      ? emptyState('No archived flag. An archived flag keeps its name, history and audit; nothing serves it until it is restored.')
      : table('Archived flags', archived, (f) => button(f, 'restore')),
    missingKeysSection(missing),
  );
}

function table(label: string, rows: readonly Row[], action: (row: Row) => HTMLElement | null): HTMLElement {
  const body = h(
    'tbody',
    {},
    rows.map((f) =>
      h(
        'tr',
        {},
        h('td', {}, h('a', { href: `#/flags/${f.id}` }, f.name)),
        h('td', {}, kStageWords[f.stage]),
        h('td', {}, f.type),
        h('td', {}, f.owner ?? '-'),
        h('td', {}, f.lifetimeDays === 'permanent' ? 'permanent' : `${f.lifetimeDays} days`),
        h('td', {}, f.lastEvaluatedAt === null ? 'never' : formatTime(f.lastEvaluatedAt)),
        h('td', {}, action(f)),
      ),
    ),
  );
  return dataTable(label, ['Flag', 'Stage', 'Type', 'Owner', 'Lifetime', 'Last evaluated', ''], body);
}
