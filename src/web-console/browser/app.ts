// The web console's pages, one function each, chosen by the URL's hash (#/projects/ID, ...). Every
// page reads one /console/api endpoint and renders it; every change is one call, whose refusal (the
// writer's own text) is shown in the status line.
import { api, field, formatTime, h, listEditor, type ListEditor, onSubmit, say, sayError, setCsrfToken, whenSignedOut } from './dom.js';

interface User {
  id: string;
  name: string;
  email: string;
}
interface Project {
  id: string;
  name: string;
  kind: 'single' | 'multi';
  orgId: string | null;
  environments: string[];
}
interface Org {
  id: string;
  name: string;
  plan: string;
}
interface Audience {
  id: string;
  name: string;
  rules: { attribute: string; values: string[] }[];
}
interface Can {
  editFlags: boolean;
  createTokens: boolean;
  manageAllTokens: boolean;
  tokensReadOnly: boolean;
  configure: boolean;
}
interface Access {
  project: Project;
  org: Org | null;
  role: string;
  can: Can;
}
interface FlatState {
  enabled: boolean;
  trafficPercentage: number;
  cohorts: string[];
  audienceId: string | null;
}
interface FlagView extends Partial<FlatState> {
  id: string;
  name: string;
  kind: 'flag' | 'groupflag';
  description: string;
  tags: string[];
  updatedAt: number;
  environments?: Record<string, FlatState>;
}

const page = () => document.getElementById('page')!;

function show(title: string, ...content: (Node | null)[]): void {
  document.title = `${title} · Flagwire console`;
  page().replaceChildren(...content.filter((n): n is Node => n !== null));
}

function crumbs(...links: [string, string][]): HTMLElement {
  return h(
    'nav',
    { 'aria-label': 'Breadcrumbs', class: 'crumbs' },
    h('a', { href: '#/' }, 'Home'),
    links.flatMap(([href, text]) => [' / ', h('a', { href }, text)]),
  );
}

function projectTabs(project: Project): HTMLElement {
  return h(
    'nav',
    { 'aria-label': 'Project', class: 'tabs' },
    h('a', { href: `#/projects/${project.id}` }, 'Flags'),
    h('a', { href: `#/projects/${project.id}/tokens` }, 'Tokens'),
    h('a', { href: `#/projects/${project.id}/audit` }, 'Audit log'),
    h('a', { href: `#/projects/${project.id}/settings` }, 'Environments and audiences'),
  );
}

// ---- sign-in and the account bar -------------------------------------------------------------

function signInPage(): void {
  document.getElementById('account')!.replaceChildren();
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  show(
    'Sign in',
    h('h1', {}, 'Sign in'),
    h(
      'form',
      {
        class: 'signin',
        onsubmit: onSubmit(async () => {
          const signed = await api<{ user: User; csrfToken: string }>('POST', 'sign-in', { email: email.value, password: password.value });
          setCsrfToken(signed.csrfToken);
          accountBar(signed.user);
          say(`Signed in as ${signed.user.name}.`);
          if (location.hash === '' || location.hash === '#/') void route();
          else location.hash = '#/';
        }),
      },
      field('Email', email),
      field('Password', password),
      h('p', {}, h('button', { type: 'submit' }, 'Sign in')),
    ),
  );
}

function accountBar(user: User): void {
  document.getElementById('account')!.replaceChildren(
    h('span', {}, `${user.name} (${user.email})`),
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        onclick: () => {
          api('POST', 'sign-out').then(() => {
            say('Signed out.');
            signInPage();
          }, sayError);
        },
      },
      'Sign out',
    ),
  );
}

// ---- home: organisations and projects -----------------------------------------------------------

interface InvitationView {
  id: string;
  role: string;
  expiresAt: number;
  orgName: string;
  invitedByName: string;
}

