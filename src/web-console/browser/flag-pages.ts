// A project's flags, and one flag (its state per environment, texts, deletion, where code reads it).
import {
  api,
  dataTable,
  field,
  formNumber,
  h,
  listEditor,
  onSubmit,
  onThisPage,
  percentageField,
  say,
  sayError,
  sayOnNextPage,
} from './dom.js';
import { formatTime } from '../../words/time.js';
import { confirmProtected, crumbs, emptyState, projectTabs, show, toForm } from './shell.js';
import { changeFlag } from './flag-change.js';
import { codeRefsSection } from './code-refs-section.js';
import { savedWithUndo, settingSavedWithUndo } from './flag-undo.js';
import { rolloutSection } from './rollout-section.js';
import { rulePlayground } from './rule-playground.js';
import { hourlyChart } from './usage-chart.js';
import { scheduleSection } from './schedule-section.js';
import { unleashSection } from './unleash-editor.js';
import { variantsForm } from './variant-editor.js';
import { approvalsText, inEnvironments } from './requests-page.js';
import type { FlagCodeRefsView, FlagPageView, FlagPlansView, FlagRequestsView, FlagView, FlatState, ProjectView } from './views.js';

/** A state's percentage, cohorts, audience (by name: `audiences`, id to name) and variants at a glance (without on/off); a state in Unleash's model, its strategies' count. */
function stateDetail(state: FlatState, audiences: ReadonlyMap<string, string>): string {
  // The percentage, cohorts and audience of a state in Unleash's model are not read: its strategies decide.
  const strategies = state.unleash?.strategies.length;
  if (strategies !== undefined) return `Unleash model · ${strategies} ${strategies === 1 ? 'strategy' : 'strategies'}`;
  const audience = state.audienceId ? ` · audience ${audiences.get(state.audienceId) ?? state.audienceId}` : '';
  return `${state.trafficPercentage}%${state.cohorts.length > 0 ? ` · cohorts ${state.cohorts.join(', ')}` : ''}${audience}${state.variants ? ` · ${Object.keys(state.variants).length} variants` : ''}`;
}

/** The list's "Show" choices: every flag, the stale ones (the CLI's `flag stale` rule), the never evaluated. */
const kShows = { all: 'All flags', stale: 'Stale', never: 'Never evaluated' } as const;
type Show = keyof typeof kShows;

/**
 * The project's flags, filtered by the search text and the tag as the user types; both are kept in the
 * address (#/projects/ID?q=...&tag=...), so a reload or coming back to the list shows the same rows.
 */
