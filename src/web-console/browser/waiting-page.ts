// What waits for the signed-in user (docs/web-console.md: Approvals): the page the header's count
// (waiting-count.ts) links to (#/requests), the change requests of every project they belong to that
// they may approve. The writer's rule decides who may approve (approvalProblem).
import { api, dataTable, h, timeElement } from './dom.js';
import { approvalsText, environmentsText } from './requests-page.js';
import { crumbs, emptyState, show } from './shell.js';
import type { WaitingView } from './views.js';

export async function waitingPage(): Promise<void> {
  const { requests } = await api<WaitingView>('GET', 'requests/waiting');
  show(
    'Waiting for you',
    crumbs(),
    h('h1', {}, 'Change requests waiting for you'),
    requests.length === 0
      ? emptyState('Nothing waits for your approval.')
      : dataTable(
          'Change requests waiting for you',
          ['Request', 'Project', 'Author', 'Environments', 'Approvals', 'Opened'],
          h(
            'tbody',
            {},
            requests.map((r) =>
              h(
                'tr',
                {},
                h(
                  'td',
                  {},
                  h('a', { href: `#/requests/${r.id}` }, r.title),
                  r.stale ? [' ', h('span', { class: 'pill stale' }, 'stale')] : null,
                ),
                h('td', {}, h('a', { href: `#/projects/${r.projectId}/requests` }, r.projectName)),
                h('td', {}, r.author.name),
                h('td', {}, environmentsText(r.environments)),
                h('td', {}, approvalsText(r)),
                h('td', {}, timeElement(r.createdAt)),
              ),
            ),
          ),
        ),
  );
}