/** An invitation addressed to the signed-in user, with its two answers. */
function invitationItem(invitation: InvitationView): HTMLElement {
  const answer = (verb: 'accept' | 'decline', done: string) =>
    h(
      'button',
      {
        type: 'button',
        class: verb === 'accept' ? '' : 'secondary',
        'aria-label': `${verb === 'accept' ? 'Accept' : 'Decline'} the invitation to ${invitation.orgName}`,
        onclick: () => {
          api('POST', `invitations/${encodeURIComponent(invitation.id)}/${verb}`).then(async () => {
            await homePage();
            say(done);
          }, sayError);
        },
      },
      verb === 'accept' ? 'Accept' : 'Decline',
    );
  return h(
    'li',
    {},
    `${invitation.invitedByName} invited you to ${invitation.orgName} as ${invitation.role} (until ${formatTime(invitation.expiresAt)}) `,
    answer('accept', `You are now ${invitation.role} of ${invitation.orgName}.`),
    ' ',
    answer('decline', `You declined the invitation to ${invitation.orgName}.`),
  );
}

async function homePage(): Promise<void> {
  const home = await api<{ orgs: (Org & { role: string; projects: Project[] })[]; personal: Project[]; invitations: InvitationView[] }>(
    'GET',
    'home',
  );
  const projectList = (projects: Project[]) =>
    projects.length === 0
      ? h('p', { class: 'muted' }, 'No projects yet.')
      : h(
          'ul',
          {},
          projects.map((p) =>
            h(
              'li',
              {},
              h('a', { href: `#/projects/${p.id}` }, p.name),
              ' ',
              h(
                'span',
                { class: 'muted' },
                p.kind === 'multi' ? `(environments: ${p.environments.join(', ') || 'none yet'})` : '(single environment)',
              ),
            ),
          ),
        );
  show(
    'Organisations and projects',
    h('h1', {}, 'Organisations and projects'),
    home.invitations.length > 0
      ? h('section', { 'aria-label': 'Invitations' }, h('h2', {}, 'Invitations'), h('ul', {}, home.invitations.map(invitationItem)))
      : null,
    home.orgs.length === 0 ? h('p', {}, 'You are not a member of any organisation.') : null,
    ...home.orgs.map((org) =>
      h(
        'section',
        { 'aria-label': org.name },
        h('h2', {}, org.name),
        h(
          'p',
          { class: 'muted' },
          `Plan: ${org.plan} · your role: ${org.role} · `,
          h('a', { href: `#/orgs/${org.id}/members` }, 'Members and roles'),
        ),
        projectList(org.projects),
      ),
    ),
    home.personal.length > 0
      ? h('section', { 'aria-label': 'Personal projects' }, h('h2', {}, 'Personal projects'), projectList(home.personal))
      : null,
    h('p', {}, h('a', { href: '#/mail' }, 'Your mail')),
  );
}

// ---- a project's flags ----------------------------------------------------------------------------

function stateText(state: FlatState): string {
  return `${state.enabled ? 'on' : 'off'} · ${state.trafficPercentage}%${state.cohorts.length > 0 ? ` · cohorts ${state.cohorts.join(', ')}` : ''}${state.audienceId ? ' · audience' : ''}`;
}