export async function projectPage(projectId: string, params: URLSearchParams): Promise<void> {
  const data = await api<ProjectView>('GET', `projects/${encodeURIComponent(projectId)}`);
  const { project, can } = data;
  const search = h('input', { type: 'search', name: 'search', value: params.get('q') ?? '', 'aria-keyshortcuts': '/' });
  const tags = [...new Set(data.flags.flatMap((f) => f.tags))].sort();
  const tag = h(
    'select',
    { name: 'tag' },
    h('option', { value: '' }, 'Any tag'),
    tags.map((t) => h('option', { value: t, selected: t === params.get('tag') }, t)),
  );
  const shown = h(
    'select',
    { name: 'show' },
    Object.entries(kShows).map(([value, label]) =>
      h(
        'option',
        { value, selected: value === params.get('show') },
        value === 'stale' ? `${label} (no evaluation for ${data.staleDays} days)` : label,
      ),
    ),
  );
  const stale = new Set(data.stale);
  const envs = project.environments;
  const body = h('tbody');
  const clear = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      onclick: () => {
        search.value = '';
        tag.value = '';
        shown.value = 'all';
        filter();
        search.focus();
      },
    },
    'Show every flag',
  );
  const matches = (f: FlagView): boolean => {
    const show = shown.value as Show;
    return show === 'all' || (show === 'stale' ? stale.has(f.id) : f.lastEvaluatedAt === null);
  };
  const render = () => {
    const q = search.value.trim().toLowerCase();
    const rows = data.flags.filter(
      (f) =>
        (q === '' || f.name.toLowerCase().includes(q) || f.description.toLowerCase().includes(q)) &&
        (tag.value === '' || f.tags.includes(tag.value)) &&
        matches(f),
    );
    body.replaceChildren(...rows.map((f) => flagRow(f, envs, stale.has(f.id), data.hourly[f.id], data, can.editFlags ? toggle : null)));
    if (rows.length === 0)
      body.append(
        h(
          'tr',
          {},
          h(
            'td',
            { colspan: Math.max(1, envs.length) + 3 },
            emptyState('No flag matches the search, the tag and the choice shown.', clear),
          ),
        ),
      );
  };
  const reload = onThisPage(() => projectPage(projectId, params));
  // One click turns a flag on or off (in one environment): the same PATCH as the flag page's form.
  const toggle = async (f: FlagView, env: string | null, enabled: boolean): Promise<void> => {
    if (!(await confirmProtected(project, env, `Turn ${f.name} ${enabled ? 'on' : 'off'} in ${env}`))) {
      render();
      return;
    }
    const query = env === null ? '' : `?env=${encodeURIComponent(env)}`;
    const result = await api<{ flag: FlatState }>('PATCH', `flags/${f.id}${query}`, { enabled });
    // Only `enabled` was sent: the rest of the state is as the page read it.
    const entry = env === null ? null : f.environments?.[env];
    if (entry) entry.enabled = result.flag.enabled;
    else f.enabled = result.flag.enabled;
    render();
    body.querySelector<HTMLButtonElement>(`button[data-toggle="${f.id}:${env ?? ''}"]`)?.focus();
    const turned = `${f.name} turned ${result.flag.enabled ? 'on' : 'off'}${env === null ? '' : ` in ${env}`}.`;
    // Undo from the status line, as on the flag page; the list is read again after it.
    savedWithUndo(turned, f, env, { enabled: !enabled }, reload);
  };
  // The address is replaced, not pushed: typing is no navigation (hashchange would re-read the page).
  const filter = () => {
    const next = new URLSearchParams();
    if (search.value !== '') next.set('q', search.value);
    if (tag.value !== '') next.set('tag', tag.value);
    if (shown.value !== 'all') next.set('show', shown.value);
    const query = String(next);
    history.replaceState(history.state, '', `#/projects/${encodeURIComponent(project.id)}${query === '' ? '' : `?${query}`}`);
    render();
  };
  search.addEventListener('input', filter);
  tag.addEventListener('change', filter);
  shown.addEventListener('change', filter);
  render();
  const create = can.editFlags ? newFlagForm(project.id) : null;
  show(
    project.name,
    crumbs(),
    h('h1', {}, project.name),
    projectTabs(project),
    h('p', { class: 'muted' }, `Your role: ${data.role}${can.editFlags ? '' : ' (read-only)'}`),
    create,
    data.flags.length === 0
      ? emptyState(
          create === null
            ? 'This project has no flags yet. An Editor, Admin or Owner of its organisation can create them.'
            : 'This project has no flags yet. Create the first one with the New flag form: a new flag is off, so nothing changes for your users until you turn it on.',
          create === null ? null : toForm('Create a flag', create),
        )
      : [
          h('div', { class: 'row' }, field('Search flags', search), field('Tag', tag), field('Show', shown)),
          dataTable(`Flags of ${project.name}`, ['Flag', ...(envs.length > 0 ? envs : ['State']), 'Evaluations', 'Tags'], body),
        ],
  );
}

type Toggle = (f: FlagView, env: string | null, enabled: boolean) => Promise<void>;

/**
 * One flag of the project page's table: its name and description, its state in a column per
 * environment (a flag without environments spans them; each with its last day's evaluations per hour), its evaluations (with
 * their last day per hour), its tags. `toggle`: null for
 * a user who may not change flags (the states are read-only pills).
 */
