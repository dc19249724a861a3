// A project's client keys (docs/api.md: Client keys): public keys for browsers and apps, listed without
// their secrets; a form to make one (its secret shown once, above the form, after the page reloads);
// Revoke confirmed in a dialog. Form and buttons are offered to those who may make and revoke keys.
import { askToConfirm } from './confirm-dialog.js';
import { api, dataTable, field, h, onSubmit, onThisPage, say, sayError } from './dom.js';
import { formatTime } from '../../words/time.js';
import { crumbs, emptyState, projectTabs, secretBox, show, toForm } from './shell.js';
import type { ClientKeysView, Project } from './views.js';

/** One key of the client keys page. */
type ClientKeyRow = ClientKeysView['clientKeys'][number];

/** What each use lets a key do, as the form offers it. */
const kUseText: Readonly<Record<ClientKeysView['uses'][number], string>> = {
  events: 'events (send exposures and outcomes)',
  frontend: "frontend (Unleash's front-end API)",
};

/** A new key's secret, shown once. */
function clientKeySecretBox(name: string, secret: string): HTMLElement {
  return secretBox({
    label: 'New client key secret',
    heading: `Secret of ${name}`,
    advice:
      'Copy it now: it is shown only this once and cannot be shown again. A client key is public: it may go in a browser bundle or an app, and can only do what its uses name. A lost secret needs a new key.',
    id: 'client-key-secret',
    secret,
  });
}

export async function clientKeysPage(projectId: string, created: HTMLElement | null = null): Promise<void> {
  const data = await api<ClientKeysView>('GET', `projects/${encodeURIComponent(projectId)}/client-keys`);
  const { project } = data;
  const reload = onThisPage((box: HTMLElement | null = null) => clientKeysPage(projectId, box).catch(sayError));
  const create = data.canManage ? createClientKeyForm(project, data.uses, reload) : null;
  const live = data.clientKeys.filter((k) => k.revokedAt === null).length;
  show(
    `Client keys of ${project.name}`,
    crumbs([`#/projects/${project.id}`, project.name]),
    h('h1', {}, `Client keys of ${project.name}`),
    projectTabs(project),
    h(
      'p',
      {},
      `Public keys for code that runs in browsers and apps: they never read rules nor change anything. ${live} of ${data.maxActive} keys not revoked.`,
    ),
    data.canManage
      ? null
      : h('p', { class: 'muted' }, 'Making and revoking client keys needs a role that may change flags (Editor, Admin, Owner).'),
    created,
    create,
    data.clientKeys.length > 0
      ? clientKeysTable(project, data.clientKeys, data.canManage, reload)
      : create === null
        ? emptyState('No client keys yet. An Editor, Admin or Owner can create one.')
        : emptyState(
            'No client keys yet. Create one with the New client key form for a browser or app that sends events or uses Unleash front-end SDKs.',
            toForm('Create a client key', create),
          ),
  );
}

/** The new-key form: a multi-environment project's key names one of its environments; a single one's none. */
function createClientKeyForm(project: Project, uses: ClientKeysView['uses'], reload: (box: HTMLElement) => Promise<void>): HTMLElement {
  const name = h('input', { type: 'text', name: 'name', required: true });
  const environment =
    project.kind === 'multi'
      ? h(
          'select',
          { name: 'environment' },
          project.environments.map((env) => h('option', { value: env }, env)),
        )
      : null;
  const useBoxes = uses.map((use) => h('input', { type: 'checkbox', name: 'uses', value: use, checked: true }));
  return h(
    'form',
    {
      onsubmit: onSubmit(async () => {
        const key = await api<{ name: string; secret: string }>('POST', `projects/${project.id}/client-keys`, {
          name: name.value,
          ...(environment === null ? {} : { environment: environment.value }),
          uses: useBoxes.filter((u) => u.checked).map((u) => u.value),
        });
        await reload(clientKeySecretBox(key.name, key.secret));
        say(`Client key ${key.name} created.`);
      }),
    },
    h(
      'fieldset',
      {},
      h('legend', {}, 'New client key'),
      h(
        'div',
        { class: 'row' },
        field('Key name', name),
        environment === null ? null : field('Environment', environment),
        h(
          'span',
          {},
          'Uses: ',
          useBoxes.map((u) => field(kUseText[u.value as keyof typeof kUseText], u)),
        ),
        h('button', { type: 'submit' }, 'Create client key'),
      ),
    ),
  );
}

/** Every key of the project, revoked ones too, with Revoke (confirmed in a dialog) on live keys for those who may. */
function clientKeysTable(
  project: Project,
  keys: readonly ClientKeyRow[],
  canManage: boolean,
  reload: (box?: HTMLElement | null) => Promise<void>,
): HTMLElement {
  // A single-environment project's keys have no environment: no column says so.
  const envs = project.kind === 'multi';
  const revoke = (key: ClientKeyRow) => async () => {
    const yes = await askToConfirm({
      title: `Revoke client key ${key.name}?`,
      text: 'Browsers and apps using it are refused from now on (401 Token revoked). This cannot be undone.',
      confirm: 'Revoke',
      danger: true,
    });
    if (!yes) return;
    await api('POST', `client-keys/${encodeURIComponent(key.id)}/revoke`, {});
    await reload(null);
    say(`Client key ${key.name} revoked.`);
  };
  return dataTable(
    `Client keys of ${project.name}`,
    ['Name', ...(envs ? ['Environment'] : []), 'Uses', 'Status', 'Created', 'Created by', 'Actions'],
    h(
      'tbody',
      {},
      keys.map((k) =>
        h(
          'tr',
          {},
          h('td', {}, k.name),
          envs ? h('td', {}, k.environment ?? '') : null,
          h('td', {}, k.uses.join(', ')),
          h(
            'td',
            {},
            k.revokedAt === null
              ? h('span', { class: 'pill active' }, 'active')
              : [h('span', { class: 'pill revoked' }, 'revoked'), h('div', { class: 'muted' }, formatTime(k.revokedAt))],
          ),
          h('td', {}, formatTime(k.createdAt)),
          h('td', { title: k.createdBy }, k.createdByName),
          h(
            'td',
            {},
            canManage && k.revokedAt === null
              ? h(
                  'button',
                  {
                    type: 'button',
                    class: 'danger',
                    'aria-label': `Revoke ${k.name}`,
                    onclick: () => void revoke(k)().catch(sayError),
                  },
                  'Revoke',
                )
              : null,
          ),
        ),
      ),
    ),
  );
}
