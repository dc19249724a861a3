// An organisation's SCIM provisioning (docs/scim.md), for its Owners: turn it on or off, make or rotate
// its secret (shown once), map groups to roles, and see what the identity provider provisioned.
import { askToConfirm } from './confirm-dialog.js';
import { api, dataTable, field, h, onSubmit, onThisPage, say, sayError } from './dom.js';
import { formatTime } from '../../words/time.js';
import { crumbs, emptyState, secretBox, show } from './shell.js';
import type { ScimView } from './views.js';

type Reload = (box?: HTMLElement | null) => Promise<void>;

export async function scimPage(orgId: string, created: HTMLElement | null = null): Promise<void> {
  const data = await api<ScimView>('GET', `orgs/${encodeURIComponent(orgId)}/scim`);
  const reload: Reload = onThisPage((box: HTMLElement | null = null) => scimPage(orgId, box).catch(sayError));
  show(
    `SCIM provisioning of ${data.orgName}`,
    crumbs([`#/orgs/${data.orgId}/members`, `Members of ${data.orgName}`]),
    h('h1', {}, `SCIM provisioning of ${data.orgName}`),
    created,
    settingsSection(data, reload),
    data.enabled ? groupRolesSection(data, reload) : null,
    provisionedSection(data),
  );
}

/** One part of the page: a region named by its heading, with a sentence saying what it is. */
function part(title: string, intro: string, ...content: (HTMLElement | null | (HTMLElement | null)[])[]): HTMLElement {
  return h('section', { 'aria-label': title }, h('h2', {}, title), h('p', {}, intro), ...content);
}

function scimSecretBox(secret: string): HTMLElement {
  return secretBox({
    label: 'New SCIM secret',
    heading: 'SCIM secret',
    advice:
      "Copy it now into your identity provider's provisioning settings (as the bearer token): it is shown only this once and cannot be shown again. A lost secret needs rotating.",
    id: 'scim-secret',
    secret,
  });
}

function settingsSection(data: ScimView, reload: Reload): HTMLElement {
  const makeSecret = async () => {
    const made = await api<{ secret: string; rotated: boolean }>('POST', `orgs/${data.orgId}/scim/secret`);
    await reload(scimSecretBox(made.secret));
    say(made.rotated ? 'SCIM secret rotated: the old one no longer works.' : 'SCIM is on.');
  };
  const button = (label: string, work: () => Promise<void>, className: string | null = null) =>
    h('button', { type: 'button', class: className, onclick: () => work().catch(sayError) }, label);
  if (!data.enabled)
    return part(
      'Settings',
      "SCIM is off. Turn it on to let your identity provider (Okta, Microsoft Entra ID, Keycloak) create, update and deprovision this organisation's members and groups; you get a secret for it, shown once.",
      button('Turn on SCIM', makeSecret),
    );
  const rotate = async () => {
    const go = await askToConfirm({
      title: 'Rotate the SCIM secret?',
      text: 'A new secret replaces the old one, which stops working at once: your identity provider is refused until you give it the new one.',
      confirm: 'Rotate',
    });
    if (go) await makeSecret();
  };
  const turnOff = async () => {
    const go = await askToConfirm({
      title: 'Turn off SCIM?',
      text: 'Its secret stops working at once. The members and groups it provisioned stay as they are, with their roles.',
      confirm: 'Turn off',
      danger: true,
    });
    if (!go) return;
    await api('DELETE', `orgs/${data.orgId}/scim`);
    await reload();
    say('SCIM is off: its secret no longer works.');
  };
  return part(
    'Settings',
    'SCIM is on.',
    h(
      'dl',
      {},
      h('dt', {}, 'Base URL'),
      h('dd', {}, h('code', {}, data.baseUrl)),
      h('dt', {}, 'Secret made'),
      h('dd', {}, formatTime(data.secretAt)),
    ),
    h('div', { class: 'row' }, button('Rotate secret', rotate, 'secondary'), ' ', button('Turn off SCIM', turnOff, 'danger')),
  );
}

