// A project's change requests (pending, mine to approve, history) and one request: its diff in the audit
// log's words, its approvals and comments, and what the signed-in user may do with it, or why not
// (docs/web-console.md: Approvals). Every decision is the writer's: the page offers, the command checks.
import { partElement } from './sentence-parts.js';
import { fieldParts, type Names, valueParts } from '../../words/audit-sentences.js';
import { api, dataTable, field, h, onSubmit, onThisPage, say, sayError, timeElement } from './dom.js';
import { crumbs, emptyState, projectTabs, show } from './shell.js';
import { showWaiting } from './waiting-count.js';
import type { ChangeRequestView, RequestEntry, RequestPageView, RequestsView } from './views.js';

/** Where a request applies: its environments by name (a single-environment project's one, null, has none: —). */
export function environmentsText(envs: readonly (string | null)[]): string {
  const named = envs.filter((e): e is string => e !== null);
  return named.length === 0 ? '—' : named.join(', ');
}

/** " in production, staging", or nothing in a single-environment project. */
export function inEnvironments(envs: readonly (string | null)[]): string {
  const text = environmentsText(envs);
  return text === '—' ? '' : ` in ${text}`;
}

/** "1 of 2 approvals", as the status line says it when a request is opened (dom.ts). */
export function approvalsText(request: Pick<ChangeRequestView, 'approvals' | 'required'>): string {
  return `${request.approvals.length} of ${request.required} approvals`;
}

/** The request's status as a pill (its word, coloured by the class of the same name), and "stale" beside a pending one that is. */
function statusPill(request: Pick<ChangeRequestView, 'status' | 'stale'>): (HTMLElement | string)[] {
  const pill = h('span', { class: `pill ${request.status}` }, request.status);
  return request.status === 'pending' && request.stale ? [pill, ' ', h('span', { class: 'pill stale' }, 'stale')] : [pill];
}

export async function requestsPage(projectId: string): Promise<void> {
  const data = await api<RequestsView>('GET', `projects/${encodeURIComponent(projectId)}/requests`);
  const { project } = data;
  const mine = data.pending.filter((r) => r.notApprovable === null);
  show(
    `Change requests of ${project.name}`,
    crumbs([`#/projects/${project.id}`, project.name]),
    h('h1', {}, `Change requests of ${project.name}`),
    projectTabs(project),
    section(
      'Pending',
      data.pending,
      'Nothing waits for approval. A change to an environment that requires approval (set on the settings page) waits here until it is approved.',
    ),
    section('Mine to approve', mine, 'Nothing for you to approve: every pending request needs someone else, or there is none.'),
    section('History', data.history, 'No request has been decided yet.'),
    data.more ? h('p', { class: 'muted' }, `Only the newest ${data.history.length} decided requests are listed.`) : null,
  );
}

/** One of the page's lists: a table of its requests, or a sentence saying why it is empty. */
function section(title: string, requests: readonly RequestEntry[], none: string): HTMLElement {
  return h(
    'section',
    { 'aria-label': title },
    h('h2', {}, title),
    requests.length === 0
      ? emptyState(none)
      : dataTable(
          `Change requests: ${title.toLowerCase()}`,
          ['Request', 'Author', 'Environments', 'Approvals', 'Status', 'Opened'],
          h(
            'tbody',
            {},
            requests.map((r) =>
              h(
                'tr',
                {},
                h('td', {}, h('a', { href: `#/requests/${r.id}` }, r.title)),
                h('td', {}, r.authoredBy),
                h('td', {}, environmentsText(r.environments)),
                h('td', {}, approvalsText(r)),
                h('td', {}, statusPill(r)),
                h('td', {}, timeElement(r.createdAt)),
              ),
            ),
          ),
        ),
  );
}

