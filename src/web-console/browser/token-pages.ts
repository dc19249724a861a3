// A project's tokens, and one token's activity.
import { askToConfirm } from './confirm-dialog.js';
import { api, dataTable, field, h, onSubmit, onThisPage, say, sayError } from './dom.js';
import { formatTime } from '../../words/time.js';
import { crumbs, emptyState, projectTabs, secretBox, show, toForm } from './shell.js';
import type { ActivityView, Project, TokensView } from './views.js';

/** One token of the tokens page. */
export type TokenRow = TokensView['tokens'][number];

/** A new or rotated token's secret, shown once. */
function tokenSecretBox(name: string, secret: string): HTMLElement {
  return secretBox({
    label: 'New token secret',
    heading: `Secret of ${name}`,
    advice:
      'Copy it now: it is shown only this once and cannot be shown again. Keep it in server-side code or a secret store, never in a browser bundle or a URL. A lost secret needs a new token.',
    id: 'token-secret',
    secret,
  });
}

export async function tokensPage(projectId: string, created: HTMLElement | null = null): Promise<void> {
  const data = await api<TokensView>('GET', `projects/${encodeURIComponent(projectId)}/tokens`);
  const { project, can } = data;
  const reload = onThisPage((box: HTMLElement | null = null) => tokensPage(projectId, box).catch(sayError));
  const create = can.createTokens ? createTokenForm(project, reload) : null;
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
    create,
    data.tokens.length > 0 ? tokensTable(project, data.tokens, reload) : noTokens(data, create),
  );
}

/** The tokens page of a project without tokens: how to make one, and who may. */
function noTokens(data: TokensView, create: HTMLElement | null): HTMLElement | null {
  if (create !== null)
    return emptyState(
      "No tokens yet. Create one with the New token form: an application reads this project's flags with a read token's secret, and changes them with a write token's.",
      toForm('Create a token', create),
    );
  // A personal project, or a plan without the Management API: the warning above says why.
  if (data.can.tokensReadOnly) return null;
  return emptyState('No tokens yet. An Editor, Admin or Owner of the organisation can create one.');
}

