// What waits for the signed-in user (docs/web-console.md: Approvals): the header's count of the change
// requests they may approve, read again with every page drawn, and its page (#/requests), those
// requests of every project they belong to. The writer's rule decides who may approve (approvalProblem).
import { api, dataTable, h, pageLeft, timeElement } from './dom.js';
import { approvalsText, environmentsText } from './requests-page.js';
import { crumbs, emptyState, show } from './shell.js';
import type { WaitingView } from './views.js';

/** "2 change requests wait for you" in the header, linking to their page; nothing while none does. */
export function showWaiting(): void {
  const link = document.getElementById('waiting');
  if (link === null) return;
  api<WaitingView>('GET', 'requests/waiting').then(
    ({ requests }) => {
      const n = requests.length;
      link.textContent = n === 1 ? '1 change request waits for you' : `${n} change requests wait for you`;
      link.hidden = n === 0;
    },
    // A count read as the user went on is read again for the next page; a failed one leaves the last count.
    (err: unknown) => {
      if (!pageLeft(err)) link.hidden = link.textContent === '';
    },
  );
}

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