function flagRow(
  f: FlagView,
  envs: readonly string[],
  stale: boolean,
  hourly: number[] | undefined,
  data: Pick<ProjectView, 'splits' | 'audiences' | 'hourlyByEnvironment'>,
  toggle: Toggle | null,
): HTMLElement {
  const { splits } = data;
  const audiences = new Map(data.audiences.map((a) => [a.id, a.name]));
  const cell = (env: string | null, state: FlatState, split: string | undefined) => stateCell(f, env, state, split, audiences, toggle);
  const states: HTMLElement[] = f.environments
    ? envs.map((env) => {
        const byEnv = data.hourlyByEnvironment[`${f.id}:${env}`];
        const state = f.environments?.[env] ? cell(env, f.environments[env], splits[`${f.id}:${env}`]) : '—';
        return h('td', {}, state, byEnv ? hourlyChart(byEnv, env) : null);
      })
    : [h('td', { colspan: Math.max(1, envs.length) }, cell(null, f as FlatState, splits[f.id]))];
  return h(
    'tr',
    {},
    h('td', {}, h('a', { href: `#/flags/${f.id}` }, f.name), f.description ? h('div', { class: 'muted' }, f.description) : null),
    states,
    h(
      'td',
      {},
      f.lastEvaluatedAt === null
        ? h('span', { class: 'muted' }, 'never evaluated')
        : [h('div', {}, f.evaluations.toLocaleString('en')), h('div', { class: 'muted' }, `last ${formatTime(f.lastEvaluatedAt)}`)],
      stale ? [' ', h('span', { class: 'pill stale' }, 'stale')] : null,
      hourly && f.lastEvaluatedAt !== null ? hourlyChart(hourly) : null,
    ),
    h('td', {}, f.tags.join(', ')),
  );
}

/**
 * One state: a toggle (aria-pressed) for an editor, a pill for a viewer, then its percentage, cohorts,
 * variants and, when its rule is a bare split, the split (`split`, as the server wrote it).
 */
function stateCell(
  f: FlagView,
  env: string | null,
  state: FlatState,
  split: string | undefined,
  audiences: ReadonlyMap<string, string>,
  toggle: Toggle | null,
): HTMLElement[] {
  const where = env === null ? f.name : `${f.name} in ${env}`;
  const onOff =
    toggle === null
      ? h('span', { class: `pill ${state.enabled ? 'on' : 'off'}` }, state.enabled ? 'on' : 'off')
      : h(
          'button',
          {
            type: 'button',
            class: `toggle ${state.enabled ? 'on' : 'off'}`,
            'aria-pressed': String(state.enabled),
            // The visible word first (WCAG 2.5.3: the name holds the text shown), then which flag and where.
            'aria-label': `${state.enabled ? 'On' : 'Off'}: ${where}`,
            'data-toggle': `${f.id}:${env ?? ''}`,
            onclick: (event: Event) => {
              (event.currentTarget as HTMLButtonElement).disabled = true;
              toggle(f, env, !state.enabled).catch(sayError);
            },
          },
          state.enabled ? 'On' : 'Off',
        );
  const detail = stateDetail(state, audiences);
  return [onOff, h('div', { class: 'muted' }, split === undefined ? detail : `${detail} · split ${split}`)];
}

const kBucketingHintId = 'new-flag-bucketing-hint';