const kRoles = ['viewer', 'editor', 'admin', 'owner'] as const;

function groupRolesSection(data: ScimView, reload: Reload): HTMLElement {
  const setRole = async (group: string, role: string | null) => {
    await api('POST', `orgs/${data.orgId}/scim/group-roles`, { group, role });
    await reload();
    say(role === null ? `Group ${group} gives no role now.` : `Members of group ${group} hold the ${role} role now.`);
  };
  const mappings = Object.entries(data.groupRoles);
  const group = h('input', { type: 'text', name: 'group', required: true });
  const role = h(
    'select',
    { name: 'role' },
    kRoles.map((r) => h('option', { value: r }, r)),
  );
  const form = h(
    'form',
    { onsubmit: onSubmit(() => setRole(group.value.trim(), role.value)) },
    h(
      'fieldset',
      {},
      h('legend', {}, 'Map a group to a role'),
      h('div', { class: 'row' }, field('Group name', group), field('Role', role), h('button', { type: 'submit' }, 'Map group')),
    ),
  );
  return part(
    'Group roles',
    'A provisioned member holds the highest role of their mapped groups (matched by name, without case), and Viewer when in none.',
    mappings.length === 0
      ? emptyState('No group is mapped to a role yet: every provisioned member is a Viewer.')
      : dataTable(
          'Mapped groups',
          ['Group', 'Role', ''],
          h(
            'tbody',
            {},
            mappings.map(([name, mapped]) =>
              h(
                'tr',
                {},
                h('td', {}, name),
                h('td', {}, mapped),
                h(
                  'td',
                  {},
                  h(
                    'button',
                    { type: 'button', class: 'secondary', onclick: () => setRole(name, null).catch(sayError) },
                    `Unmap group ${name}`,
                  ),
                ),
              ),
            ),
          ),
        ),
    form,
  );
}

/**
 * One list of what was provisioned, under its heading: its table of `rows` (each a row of cells' texts),
 * saying so when it shows fewer than the `count` there are; or a line saying there are none.
 */
function listing(data: ScimView, what: string, count: number, columns: readonly string[], rows: string[][]): HTMLElement[] {
  const heading = h('h3', {}, what);
  if (rows.length === 0) return [heading, emptyState(`No ${what.toLowerCase()} provisioned.`)];
  const table = dataTable(
    `Provisioned ${what.toLowerCase()}`,
    columns,
    h(
      'tbody',
      {},
      rows.map((cells) =>
        h(
          'tr',
          {},
          cells.map((cell) => h('td', {}, cell)),
        ),
      ),
    ),
  );
  if (count <= data.shown) return [heading, table];
  return [heading, h('p', { class: 'muted' }, `The ${data.shown} latest changed of ${count} ${what.toLowerCase()}.`), table];
}

const count = (n: number, thing: string) => `${n} ${thing}${n === 1 ? '' : 's'}`;

function provisionedSection(data: ScimView): HTMLElement {
  return part(
    'Provisioned',
    data.lastSync === null
      ? 'Nothing provisioned yet.'
      : `Last sync: ${formatTime(data.lastSync)} (the identity provider's latest change to a user or group). ${count(data.userCount, 'user')}, ${count(data.groupCount, 'group')}.`,
    listing(
      data,
      'People',
      data.userCount,
      ['User name', 'Display name', 'Status', 'Role', 'Last change'],
      data.users.map((u) => [
        u.userName,
        u.displayName ?? '',
        u.active ? 'active' : 'deactivated',
        u.role ?? '—',
        formatTime(u.lastModified),
      ]),
    ),
    listing(
      data,
      'Groups',
      data.groupCount,
      ['Group', 'Members', 'Role given', 'Last change'],
      data.groups.map((g) => [g.displayName, String(g.members), g.role ?? 'none', formatTime(g.lastModified)]),
    ),
  );
}
