// An organisation's members and invitations.
import { api, dataTable, field, h, onSubmit, onThisPage, say } from './dom.js';
import { formatTime } from '../../words/time.js';
import { crumbs, emptyState, show, toForm } from './shell.js';
import type { MembersView } from './views.js';

export async function membersPage(orgId: string): Promise<void> {
  const data = await api<MembersView>('GET', `orgs/${encodeURIComponent(orgId)}/members`);
  // A person joins by accepting, signed in with the invited address: no one is made a member by another's say.
  const invite = data.canManage ? inviteForm(data, orgId) : null;
  show(
    `Members of ${data.org.name}`,
    crumbs(),
    h('h1', {}, `Members of ${data.org.name}`),
    membersTable(data),
    data.canManage ? roleForm(data, orgId) : null,
    invite === null
      ? null
      : [
          h('h2', {}, 'Invitations'),
          data.invitations.length > 0
            ? invitationsTable(data)
            : emptyState(
                'No pending invitations. Invite someone by e-mail address with the form below: they become a member when they accept.',
                toForm('Invite someone', invite),
              ),
          invite,
        ],
  );
}

const roles = () => ['viewer', 'editor', 'admin', 'owner'].map((r) => h('option', { value: r }, r));

function membersTable(data: MembersView): HTMLElement {
  return dataTable(
    `Members of ${data.org.name}`,
    ['Name', 'Email', 'User id', 'Role'],
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
  );
}

function roleForm(data: MembersView, orgId: string): HTMLElement {
  const reload = onThisPage(membersPage);
  const user = h('input', { type: 'text', name: 'userId' });
  const role = h('select', { name: 'role' }, roles());
  return h(
    'form',
    {
      onsubmit: onSubmit(async () => {
        await api('POST', `orgs/${data.org.id}/members`, { userId: user.value.trim(), role: role.value });
        await reload(orgId);
        say(`User ${user.value.trim()} is now ${role.value}.`);
      }),
    },
    h(
      'fieldset',
      {},
      h('legend', {}, "Change a member's role"),
      h('div', { class: 'row' }, field('User id', user), field('Role', role), h('button', { type: 'submit' }, 'Set role')),
    ),
  );
}

function invitationsTable(data: MembersView): HTMLElement {
  return dataTable(
    'Pending invitations',
    ['Email', 'Invited as', 'Until'],
    h(
      'tbody',
      {},
      data.invitations.map((i) => h('tr', {}, h('td', {}, i.email), h('td', {}, i.role), h('td', {}, formatTime(i.expiresAt)))),
    ),
  );
}

function inviteForm(data: MembersView, orgId: string): HTMLElement {
  const reload = onThisPage(membersPage);
  const email = h('input', { type: 'email', name: 'email', required: true });
  const invitedRole = h('select', { name: 'invitedRole' }, roles());
  return h(
    'form',
    {
      onsubmit: onSubmit(async () => {
        await api('POST', `orgs/${data.org.id}/invitations`, { email: email.value.trim(), role: invitedRole.value });
        await reload(orgId);
        say(`${email.value.trim()} is invited as ${invitedRole.value} and sent an e-mail; they become a member when they accept.`);
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
  );
}
