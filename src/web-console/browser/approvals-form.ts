// The settings page's approvals: per environment (a single-environment project's one), how many
// approvals a change there needs, from which roles, whether its author may approve it, and which tokens
// apply without approval (docs/web-console.md: Approvals). An Admin or Owner sets and clears each; others
// read it. The writer's approvalsSet and approvalsClear check every value and the role again.
import { api, field, h, onSubmit, say, sayError } from './dom.js';
import type { ApprovalsView } from './views.js';

type Rule = ApprovalsView['rules'][number];

/** An environment's name in the form's words: a single-environment project's one has none. */
const where = (env: string | null) => (env === null ? '' : ` in ${env}`);

/** "a, b or c". */
const either = (items: readonly string[]) => (items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`);

/** What a rule says, in a sentence: the read-only view, and the line at the top of each form. */
export function ruleText(rule: Rule, tokens: ReadonlyMap<string, string>): string {
  const approvals = `${rule.required} approval${rule.required === 1 ? '' : 's'} by ${either(rule.roles)}`;
  const self = rule.allowSelf ? 'its author may approve it' : 'its author may not approve it';
  const bypass =
    rule.bypassTokens.length === 0 ? '' : `; changes by ${either(rule.bypassTokens.map((t) => tokens.get(t) ?? t))} apply without approval`;
  return `A change${where(rule.env)} needs ${approvals}; ${self}${bypass}.`;
}

export function approvalsSection(data: ApprovalsView, reload: () => Promise<void>): HTMLElement {
  const tokens = new Map(data.tokens.map((t) => [t.id, t.name]));
  const rules = new Map(data.rules.map((r) => [r.env, r]));
  return h(
    'section',
    { 'aria-label': 'Approvals' },
    h('h2', {}, 'Approvals'),
    h(
      'p',
      { class: 'muted' },
      'A change to an environment that requires approval is not applied: it becomes a change request, applied when enough people approve it.',
    ),
    data.project.orgId === null
      ? h(
          'p',
          {},
          "A personal project has no approvals: approving needs a second person, so only an organisation's project can require it.",
        )
      : data.environments.length === 0
        ? h('p', {}, 'No environments yet: add one above to require approval for its changes.')
        : data.environments.map((env) => {
            const rule = rules.get(env);
            if (!data.can.configure) {
              const text = rule === undefined ? `Changes${where(env)} apply at once, without approval.` : ruleText(rule, tokens);
              return h('p', {}, text);
            }
            return ruleForm(data, tokens, env, rule, reload);
          }),
    data.can.configure ? null : h('p', { class: 'muted' }, 'An Admin or Owner can change who must approve.'),
  );
}

/** One environment's rule: its fields, Save, and (for a rule that exists) Stop requiring approval. */
function ruleForm(
  data: ApprovalsView,
  tokens: ReadonlyMap<string, string>,
  env: string | null,
  rule: Rule | undefined,
  reload: () => Promise<void>,
): HTMLFormElement {
  const { project } = data;
  const required = h(
    'select',
    { name: 'required' },
    [1, 2, 3, 4, 5].map((n) => h('option', { value: n, selected: n === (rule?.required ?? 1) }, String(n))),
  );
  const chosenRoles = new Set(rule?.roles ?? data.defaultRoles);
  const roles = data.roles.map((role) => ({
    role,
    box: h('input', { type: 'checkbox', name: 'roles', value: role, checked: chosenRoles.has(role) }),
  }));
  const allowSelf = h('input', { type: 'checkbox', name: 'allowSelf', checked: rule?.allowSelf ?? false });
  const bypass = data.tokens.map((t) => ({
    id: t.id,
    box: h('input', { type: 'checkbox', name: 'bypassTokens', value: t.id, checked: rule?.bypassTokens.includes(t.id) ?? false }),
    name: t.name,
  }));
  const label = env === null ? 'Approvals' : `Approvals in ${env}`;
  const clear = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      onclick: () => {
        api('POST', `projects/${project.id}/approvals/clear`, { env }).then(async () => {
          await reload();
          say(`Changes${where(env)} now apply without approval.`);
        }, sayError);
      },
    },
    `Stop requiring approval${where(env)}`,
  );
  return h(
    'form',
    {
      onsubmit: onSubmit(async () => {
        await api('POST', `projects/${project.id}/approvals`, {
          env,
          required: Number(required.value),
          roles: roles.filter((r) => r.box.checked).map((r) => r.role),
          allowSelf: allowSelf.checked,
          bypassTokens: bypass.filter((t) => t.box.checked).map((t) => t.id),
        });
        await reload();
        say(`Approvals${where(env)} saved.`);
      }),
    },
    h(
      'fieldset',
      {},
      h('legend', {}, label),
      h('p', {}, rule === undefined ? `Changes${where(env)} apply at once, without approval.` : ruleText(rule, tokens)),
      h('div', { class: 'row' }, field(`Approvals needed${where(env)}`, required)),
      h(
        'fieldset',
        {},
        h('legend', {}, `Who may approve${where(env)}`),
        roles.map(({ role, box }) => field(role, box)),
      ),
      field(`The author may approve their own change${where(env)}`, allowSelf),
      data.tokens.length === 0
        ? null
        : h(
            'fieldset',
            {},
            h('legend', {}, `Tokens that apply without approval${where(env)}`),
            bypass.map(({ name, box }) => field(name, box)),
          ),
      h(
        'div',
        { class: 'row' },
        h('button', { type: 'submit' }, rule === undefined ? `Require approval${where(env)}` : `Save approvals${where(env)}`),
        rule === undefined ? null : clear,
      ),
    ),
  );
}
