// The home page: organisations, projects and invitations.
import { api, h, onThisPage, say, sayError } from './dom.js';
import { formatTime } from '../../words/time.js';
import { orgForm, projectForm } from './create-forms.js';
import { emptyState, show, toForm } from './shell.js';
import type { HomeView, Project } from './views.js';

/** An invitation addressed to the signed-in user. */
export type InvitationView = HomeView['invitations'][number];

/** An invitation addressed to the signed-in user, with its two answers. */
export function invitationItem(invitation: InvitationView): HTMLElement {
  const reload = onThisPage(homePage);
  const answer = (verb: 'accept' | 'decline', done: string) =>
    h(
      'button',
      {
        type: 'button',
        class: verb === 'accept' ? '' : 'secondary',
        'aria-label': `${verb === 'accept' ? 'Accept' : 'Decline'} the invitation to ${invitation.orgName}`,
        onclick: () => {
          api('POST', `invitations/${encodeURIComponent(invitation.id)}/${verb}`).then(async () => {
            await reload();
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

export async function homePage(): Promise<void> {
  const home = await api<HomeView>('GET', 'home');
  const projectList = (projects: Project[], create: HTMLElement | null) =>
    projects.length === 0
      ? create === null
        ? emptyState('No projects here yet: an Admin or Owner of the organisation creates them.')
        : emptyState('No projects here yet.', toForm('Create a project', create))
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
    home.orgs.length === 0
      ? emptyState(
          'You are not a member of any organisation yet. Ask an Admin or Owner of one to invite your e-mail address: the invitation appears on this page.',
        )
      : null,
    ...home.orgs.map((org) => {
      const create = org.canCreateProjects ? projectForm(org, homePage) : null;
      return h(
        'section',
        { 'aria-label': org.name },
        h('h2', {}, org.name),
        h(
          'p',
          { class: 'muted' },
          `Plan: ${org.plan} · your role: ${org.role} · `,
          h('a', { href: `#/orgs/${org.id}/members` }, 'Members and roles'),
          // SCIM's and single sign-on's settings are an Owner's alone (their groups may give the Owner role).
          org.role === 'owner'
            ? [
                ' · ',
                h('a', { href: `#/orgs/${org.id}/scim` }, 'SCIM provisioning'),
                ' · ',
                h('a', { href: `#/orgs/${org.id}/sso` }, 'Single sign-on'),
              ]
            : null,
        ),
        projectList(org.projects, create),
        create,
      );
    }),
    home.personal.length > 0
      ? h('section', { 'aria-label': 'Personal projects' }, h('h2', {}, 'Personal projects'), projectList(home.personal, null))
      : null,
    home.canCreateOrgs ? orgForm(homePage) : null,
    h('p', {}, h('a', { href: '#/mail' }, 'Your mail')),
  );
}