async function projectPage(projectId: string): Promise<void> {
  const data = await api<Access & { flags: FlagView[] }>('GET', `projects/${encodeURIComponent(projectId)}`);
  const { project, can } = data;
  const search = h('input', { type: 'search', name: 'search' });
  const tags = [...new Set(data.flags.flatMap((f) => f.tags))].sort();
  const tag = h(
    'select',
    { name: 'tag' },
    h('option', { value: '' }, 'Any tag'),
    tags.map((t) => h('option', { value: t }, t)),
  );
  const body = h('tbody');
  const render = () => {
    const q = search.value.trim().toLowerCase();
    const rows = data.flags.filter(
      (f) =>
        (q === '' || f.name.toLowerCase().includes(q) || f.description.toLowerCase().includes(q)) &&
        (tag.value === '' || f.tags.includes(tag.value)),
    );
    body.replaceChildren(
      ...rows.map((f) =>
        h(
          'tr',
          {},
          h('td', {}, h('a', { href: `#/flags/${f.id}` }, f.name), f.description ? h('div', { class: 'muted' }, f.description) : null),
          h(
            'td',
            {},
            f.environments
              ? Object.entries(f.environments).map(([env, s]) =>
                  h('div', {}, h('strong', {}, `${env}: `), h('span', { class: `pill ${s.enabled ? 'on' : 'off'}` }, stateText(s))),
                )
              : h('span', { class: `pill ${f.enabled ? 'on' : 'off'}` }, stateText(f as FlatState)),
          ),
          h('td', {}, f.tags.join(', ')),
        ),
      ),
    );
    if (rows.length === 0) body.append(h('tr', {}, h('td', { colspan: 3 }, 'No flag matches.')));
  };
  search.addEventListener('input', render);
  tag.addEventListener('change', render);
  render();
  const name = h('input', { type: 'text', name: 'name', required: true });
  const description = h('input', { type: 'text', name: 'description' });
  const newTags = listEditor('Tags', 'New flag tag', []);
  const create = can.editFlags
    ? h(
        'form',
        {
          onsubmit: onSubmit(async () => {
            const created = await api<FlagView>('POST', `projects/${project.id}/flags`, {
              name: name.value,
              description: description.value,
              tags: newTags.items(),
            });
            say(`Flag ${created.name} created (off).`);
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
            h('button', { type: 'submit' }, 'Create flag'),
          ),
        ),
      )
    : null;
  show(
    project.name,
    crumbs(),
    h('h1', {}, project.name),
    projectTabs(project),
    h('p', { class: 'muted' }, `Your role: ${data.role}${can.editFlags ? '' : ' (read-only)'}`),
    create,
    h('div', { class: 'row' }, field('Search flags', search), field('Tag', tag)),
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Flag'), h('th', { scope: 'col' }, 'State'), h('th', { scope: 'col' }, 'Tags'))),
      body,
    ),
  );
}

// ---- one flag -------------------------------------------------------------------------------------