/** The new-token form; the secret is shown once, in a box above it, after the page reloads. */
function createTokenForm(project: TokensView['project'], reload: (box: HTMLElement) => Promise<void>): HTMLElement {
  const name = h('input', { type: 'text', name: 'name', required: true });
  const permission = h('select', { name: 'permission' }, h('option', { value: 'read' }, 'read'), h('option', { value: 'write' }, 'write'));
  const expires = h(
    'select',
    { name: 'expires' },
    ['never', '30d', '90d', '365d'].map((e) => h('option', { value: e }, e === 'never' ? 'Never' : `${e.slice(0, -1)} days`)),
  );
  const envs = project.environments.map((env) => h('input', { type: 'checkbox', name: 'env', value: env }));
  return h(
    'form',
    {
      onsubmit: onSubmit(async () => {
        const token = await api<{ name: string; secret: string }>('POST', `projects/${project.id}/tokens`, {
          name: name.value,
          permission: permission.value,
          expires: expires.value,
          environments: envs.filter((e) => e.checked).map((e) => e.value),
        });
        await reload(tokenSecretBox(token.name, token.secret));
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
  );
}

/** The rotate dialog's choices of how long the old secret keeps working (the server takes 0 to 7 days). */
const kGraceChoices: readonly [number, string][] = [
  [0, 'None: it stops now'],
  [3600, '1 hour'],
  [86_400, '1 day'],
  [604_800, '7 days'],
];

/** Asks before rotating (with the old secret's grace period) or revoking: one click must not kill a secret in use. */
async function confirmTokenAction(token: TokenRow, verb: 'rotate' | 'revoke'): Promise<{ gracePeriodSeconds?: number } | null> {
  if (verb === 'revoke') {
    const yes = await askToConfirm({
      title: token.secretWorksUntil === null ? `Revoke token ${token.name}?` : `Revoke the old secret of token ${token.name}?`,
      text:
        token.secretWorksUntil === null
          ? 'Applications using its secret are refused from now on (401 Token revoked). This cannot be undone.'
          : 'Its old secret, still working after a rotation, is refused from now on (401 Token revoked). Its replacement is not affected.',
      confirm: 'Revoke',
      danger: true,
    });
    return yes ? {} : null;
  }
  const grace = h(
    'select',
    { name: 'gracePeriodSeconds' },
    kGraceChoices.map(([seconds, text]) => h('option', { value: seconds }, text)),
  );
  const yes = await askToConfirm({
    title: `Rotate token ${token.name}?`,
    text: 'A new secret replaces this one, with the same name, permission, environments and expiry. The new secret is shown once.',
    confirm: 'Rotate',
    danger: true,
    extra: field('Old secret keeps working for', grace),
  });
  return yes ? { gracePeriodSeconds: Number(grace.value) } : null;
}

/** What the status line says once a token was rotated: when its old secret stops working. */
function rotatedText(name: string, graceEndsAt: number | null): string {
  return graceEndsAt === null
    ? `Token ${name} rotated: the old secret no longer works.`
    : `Token ${name} rotated: the old secret works until ${formatTime(graceEndsAt)}.`;
}

/** Every token of the project, with Rotate and Revoke where the user may manage it, each confirmed in a dialog. */
function tokensTable(project: Project, tokens: readonly TokenRow[], reload: (box?: HTMLElement | null) => Promise<void>): HTMLElement {
  // A single-environment project has no environments: every token serves all of it, so no column says so.
  const envs = project.kind === 'multi';
  const act = (token: TokenRow, verb: 'rotate' | 'revoke') => async () => {
    const body = await confirmTokenAction(token, verb);
    if (body === null) return;
    const result = await api<{ secret?: string; replaced?: { graceEndsAt: number | null } }>('POST', `tokens/${token.id}/${verb}`, body);
    await reload(verb === 'rotate' ? tokenSecretBox(token.name, result.secret!) : null);
    say(verb === 'rotate' ? rotatedText(token.name, result.replaced!.graceEndsAt) : `Token ${token.name} revoked.`);
  };
  const run = (work: () => Promise<void>) => () => void work().catch(sayError);
  return dataTable(
    `Tokens of ${project.name}`,
    ['Name', 'Permission', ...(envs ? ['Environments'] : []), 'Status', 'Created by', 'Expires', 'Actions'],
    h(
      'tbody',
      {},
      tokens.map((t) =>
        h(
          'tr',
          {},
          h('td', {}, t.name),
          h('td', {}, t.permission),
          envs ? h('td', {}, t.environments.join(', ') || 'all') : null,
          h(
            'td',
            {},
            h('span', { class: `pill ${t.status}` }, t.status),
            t.secretWorksUntil === null ? null : h('div', { class: 'muted' }, `old secret works until ${formatTime(t.secretWorksUntil)}`),
          ),
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
                    { type: 'button', class: 'secondary', 'aria-label': `Rotate ${t.name}`, onclick: run(act(t, 'rotate')) },
                    'Rotate',
                  ),
                ]
              : null,
            t.manageable || t.graceRevocable
              ? [
                  ' ',
                  t.manageable
                    ? h(
                        'button',
                        { type: 'button', class: 'danger', 'aria-label': `Revoke ${t.name}`, onclick: run(act(t, 'revoke')) },
                        'Revoke',
                      )
                    : // Beside its replacement of the same name: the label says which secret goes.
                      h(
                        'button',
                        { type: 'button', class: 'danger', 'aria-label': `Revoke old secret of ${t.name}`, onclick: run(act(t, 'revoke')) },
                        'Revoke old secret',
                      ),
                ]
              : null,
          ),
        ),
      ),
    ),
  );
}

export async function activityPage(tokenId: string): Promise<void> {
  const data = await api<ActivityView>('GET', `tokens/${encodeURIComponent(tokenId)}/activity`);
  const table = (label: string, empty: string, head: string[], rows: (string | number)[][]) =>
    rows.length === 0
      ? emptyState(empty)
      : dataTable(
          label,
          head,
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
      'Recent requests',
      'No requests with this token yet: an application sends its secret in the Authorization header of its Management API calls.',
      ['At', 'Method', 'Path', 'Status'],
      data.recent.map((r) => [formatTime(r.at), r.method, r.path, r.status]),
    ),
    h('h2', {}, 'Recent denials'),
    table(
      'Recent denials',
      'No refused requests.',
      ['At', 'Method', 'Path', 'Reason'],
      data.denials.map((d) => [formatTime(d.at), d.method, d.path, d.reason]),
    ),
  );
}