/** The form that creates a flag (off) in the project, then opens its page. */
function newFlagForm(projectId: string): HTMLFormElement {
  const name = h('input', { type: 'text', name: 'name', required: true });
  const description = h('input', { type: 'text', name: 'description' });
  const newTags = listEditor('Tags', 'New flag tag', []);
  // A flag's bucketing is chosen here once (docs/decisions.md: A flag's bucketing): modulo, the default.
  const bucketing = h(
    'select',
    { name: 'bucketing', 'aria-describedby': kBucketingHintId },
    h('option', { value: 'modulo' }, 'Modulo (default)'),
    h('option', { value: 'fractional' }, 'Fractional (flagd)'),
  );
  return h(
    'form',
    {
      onsubmit: onSubmit(async () => {
        const created = await api<FlagView>('POST', `projects/${projectId}/flags`, {
          name: name.value,
          description: description.value,
          tags: newTags.items(),
          // Only a choice is sent: a modulo flag's create is the body it always was.
          ...(bucketing.value === 'fractional' ? { bucketing: 'fractional' } : {}),
        });
        sayOnNextPage(`Flag ${created.name} created (off).`);
        location.hash = `#/flags/${created.id}`;
      }),
    },
    h(
      'fieldset',
      {},
      h('legend', {}, 'New flag'),
      h(
        'div',
        { class: 'row' },
        field('Name', name),
        field('Description', description),
        newTags.element,
        field('Bucketing', bucketing),
        h('button', { type: 'submit' }, 'Create flag'),
      ),
      h(
        'p',
        { id: kBucketingHintId, class: 'muted' },
        'Bucketing decides which users a percentage lets in, and is fixed once the flag is made. Choose fractional for a flag served to flagd or OpenFeature in-process providers: they then bucket users exactly as Flagwire does.',
      ),
    ),
  );
}

/**
 * Where flagd's flag sets leave the flag out (docs/design.md §2c): stock flagd providers then do not see
 * it, and the page says why, per environment. Nothing when every set serves it.
 */
function flagdNote(data: FlagPageView): HTMLElement | null {
  const left = data.flagd.filter((f) => !f.served);
  if (left.length === 0) return null;
  const line = (f: FlagPageView['flagd'][number]) => (f.environment === null ? f.reason : `${f.environment}: ${f.reason}`);
  return h(
    'div',
    { class: 'muted' },
    h('p', {}, 'Not served to flagd and OpenFeature in-process providers (the sync service leaves it out of their flag set):'),
    h('ul', {}, ...left.map((f) => h('li', {}, line(f) ?? ''))),
  );
}

/** The flag's pending change requests (docs/web-console.md: Approvals): each linked, with its approvals so far. */
function pendingRequests(pending: FlagRequestsView): HTMLElement | null {
  if (pending.requests.length === 0) return null;
  return h(
    'section',
    { 'aria-label': 'Pending change requests' },
    h('h2', {}, 'Pending change requests'),
    h(
      'ul',
      {},
      pending.requests.map((r) =>
        h(
          'li',
          {},
          h('a', { href: `#/requests/${r.id}` }, r.title),
          ` by ${r.authoredBy}${inEnvironments(r.environments)}: ${approvalsText(r)}`,
          r.stale ? [' ', h('span', { class: 'pill stale' }, 'stale')] : null,
        ),
      ),
    ),
  );
}

export async function flagPage(flagId: string): Promise<void> {
  const id = encodeURIComponent(flagId);
  const flagAnswer = await api<Omit<FlagPageView, keyof FlagPlansView>>('GET', `flags/${id}`);
  // Read once the flag is known to be there: an unknown flag is one 404, its "Not found" page.
  const data: FlagPageView = { ...flagAnswer, ...(await api<FlagPlansView>('GET', `flags/${id}/plans`)) };
  const pending = await api<FlagRequestsView>('GET', `flags/${id}/requests`);
  const codeRefs = await api<FlagCodeRefsView>('GET', `flags/${id}/code-refs`);
  const { flag, project, can } = data;
  const reload = onThisPage(() => flagPage(flagId).catch(sayError));
  // Each state's form, then its variants (shown to a reader only where there are some), then, where it
  // has variants (so a rule), the playground beside its rule. A state in Unleash's model has no typed
  // variants (the API refuses both): its strategies take their place.
  const withVariants = (env: string | null, s: FlatState) => {
    if (s.unleash !== undefined) return [stateForm(data, env, s, reload), unleashSection(data, env, s, reload)];
    const variants = can.editFlags || s.variants !== undefined ? variantsForm(data, env, s, reload) : null;
    return [
      stateForm(data, env, s, reload),
      variants,
      variants !== null && s.variants !== undefined ? rulePlayground(data, env, variants) : null,
    ];
  };
  const states = flag.environments
    ? Object.entries(flag.environments).flatMap(([env, s]) => withVariants(env, s))
    : withVariants(null, flag as FlagView & FlatState);
  show(
    flag.name,
    crumbs([`#/projects/${project.id}`, project.name]),
    h('h1', {}, flag.name),
    h(
      'p',
      { class: 'muted' },
      `Id ${flag.id} · ${flag.kind === 'groupflag' ? 'group flag' : 'flag'} · updated ${formatTime(flag.updatedAt)}`,
    ),
    flag.description ? h('p', {}, flag.description) : null,
    flag.bucketing === 'fractional'
      ? h(
          'p',
          {},
          "Bucketing: fractional, flagd's fractional point, so flagd and OpenFeature in-process providers bucket users as Flagwire does. Fixed when the flag was made.",
        )
      : null,
    flagdNote(data),
    pendingRequests(pending),
    h('h2', {}, 'State'),
    ...states,
    scheduleSection(data, reload),
    rolloutSection(data, reload),
    codeRefsSection(codeRefs),
    can.editFlags ? flagSettings(data, reload) : null,
  );
}