async function flagPage(flagId: string): Promise<void> {
  const data = await api<Access & { flag: FlagView; flagWideCohorts: string[] | null; audiences: Audience[] }>(
    'GET',
    `flags/${encodeURIComponent(flagId)}`,
  );
  const { flag, project, can } = data;
  const reload = () => flagPage(flagId).catch(sayError);
  const stateForm = (env: string | null, state: FlatState) => {
    const enabled = h('input', { type: 'checkbox', name: 'enabled', checked: state.enabled });
    // No min, max or step: the browser would refuse the form with its own words; PATCH's rule and text apply.
    const percentage = h('input', { type: 'number', name: 'trafficPercentage', step: 'any', value: state.trafficPercentage });
    const cohorts = listEditor(env === null ? 'Cohorts' : `Cohorts in ${env}`, env === null ? 'Cohort' : `${env} cohort`, state.cohorts);
    const audience = h(
      'select',
      { name: 'audienceId' },
      h('option', { value: '' }, 'Everyone (no audience)'),
      data.audiences.map((a) => h('option', { value: a.id, selected: a.id === state.audienceId }, a.name)),
    );
    const label = env === null ? 'State' : `Environment ${env}`;
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
          if (raw !== String(state.trafficPercentage))
            patch.trafficPercentage = raw !== '' && !Number.isNaN(Number(raw)) ? Number(raw) : raw;
          if (cohorts.changed()) patch.cohorts = cohorts.items();
          if (audienceId !== state.audienceId) patch.audienceId = audienceId;
          if (Object.keys(patch).length === 0) {
            say(`Nothing changed: ${flag.name} already had these values.`);
            return;
          }
          const query = env === null ? '' : `?env=${encodeURIComponent(env)}`;
          const result = await api<{ changed: boolean }>('PATCH', `flags/${flag.id}${query}`, patch);
          await reload();
          say(result.changed ? `Saved ${label.toLowerCase()} of ${flag.name}.` : `Nothing changed: ${flag.name} already had these values.`);
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
          field('Traffic percentage', percentage),
          cohorts.element,
          field('Audience', audience),
          can.editFlags ? h('button', { type: 'submit' }, env === null ? 'Save' : `Save ${env}`) : null,
        ),
      ),
    );
  };
  const states = flag.environments
    ? Object.entries(flag.environments).map(([env, s]) => stateForm(env, s))
    : [stateForm(null, flag as FlagView & FlatState)];
  const edit = (legend: string, control: HTMLElement, path: string, body: () => unknown) =>
    h(
      'form',
      {
        onsubmit: onSubmit(async () => {
          await api('POST', `flags/${flag.id}/${path}`, body());
          await reload();
          say(`${legend} saved.`);
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
          api('DELETE', `flags/${flag.id}`).then(() => {
            say(`Flag ${flag.name} deleted.`);
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
    h('h2', {}, 'State'),
    ...states,
    can.editFlags
      ? h(
          'section',
          { 'aria-label': 'Flag settings' },
          h('h2', {}, 'Settings'),
          edit('Name', field('New name', newName), 'rename', () => ({ name: newName.value })),
          edit('Description', field('Description text', newDescription), 'describe', () => ({ description: newDescription.value })),
          edit('Tags', tags.element, 'tags', () => ({ tags: tags.items() })),
          flagWide !== null ? edit('Flag-wide cohorts', flagWide.element, 'cohorts', () => ({ cohorts: flagWide.items() })) : null,
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
        )
      : null,
  );
}

// ---- tokens -------------------------------------------------------------------------------------

interface TokenRow {
  id: string;
  name: string;
  permission: string;
  environments: string[];
  expiresAt: number;
  createdAt: number;
  revokedAt: number | null;
  status: string;
  createdByName: string;
  manageable: boolean;
}

function secretBox(name: string, secret: string): HTMLElement {
  return h(
    'section',
    { class: 'warning', 'aria-label': 'New token secret' },
    h('h2', {}, `Secret of ${name}`),
    h(
      'p',
      {},
      'Copy it now: it is shown only this once and cannot be shown again. Keep it in server-side code or a secret store, never in a browser bundle or a URL. A lost secret needs a new token.',
    ),
    h('p', { class: 'secret', id: 'token-secret' }, secret),
    h(
      'button',
      {
        type: 'button',
        onclick: () => {
          navigator.clipboard.writeText(secret).then(
            () => say('Secret copied to the clipboard.'),
            () => say('Could not copy: select the secret and copy it by hand.', 'error'),
          );
        },
      },
      'Copy secret',
    ),
  );
}

async function tokensPage(projectId: string, created: HTMLElement | null = null): Promise<void> {
  const data = await api<Access & { tokens: TokenRow[]; slotsUsed: number; slots: number }>(
    'GET',
    `projects/${encodeURIComponent(projectId)}/tokens`,
  );
  const { project, can } = data;
  const reload = (box: HTMLElement | null = null) => tokensPage(projectId, box).catch(sayError);
  const act = (token: TokenRow, verb: 'rotate' | 'revoke') => () => {
    api<{ name?: string; secret?: string }>('POST', `tokens/${token.id}/${verb}`).then(async (result) => {
      await reload(verb === 'rotate' ? secretBox(token.name, result.secret!) : null);
      say(verb === 'rotate' ? `Token ${token.name} rotated: the old secret no longer works.` : `Token ${token.name} revoked.`);
    }, sayError);
  };
  const name = h('input', { type: 'text', name: 'name', required: true });
  const permission = h('select', { name: 'permission' }, h('option', { value: 'read' }, 'read'), h('option', { value: 'write' }, 'write'));
  const expires = h(
    'select',
    { name: 'expires' },
    ['never', '30d', '90d', '365d'].map((e) => h('option', { value: e }, e === 'never' ? 'Never' : `${e.slice(0, -1)} days`)),
  );
  const envs = project.environments.map((env) => h('input', { type: 'checkbox', name: 'env', value: env }));
  const createForm = can.createTokens
    ? h(
        'form',
        {
          onsubmit: onSubmit(async () => {
            const token = await api<{ name: string; secret: string }>('POST', `projects/${project.id}/tokens`, {
              name: name.value,
              permission: permission.value,
              expires: expires.value,
              environments: envs.filter((e) => e.checked).map((e) => e.value),
            });
            await reload(secretBox(token.name, token.secret));
            say(`Token ${token.name} created.`);
          }),
        },
        h(
          'fieldset',
          {},
          h('legend', {}, 'New token'),
          h(
            'div',
            { class: 'row' },
            field('Token name', name),
            field('Permission', permission),
            field('Expires', expires),
            envs.length > 0
              ? h(
                  'span',
                  {},
                  'Limit to environments (none checked: all): ',
                  envs.map((e) => field(e.value, e)),
                )
              : null,
            h('button', { type: 'submit' }, 'Create token'),
          ),
        ),
      )
    : null;
  show(
    `Tokens of ${project.name}`,
    crumbs([`#/projects/${project.id}`, project.name]),
    h('h1', {}, `Tokens of ${project.name}`),
    projectTabs(project),
    h('p', {}, `${data.slotsUsed} of ${data.slots} token slots used (expired tokens that were not revoked count).`),
    can.tokensReadOnly
      ? h(
          'p',
          { class: 'warning' },
          project.orgId === null
            ? 'A personal project cannot have tokens.'
            : 'This organisation is not on Teams or Enterprise (or its subscription lapsed): its tokens are shown read-only.',
        )
      : null,
    created,
    createForm,
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Name', 'Permission', 'Environments', 'Status', 'Created by', 'Expires', 'Actions'].map((c) => h('th', { scope: 'col' }, c)),
        ),
      ),
      h(
        'tbody',
        {},
        data.tokens.map((t) =>
          h(
            'tr',
            {},
            h('td', {}, t.name),
            h('td', {}, t.permission),
            h('td', {}, t.environments.join(', ') || 'all'),
            h('td', {}, h('span', { class: `pill ${t.status}` }, t.status)),
            h('td', {}, t.createdByName),
            h('td', {}, t.expiresAt === 0 ? 'never' : formatTime(t.expiresAt)),
            h(
              'td',
              {},
              h('a', { href: `#/tokens/${t.id}`, 'aria-label': `Activity of ${t.name}` }, 'Activity'),
              t.manageable
                ? [
                    ' ',
                    h(
                      'button',
                      { type: 'button', class: 'secondary', 'aria-label': `Rotate ${t.name}`, onclick: act(t, 'rotate') },
                      'Rotate',
                    ),
                    ' ',
                    h('button', { type: 'button', class: 'danger', 'aria-label': `Revoke ${t.name}`, onclick: act(t, 'revoke') }, 'Revoke'),
                  ]
                : null,
            ),
          ),
        ),
      ),
    ),
  );
}

async function activityPage(tokenId: string): Promise<void> {
  const data = await api<{
    project: Project;
    token: TokenRow;
    lastUsedAt: number | null;
    recent: { at: number; method: string; path: string; status: number }[];
    denials: { at: number; reason: string; method: string; path: string }[];
  }>('GET', `tokens/${encodeURIComponent(tokenId)}/activity`);
  const table = (head: string[], rows: (string | number)[][]) =>
    rows.length === 0
      ? h('p', { class: 'muted' }, 'None.')
      : h(
          'table',
          {},
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              head.map((c) => h('th', { scope: 'col' }, c)),
            ),
          ),
          h(
            'tbody',
            {},
            rows.map((r) =>
              h(
                'tr',
                {},
                r.map((c) => h('td', {}, c)),
              ),
            ),
          ),
        );
  show(
    `Activity of ${data.token.name}`,
    crumbs([`#/projects/${data.project.id}`, data.project.name], [`#/projects/${data.project.id}/tokens`, 'Tokens']),
    h('h1', {}, `Activity of token ${data.token.name}`),
    h('p', {}, `Status: ${data.token.status} · last use: ${formatTime(data.lastUsedAt)}`),
    h('h2', {}, 'Recent requests'),
    table(
      ['At', 'Method', 'Path', 'Status'],
      data.recent.map((r) => [formatTime(r.at), r.method, r.path, r.status]),
    ),
    h('h2', {}, 'Recent denials'),
    table(
      ['At', 'Method', 'Path', 'Reason'],
      data.denials.map((d) => [formatTime(d.at), d.method, d.path, d.reason]),
    ),
  );
}

