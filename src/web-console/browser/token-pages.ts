// A project's tokens, and one token's activity.
import { api, dataTable, field, formatTime, h, onSubmit, say, sayError } from './dom.js';
import { crumbs, emptyState, projectTabs, secretBox, show, toForm } from './shell.js';
import type { ActivityView, TokensView } from './views.js';

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
  const reload = (box: HTMLElement | null = null) => tokensPage(projectId, box).catch(sayError);
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
    data.tokens.length > 0 ? tokensTable(project.name, data.tokens, reload) : noTokens(data, create),
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

/** Every token of the project, with Rotate and Revoke where the user may manage it. */
function tokensTable(projectName: string, tokens: readonly TokenRow[], reload: (box?: HTMLElement | null) => Promise<void>): HTMLElement {
  const act = (token: TokenRow, verb: 'rotate' | 'revoke') => () => {
    api<{ name?: string; secret?: string }>('POST', `tokens/${token.id}/${verb}`).then(async (result) => {
      await reload(verb === 'rotate' ? tokenSecretBox(token.name, result.secret!) : null);
      say(verb === 'rotate' ? `Token ${token.name} rotated: the old secret no longer works.` : `Token ${token.name} revoked.`);
    }, sayError);
  };
  return dataTable(
    `Tokens of ${projectName}`,
    ['Name', 'Permission', 'Environments', 'Status', 'Created by', 'Expires', 'Actions'],
    h(
      'tbody',
      {},
      tokens.map((t) =>
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
