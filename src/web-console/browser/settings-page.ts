// A project's environments and audiences.
import { api, field, h, listEditor, type ListEditor, onSubmit, onThisPage, say, sayError } from './dom.js';
import { crumbs, emptyState, isProtectedEnv, projectTabs, settingsName, show, toForm } from './shell.js';
import { approvalsSection } from './approvals-form.js';
import type { ApprovalsView, Audience, ProjectView } from './views.js';

/**
 * An audience's rules: per rule its attribute and its values, each value in a box of its own (a value
 * may hold commas and blanks). A removed rule is dropped from what is saved; the others keep their numbers.
 */
export function rulesEditor(initial: Audience['rules']): { element: HTMLElement; rules(): Audience['rules'] } {
  const rules: { attribute: HTMLInputElement; values: ListEditor; removed: boolean }[] = [];
  const list = h('div', {});
  const addRule = (rule: Audience['rules'][number]) => {
    const n = rules.length + 1;
    const entry = {
      attribute: h('input', { type: 'text', value: rule.attribute }),
      values: listEditor(`Values of rule ${n}`, `Rule ${n} value`, rule.values),
      removed: false,
    };
    rules.push(entry);
    const box: HTMLElement = h(
      'div',
      { class: 'rule', role: 'group', 'aria-label': `Rule ${n}` },
      field(`Rule ${n} attribute`, entry.attribute),
      entry.values.element,
      ' ',
      h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          onclick: () => {
            entry.removed = true;
            box.remove();
          },
        },
        `Remove rule ${n}`,
      ),
    );
    list.append(box);
    return entry;
  };
  for (const rule of initial) addRule(rule);
  const add = h(
    'button',
    { type: 'button', class: 'secondary', onclick: () => addRule({ attribute: '', values: [] }).attribute.focus() },
    'Add rule',
  );
  return {
    element: h(
      'div',
      {},
      h('p', { class: 'muted' }, "Every rule must match: the request's attribute equals one of the rule's values."),
      list,
      add,
    ),
    rules: () => rules.filter((r) => !r.removed).map((r) => ({ attribute: r.attribute.value, values: r.values.items() })),
  };
}

export async function settingsPage(projectId: string): Promise<void> {
  const id = encodeURIComponent(projectId);
  const data = await api<ProjectView>('GET', `projects/${id}`);
  // Read once the project is known to be there: an unknown project is one 404, its "Not found" page.
  const approvals = await api<ApprovalsView>('GET', `projects/${id}/approvals`);
  const { project, can } = data;
  const reload = onThisPage(() => settingsPage(projectId).catch(sayError));
  const create = can.configure ? audienceForm(data, null, reload) : null;
  show(
    `Settings of ${project.name}`,
    crumbs([`#/projects/${project.id}`, project.name]),
    h('h1', {}, `${settingsName(project)} of ${project.name}`),
    projectTabs(project),
    project.kind === 'multi' ? environmentsSection(data, reload) : null,
    approvalsSection(approvals, reload),
    h('h2', {}, 'Audiences'),
    data.audiences.length > 0 ? data.audiences.map((a) => audienceForm(data, a, reload)) : noAudiences(create),
    create,
  );
}

function noAudiences(create: HTMLElement | null): HTMLElement {
  const text = 'No audiences yet. An audience is the users whose attributes match its rules; a flag state can be limited to one.';
  return create === null
    ? emptyState(`${text} An Admin or Owner can create one.`)
    : emptyState(`${text} Create one with the New audience form below.`, toForm('Create an audience', create));
}

/**
 * Which environments are protected: a change to one of them asks to confirm in the flag list and on
 * the flag page (docs/web-console.md: Protected environments). One checkbox per environment.
 */