// ---- audit log ------------------------------------------------------------------------------------

interface AuditEntry {
  seq: number;
  at: number;
  actor: string;
  actorName: string;
  action: string;
  flagId: string | null;
  env: string | null;
  changes: Record<string, { before: unknown; after: unknown }>;
}

async function auditPage(projectId: string, params: URLSearchParams): Promise<void> {
  const data = await api<{ project: Project; entries: AuditEntry[]; nextBefore: number | null; flags: { id: string; name: string }[] }>(
    'GET',
    `projects/${encodeURIComponent(projectId)}/audit?${params}`,
  );
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
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['At', 'Actor', 'Action', 'Flag', 'Environment', 'Changes'].map((c) => h('th', { scope: 'col' }, c)),
        ),
      ),
      h(
        'tbody',
        {},
        data.entries.length === 0
          ? h('tr', {}, h('td', { colspan: 6 }, 'No entries.'))
          : data.entries.map((e) =>
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

// ---- environments and audiences ---------------------------------------------------------------------

/**
 * An audience's rules: per rule its attribute and its values, each value in a box of its own (a value
 * may hold commas and blanks). A removed rule is dropped from what is saved; the others keep their numbers.
 */
function rulesEditor(initial: Audience['rules']): { element: HTMLElement; rules(): Audience['rules'] } {
  const rules: { attribute: HTMLInputElement; values: ListEditor; removed: boolean }[] = [];
  const list = h('div', {});
  const addRule = (rule: Audience['rules'][number]) => {
    const n = rules.length + 1;
    const entry = {
      attribute: h('input', { type: 'text', value: rule.attribute }),
      values: listEditor(`Values of rule ${n}`, `Rule ${n} value`, rule.values),
      removed: false,
    };
    rules.push(entry);
    const box: HTMLElement = h(
      'div',
      { class: 'rule', role: 'group', 'aria-label': `Rule ${n}` },
      field(`Rule ${n} attribute`, entry.attribute),
      entry.values.element,
      ' ',
      h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          onclick: () => {
            entry.removed = true;
            box.remove();
          },
        },
        `Remove rule ${n}`,
      ),
    );
    list.append(box);
    return entry;
  };
  for (const rule of initial) addRule(rule);
  const add = h(
    'button',
    { type: 'button', class: 'secondary', onclick: () => addRule({ attribute: '', values: [] }).attribute.focus() },
    'Add rule',
  );
  return {
    element: h(
      'div',
      {},
      h('p', { class: 'muted' }, "Every rule must match: the request's attribute equals one of the rule's values."),
      list,
      add,
    ),
    rules: () => rules.filter((r) => !r.removed).map((r) => ({ attribute: r.attribute.value, values: r.values.items() })),
  };
}