/**
 * The form of the flag's state (flat), or of one environment's (`env`): sends only what was edited. A
 * state in Unleash's model does not read its percentage, cohorts or audience (the API refuses a change to
 * them), so they are shown read-only, with where the model says the same.
 */
export function stateForm(data: FlagPageView, env: string | null, state: FlatState, reload: () => Promise<void>): HTMLFormElement {
  const { flag, can } = data;
  const enabled = h('input', { type: 'checkbox', name: 'enabled', checked: state.enabled });
  // No min, max or step: the browser would refuse the form with its own words; PATCH's rule and text apply.
  const percentage = h('input', { type: 'text', name: 'trafficPercentage', value: state.trafficPercentage });
  const cohorts = listEditor(env === null ? 'Cohorts' : `Cohorts in ${env}`, env === null ? 'Cohort' : `${env} cohort`, state.cohorts);
  const audience = h(
    'select',
    { name: 'audienceId' },
    h('option', { value: '' }, 'Everyone (no audience)'),
    data.audiences.map((a) => h('option', { value: a.id, selected: a.id === state.audienceId }, a.name)),
  );
  const label = env === null ? 'State' : `Environment ${env}`;
  const inModel = state.unleash !== undefined;
  const unread = h(
    'p',
    { class: 'muted' },
    `Traffic percentage ${state.trafficPercentage}%, cohorts ${state.cohorts.join(', ') || 'none'}, audience ${
      data.audiences.find((a) => a.id === state.audienceId)?.name ?? state.audienceId ?? 'everyone'
    }: read-only, as Unleash's strategies below decide instead. Change a strategy's rollout, constraints or user ids there.`,
  );
  return h(
    'form',
    {
      onsubmit: onSubmit(async () => {
        // Only what the user edited: a value read back from the form could differ from the stored one
        // without being edited (and would overwrite a change made elsewhere since the page loaded).
        const raw = percentage.value.trim();
        const audienceId = audience.value === '' ? null : audience.value;
        const patch: Partial<Record<keyof FlatState, unknown>> = {};
        if (enabled.checked !== state.enabled) patch.enabled = enabled.checked;
        if (!inModel) {
          if (raw !== String(state.trafficPercentage)) patch.trafficPercentage = formNumber(raw);
          if (cohorts.changed()) patch.cohorts = cohorts.items();
          if (audienceId !== state.audienceId) patch.audienceId = audienceId;
        }
        if (Object.keys(patch).length === 0) {
          say(`Nothing changed: ${flag.name} already had these values.`);
          return;
        }
        if (!(await confirmProtected(data.project, env, `Save ${label.toLowerCase()} of ${flag.name}`))) return;
        const query = env === null ? '' : `?env=${encodeURIComponent(env)}`;
        const result = await changeFlag<{ changed: boolean }>(data, 'PATCH', `flags/${flag.id}${query}`, patch, reload);
        if (result === null) return;
        await reload();
        if (!result.changed) return say(`Nothing changed: ${flag.name} already had these values.`);
        // What the page showed before, for each field sent: Undo puts exactly those back.
        const previous = Object.fromEntries(Object.keys(patch).map((key) => [key, state[key as keyof FlatState]]));
        savedWithUndo(`Saved ${label.toLowerCase()} of ${flag.name}.`, flag, env, previous, reload);
      }),
    },
    h(
      'fieldset',
      { disabled: !can.editFlags },
      h('legend', {}, label),
      h(
        'div',
        { class: 'row' },
        field('Enabled', enabled),
        ...(inModel ? [unread] : [percentageField('Traffic percentage', percentage), cohorts.element, field('Audience', audience)]),
        can.editFlags ? h('button', { type: 'submit' }, env === null ? 'Save' : `Save ${env}`) : null,
      ),
    ),
  );
}