function protectForm(data: ProjectView, reload: () => Promise<void>): HTMLElement {
  const { project } = data;
  const boxes = project.environments.map((env) => ({
    env,
    box: h('input', { type: 'checkbox', name: 'protected', value: env, checked: isProtectedEnv(project, env) }),
  }));
  return h(
    'form',
    {
      onsubmit: onSubmit(async () => {
        const changed = boxes.filter(({ env, box }) => box.checked !== isProtectedEnv(project, env));
        for (const { env, box } of changed)
          await api('POST', `projects/${project.id}/environments/protect`, { environment: env, protected: box.checked });
        await reload();
        say(
          changed.length === 0
            ? 'Nothing changed.'
            : `Protected environments: ${
                boxes
                  .filter((b) => b.box.checked)
                  .map((b) => b.env)
                  .join(', ') || 'none'
              }.`,
        );
      }),
    },
    h(
      'fieldset',
      {},
      h('legend', {}, 'Protected environments (changes ask to confirm)'),
      h(
        'div',
        { class: 'row' },
        boxes.map(({ env, box }) => field(env, box)),
        h('button', { type: 'submit' }, 'Save protection'),
      ),
    ),
  );
}

/** A multi-environment project's environments, with the forms that add and rename one. */
function environmentsSection(data: ProjectView, reload: () => Promise<void>): HTMLElement {
  const { project, can } = data;
  const newEnv = h('input', { type: 'text', name: 'environment' });
  const from = h(
    'select',
    { name: 'from' },
    project.environments.map((e) => h('option', { value: e }, e)),
  );
  const to = h('input', { type: 'text', name: 'to' });
  return h(
    'section',
    { 'aria-label': 'Environments' },
    h('h2', {}, 'Environments'),
    project.environments.length > 0
      ? h('p', {}, project.environments.map((e) => (isProtectedEnv(project, e) ? `${e} (protected)` : e)).join(', '))
      : emptyState(
          can.configure
            ? 'No environments yet: add the first one with the form below; each flag then has a state of its own in each environment.'
            : 'No environments yet. An Admin or Owner can add them.',
        ),
    can.configure
      ? [
          h(
            'form',
            {
              onsubmit: onSubmit(async () => {
                await api('POST', `projects/${project.id}/environments`, { name: newEnv.value });
                await reload();
                say(`Environment ${newEnv.value} added.`);
              }),
            },
            h('div', { class: 'row' }, field('New environment', newEnv), h('button', { type: 'submit' }, 'Add environment')),
          ),
          project.environments.length > 0 ? protectForm(data, reload) : null,
          project.environments.length > 0
            ? h(
                'form',
                {
                  onsubmit: onSubmit(async () => {
                    await api('POST', `projects/${project.id}/environments/rename`, { from: from.value, to: to.value });
                    await reload();
                    say(`Environment ${from.value} renamed to ${to.value}.`);
                  }),
                },
                h(
                  'p',
                  { class: 'warning' },
                  'Tokens limited to the old name are not updated: their requests for that environment are refused until they are replaced.',
                ),
                h(
                  'div',
                  { class: 'row' },
                  field('Environment', from),
                  field('New name', to),
                  h('button', { type: 'submit' }, 'Rename environment'),
                ),
              )
            : null,
        ]
      : null,
  );
}

/** The form of an audience (its name and rules), or of a new one (`audience` null). */
function audienceForm(data: ProjectView, audience: Audience | null, reload: () => Promise<void>): HTMLFormElement {
  const { project, can } = data;
  const name = h('input', { type: 'text', name: 'name', value: audience?.name ?? '' });
  const rules = rulesEditor(audience?.rules ?? []);
  return h(
    'form',
    {
      onsubmit: onSubmit(async () => {
        const body = { name: name.value, rules: rules.rules() };
        await api('POST', audience === null ? `projects/${project.id}/audiences` : `audiences/${audience.id}`, body);
        await reload();
        say(audience === null ? `Audience ${name.value} created.` : `Audience ${name.value} saved.`);
      }),
    },
    h(
      'fieldset',
      { disabled: !can.configure },
      h('legend', {}, audience === null ? 'New audience' : `Audience ${audience.name}`),
      field('Audience name', name),
      rules.element,
      can.configure ? h('button', { type: 'submit' }, audience === null ? 'Create audience' : 'Save audience') : null,
    ),
  );
}