export async function requestPage(requestId: string): Promise<void> {
  const data = await api<RequestPageView>('GET', `requests/${encodeURIComponent(requestId)}`);
  const { project, request } = data;
  const reload = onThisPage(() => requestPage(requestId).catch(sayError));
  show(
    `Change request: ${request.title}`,
    crumbs([`#/projects/${project.id}`, project.name], [`#/projects/${project.id}/requests`, 'Change requests']),
    h('h1', {}, `Change request: ${request.title}`),
    h(
      'p',
      {},
      ...statusPill(request),
      ` Opened by ${request.authoredBy} `,
      timeElement(request.createdAt),
      `${inEnvironments(request.environments)}: ${approvalsText(request)}.`,
    ),
    request.stale
      ? h('p', { class: 'warning' }, `Stale: ${request.problem ?? 'what it changes was changed since.'} Approving it is refused.`)
      : null,
    decidedLine(request),
    h('h2', {}, 'Changes'),
    diffTable(data),
    alteredSection(data.altered),
    h('h2', {}, 'Approvals'),
    request.approvals.length + request.lapsed.length === 0
      ? emptyState('No approvals yet.')
      : h(
          'ul',
          {},
          request.approvals.map((a) => h('li', {}, `${a.name}, `, timeElement(a.at))),
          request.lapsed.map((a) => h('li', { class: 'lapsed' }, `${a.name}, `, timeElement(a.at), `: lapsed, not counted. ${a.why}`)),
        ),
    h('h2', {}, 'Comments'),
    request.comments.length === 0
      ? emptyState('No comments yet.')
      : h(
          'ul',
          { class: 'comments' },
          request.comments.map((c) => h('li', {}, h('p', {}, h('strong', {}, c.name), ', ', timeElement(c.at)), h('p', {}, c.text))),
        ),
    request.status === 'pending' ? decide(data, reload) : null,
    commentForm(request, reload),
  );
}

/** Who decided a request that is no longer pending, when, and what they said. */
function decidedLine(request: ChangeRequestView): HTMLElement | null {
  const { decided } = request;
  if (decided === null || request.status === 'pending') return null;
  const verb = { applied: 'Applied', rejected: 'Rejected', withdrawn: 'Withdrawn' }[request.status];
  return h('p', {}, `${verb} by ${decided.name} `, timeElement(decided.at), decided.text === '' ? '.' : `: ${decided.text}`);
}

/** A diff line's field path read as where it is and what: `environments.production.typed.variants.blue` is production's variants, `blue`. */
export function diffField(field: string, environments: readonly (string | null)[]): { env: string | null; key: string; sub: string } {
  let rest = field;
  let env: string | null = null;
  // An environment's name may hold a dot: it is matched against the request's own environments.
  const named = environments.find((e) => e !== null && rest.startsWith(`environments.${e}.`));
  if (named !== undefined && named !== null) {
    env = named;
    rest = rest.slice(`environments.${named}.`.length);
  } else if (rest.startsWith('state.')) rest = rest.slice('state.'.length);
  if (rest.startsWith('typed.')) rest = rest.slice('typed.'.length);
  const [key = '', ...sub] = rest.split('.');
  return { env, key, sub: sub.join('.') };
}

/**
 * The request's changes, a row per field: the record and where, the field in the audit log's words, its
 * value now and the one proposed, read as the audit log reads them.
 */
function diffTable(data: RequestPageView): HTMLElement {
  const { request } = data;
  const names: Names = { flags: new Map(), audiences: new Map(data.audiences.map((a) => [a.id, a.name])), people: new Map() };
  return dataTable(
    'Changes',
    ['What', 'Field', 'Current', 'Proposed'],
    h(
      'tbody',
      {},
      request.diff.map((d) => {
        const { env, key, sub } = diffField(d.field, request.environments);
        const valueKey = sub === '' ? key : sub.slice(sub.lastIndexOf('.') + 1);
        const value = (v: unknown) => h('td', {}, valueParts(v, valueKey, names).flatMap(partElement));
        return h(
          'tr',
          {},
          h('td', {}, `${d.record} ${d.name}`, env === null ? null : ` in ${env}`),
          h('td', {}, key === '' ? 'the whole record' : fieldParts(key, names).flatMap(partElement), sub === '' ? null : ` ${sub}`),
          value(d.current),
          value(d.proposed),
        );
      }),
    ),
  );
}