async function settingsPage(projectId: string): Promise<void> {
  const data = await api<Access & { audiences: Audience[] }>('GET', `projects/${encodeURIComponent(projectId)}`);
  const { project, can } = data;
  const reload = () => settingsPage(projectId).catch(sayError);
  const newEnv = h('input', { type: 'text', name: 'environment' });
  const from = h(
    'select',
    { name: 'from' },
    project.environments.map((e) => h('option', { value: e }, e)),
  );
  const to = h('input', { type: 'text', name: 'to' });
  const envSection =
    project.kind === 'multi'
      ? h(
          'section',
          { 'aria-label': 'Environments' },
          h('h2', {}, 'Environments'),
          h('p', {}, project.environments.join(', ') || 'None yet.'),
          can.configure
            ? [
                h(
                  'form',
                  {
                    onsubmit: onSubmit(async () => {
                      await api('POST', `projects/${project.id}/environments`, { name: newEnv.value });
                      await reload();
                      say(`Environment ${newEnv.value} added.`);
                    }),
                  },
                  h('div', { class: 'row' }, field('New environment', newEnv), h('button', { type: 'submit' }, 'Add environment')),
                ),
                project.environments.length > 0
                  ? h(
                      'form',
                      {
                        onsubmit: onSubmit(async () => {
                          await api('POST', `projects/${project.id}/environments/rename`, { from: from.value, to: to.value });
                          await reload();
                          say(`Environment ${from.value} renamed to ${to.value}.`);
                        }),
                      },
                      h(
                        'p',
                        { class: 'warning' },
                        'Tokens limited to the old name are not updated: their requests for that environment are refused until they are replaced.',
                      ),
                      h(
                        'div',
                        { class: 'row' },
                        field('Environment', from),
                        field('New name', to),
                        h('button', { type: 'submit' }, 'Rename environment'),
                      ),
                    )
                  : null,
              ]
            : null,
        )
      : h('p', { class: 'muted' }, 'A single-environment project has no environments.');
  const audienceForm = (audience: Audience | null) => {
    const name = h('input', { type: 'text', name: 'name', value: audience?.name ?? '' });
    const rules = rulesEditor(audience?.rules ?? []);
    return h(
      'form',
      {
        onsubmit: onSubmit(async () => {
          const body = { name: name.value, rules: rules.rules() };
          await api('POST', audience === null ? `projects/${project.id}/audiences` : `audiences/${audience.id}`, body);
          await reload();
          say(audience === null ? `Audience ${name.value} created.` : `Audience ${name.value} saved.`);
        }),
      },
      h(
        'fieldset',
        { disabled: !can.configure },
        h('legend', {}, audience === null ? 'New audience' : `Audience ${audience.name}`),
        field('Audience name', name),
        rules.element,
        can.configure ? h('button', { type: 'submit' }, audience === null ? 'Create audience' : 'Save audience') : null,
      ),
    );
  };
  show(
    `Settings of ${project.name}`,
    crumbs([`#/projects/${project.id}`, project.name]),
    h('h1', {}, `Environments and audiences of ${project.name}`),
    projectTabs(project),
    envSection,
    h('h2', {}, 'Audiences'),
    ...data.audiences.map((a) => audienceForm(a)),
    can.configure ? audienceForm(null) : null,
  );
}