/** The flag's name, description, tags and flag-wide cohorts, each its own form, and its deletion. */
function flagSettings(data: FlagPageView, reload: () => Promise<void>): HTMLElement {
  const { flag } = data;
  // `before`: the form's body as the page read it, which Undo sends back.
  const edit = (legend: string, control: HTMLElement, path: string, body: () => Record<string, unknown>, before: Record<string, unknown>) =>
    h(
      'form',
      {
        onsubmit: onSubmit(async () => {
          if ((await changeFlag(data, 'POST', `flags/${flag.id}/${path}`, body(), reload)) === null) return;
          await reload();
          settingSavedWithUndo(legend, flag, path, before, reload);
        }),
      },
      h(
        'fieldset',
        {},
        h('legend', {}, legend),
        h('div', { class: 'row' }, control, h('button', { type: 'submit' }, `Save ${legend.toLowerCase()}`)),
      ),
    );
  const newName = h('input', { type: 'text', name: 'rename', value: flag.name });
  const newDescription = h('textarea', { name: 'describe' }, flag.description);
  const tags = listEditor('Tags', 'Tag', flag.tags);
  const flagWide =
    data.flagWideCohorts === null
      ? null
      : listEditor('Cohorts for every environment without its own', 'Flag-wide cohort', data.flagWideCohorts);
  const confirmBox = deleteConfirmation(data, reload);
  return h(
    'section',
    { 'aria-label': 'Flag settings' },
    h('h2', {}, 'Settings'),
    edit('Name', field('New name', newName), 'rename', () => ({ name: newName.value }), { name: flag.name }),
    edit('Description', field('Description text', newDescription), 'describe', () => ({ description: newDescription.value }), {
      description: flag.description,
    }),
    edit('Tags', tags.element, 'tags', () => ({ tags: tags.items() }), { tags: flag.tags }),
    flagWide !== null
      ? edit('Flag-wide cohorts', flagWide.element, 'cohorts', () => ({ cohorts: flagWide.items() }), { cohorts: data.flagWideCohorts })
      : null,
    h('h2', {}, 'Delete'),
    h(
      'button',
      {
        type: 'button',
        class: 'danger',
        onclick: () => {
          confirmBox.hidden = false;
        },
      },
      'Delete flag…',
    ),
    confirmBox,
  );
}

/** The deletion's confirmation, hidden until the delete button shows it. */
function deleteConfirmation(data: FlagPageView, reload: () => Promise<void>): HTMLElement {
  const { flag, project } = data;
  const confirmBox = h(
    'div',
    { class: 'warning', hidden: true },
    h('p', {}, `Delete flag ${flag.name}? Applications asking for it get 404 from now on. This cannot be undone.`),
    h(
      'button',
      {
        type: 'button',
        class: 'danger',
        onclick: () => {
          changeFlag(data, 'DELETE', `flags/${flag.id}`, undefined, reload).then((deleted) => {
            if (deleted === null) return;
            sayOnNextPage(`Flag ${flag.name} deleted.`);
            location.hash = `#/projects/${project.id}`;
          }, sayError);
        },
      },
      'Yes, delete',
    ),
    ' ',
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        onclick: () => {
          confirmBox.hidden = true;
        },
      },
      'Cancel',
    ),
  );
  return confirmBox;
}