/**
 * The approved release plans and pending requests that will read what the request changes (its `alters`),
 * each linked: a request to its page, a plan to its flag's page, which lists it. None: no section.
 */
function alteredSection(altered: RequestPageView['altered']): HTMLElement | null {
  if (altered.length === 0) return null;
  const where = (env: string | null) => (env === null ? '' : ` in ${env}`);
  const item = (a: RequestPageView['altered'][number]) => {
    const flag = a.name ?? 'a deleted flag';
    if (a.kind === 'request') return [h('a', { href: `#/requests/${a.id}` }, `Change request: ${a.name}`)];
    if (a.kind === 'gone') return [`${a.id}, no longer kept`];
    const what = a.kind === 'schedule' ? 'Scheduled change' : 'Rollout';
    return [h('a', { href: `#/flags/${a.flagId}` }, `${what} of ${flag}${where(a.env)}`), ` (${a.id})`];
  };
  return h(
    'section',
    { 'aria-label': 'What it alters' },
    h('h2', {}, 'What it alters'),
    h('p', {}, 'Approving it changes what these approved release plans and pending change requests will serve when they run:'),
    h(
      'ul',
      {},
      altered.map((a) => h('li', {}, ...item(a))),
    ),
  );
}

/**
 * Approve and Reject for whoever may (a note optional), Withdraw for the author; where the user may not
 * approve, the reason in place of the button.
 */
function decide(data: RequestPageView, reload: () => Promise<void>): HTMLElement {
  const { request } = data;
  const note = h('textarea', { name: 'note' });
  const act = (action: 'approve' | 'reject' | 'withdraw', done: (r: ChangeRequestView) => string) =>
    h(
      'button',
      {
        type: 'button',
        class: action === 'approve' ? null : action === 'reject' ? 'danger' : 'secondary',
        onclick: () => {
          const text = action === 'withdraw' || note.value.trim() === '' ? {} : { text: note.value };
          // An approval names the version shown here: one edited since is refused, never applied unseen.
          const body = action === 'approve' ? { ...text, ifVersion: request.version } : text;
          api<ChangeRequestView>('POST', `requests/${request.id}/${action}`, body).then(async (r) => {
            note.value = '';
            await reload();
            showWaiting();
            say(done(r));
          }, sayError);
        },
      },
      { approve: 'Approve', reject: 'Reject', withdraw: 'Withdraw' }[action],
    );
  // approvalProblem's rule decides both: whoever may approve may reject.
  const may = request.notApprovable === null;
  const approve = may
    ? act('approve', (r) => (r.status === 'applied' ? 'Approved: the change is applied.' : `Approved: ${approvalsText(r)}.`))
    : null;
  const reject = may ? act('reject', () => 'Rejected: the change will not be applied.') : null;
  const withdraw = data.mayWithdraw ? act('withdraw', () => 'Withdrawn: the change will not be applied.') : null;
  return h(
    'section',
    { 'aria-label': 'Decide' },
    h('h2', {}, 'Decide'),
    may
      ? field('Note with your decision (optional)', note, 'block')
      : h('p', {}, `You cannot approve this request: ${request.notApprovable}`),
    h('div', { class: 'row' }, approve, reject, withdraw),
  );
}

function commentForm(request: ChangeRequestView, reload: () => Promise<void>): HTMLFormElement {
  const text = h('textarea', { name: 'comment' });
  return h(
    'form',
    {
      onsubmit: onSubmit(async () => {
        await api('POST', `requests/${request.id}/comments`, { text: text.value });
        await reload();
        say('Comment added.');
      }),
    },
    h('fieldset', {}, h('legend', {}, 'Add a comment'), field('Comment', text, 'block'), h('button', { type: 'submit' }, 'Comment')),
  );
}