// ---- members and mail ---------------------------------------------------------------------------

async function membersPage(orgId: string): Promise<void> {
  const data = await api<{
    org: Org;
    role: string;
    canManage: boolean;
    members: { userId: string; role: string; user: User | null }[];
    invitations: { id: string; email: string; role: string; expiresAt: number }[];
  }>('GET', `orgs/${encodeURIComponent(orgId)}/members`);
  const roles = () => ['viewer', 'editor', 'admin', 'owner'].map((r) => h('option', { value: r }, r));
  const user = h('input', { type: 'text', name: 'userId' });
  const role = h('select', { name: 'role' }, roles());
  const email = h('input', { type: 'email', name: 'email', required: true });
  const invitedRole = h('select', { name: 'invitedRole' }, roles());
  show(
    `Members of ${data.org.name}`,
    crumbs(),
    h('h1', {}, `Members of ${data.org.name}`),
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Name', 'Email', 'User id', 'Role'].map((c) => h('th', { scope: 'col' }, c)),
        ),
      ),
      h(
        'tbody',
        {},
        data.members.map((m) =>
          h(
            'tr',
            {},
            h('td', {}, m.user?.name ?? ''),
            h('td', {}, m.user?.email ?? ''),
            h('td', {}, h('code', {}, m.userId)),
            h('td', {}, m.role),
          ),
        ),
      ),
    ),
    data.canManage
      ? h(
          'form',
          {
            onsubmit: onSubmit(async () => {
              await api('POST', `orgs/${data.org.id}/members`, { userId: user.value.trim(), role: role.value });
              await membersPage(orgId);
              say(`User ${user.value.trim()} is now ${role.value}.`);
            }),
          },
          h(
            'fieldset',
            {},
            h('legend', {}, "Change a member's role"),
            h('div', { class: 'row' }, field('User id', user), field('Role', role), h('button', { type: 'submit' }, 'Set role')),
          ),
        )
      : null,
    data.canManage ? h('h2', {}, 'Invitations') : null,
    data.canManage && data.invitations.length > 0
      ? h(
          'table',
          {},
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['Email', 'Invited as', 'Until'].map((c) => h('th', { scope: 'col' }, c)),
            ),
          ),
          h(
            'tbody',
            {},
            data.invitations.map((i) => h('tr', {}, h('td', {}, i.email), h('td', {}, i.role), h('td', {}, formatTime(i.expiresAt)))),
          ),
        )
      : null,
    // A person joins by accepting, signed in with the invited address: no one is made a member by another's say.
    data.canManage
      ? h(
          'form',
          {
            onsubmit: onSubmit(async () => {
              await api('POST', `orgs/${data.org.id}/invitations`, { email: email.value.trim(), role: invitedRole.value });
              await membersPage(orgId);
              say(`${email.value.trim()} is invited as ${invitedRole.value}; they become a member when they accept.`);
            }),
          },
          h(
            'fieldset',
            {},
            h('legend', {}, 'Invite someone'),
            h(
              'div',
              { class: 'row' },
              field('E-mail address to invite', email),
              field('Invite as', invitedRole),
              h('button', { type: 'submit' }, 'Invite'),
            ),
          ),
        )
      : null,
  );
}

async function mailPage(): Promise<void> {
  const data = await api<{
    messages: {
      seq: number;
      at: number;
      to: string;
      orgName: string | null;
      subject: string;
      text: string;
      sentAt: number | null;
      failedAt: number | null;
    }[];
  }>('GET', 'mail');
  show(
    'Your mail',
    crumbs(),
    h('h1', {}, 'Your mail'),
    h('p', { class: 'muted' }, 'Messages to you about the organisations you belong to.'),
    data.messages.length === 0 ? h('p', {}, 'No messages.') : null,
    ...data.messages.map((m) =>
      h(
        'article',
        { 'aria-label': m.subject },
        h('h2', {}, m.subject),
        h(
          'p',
          { class: 'muted' },
          `To ${m.to} · about ${m.orgName ?? 'an organisation'} · ${formatTime(m.at)} · ${m.sentAt !== null ? 'sent' : m.failedAt !== null ? 'given up' : 'recorded, not sent'}`,
        ),
        h('pre', {}, m.text),
      ),
    ),
  );
}

// ---- routing ----------------------------------------------------------------------------------------

async function route(): Promise<void> {
  const [path, query] = location.hash.replace(/^#/, '').split('?') as [string, string | undefined];
  const parts = path
    .split('/')
    .filter((p) => p !== '')
    .map(decodeURIComponent);
  const params = new URLSearchParams(query ?? '');
  try {
    if (parts.length === 0) await homePage();
    else if (parts[0] === 'projects' && parts.length === 2) await projectPage(parts[1]!);
    else if (parts[0] === 'projects' && parts[2] === 'tokens') await tokensPage(parts[1]!);
    else if (parts[0] === 'projects' && parts[2] === 'audit') await auditPage(parts[1]!, params);
    else if (parts[0] === 'projects' && parts[2] === 'settings') await settingsPage(parts[1]!);
    else if (parts[0] === 'flags') await flagPage(parts[1]!);
    else if (parts[0] === 'tokens') await activityPage(parts[1]!);
    else if (parts[0] === 'orgs' && parts[2] === 'members') await membersPage(parts[1]!);
    else if (parts[0] === 'mail') await mailPage();
    else show('Not found', h('h1', {}, 'Not found'), h('p', {}, h('a', { href: '#/' }, 'Back to your projects')));
  } catch (err) {
    sayError(err);
  }
}

async function boot(): Promise<void> {
  whenSignedOut(signInPage);
  try {
    const session = await api<{ user: User; csrfToken: string }>('GET', 'session');
    setCsrfToken(session.csrfToken);
    accountBar(session.user);
  } catch {
    signInPage();
    return;
  }
  await route();
}

// A page that is not signed in answers every route with the sign-in form (api() calls whenSignedOut).
window.addEventListener('hashchange', () => void route());
void boot();
