// The home page's forms that create: a project in an organisation (its Admin or Owner), and an
// organisation (where the server's operator allows it). Each is one call; the writer's refusal is
// shown in the status line.
import { api, field, h, listEditor, onSubmit, say } from './dom.js';
import type { Org, Project } from './views.js';

/** A new project of `org`, single-environment or with the environments listed. */
export function projectForm(org: Pick<Org, 'id' | 'name'>, done: () => Promise<void>): HTMLElement {
  const name = h('input', { type: 'text', name: 'name', required: true });
  const kind = h(
    'select',
    { name: 'kind' },
    h('option', { value: 'single' }, 'Single environment'),
    h('option', { value: 'multi' }, 'Several environments'),
  );
  const environments = listEditor(`Environments of the new project in ${org.name}`, 'Environment', ['development', 'production']);
  const showEnvironments = () => {
    environments.element.hidden = kind.value !== 'multi';
  };
  kind.addEventListener('change', showEnvironments);
  showEnvironments();
  return h(
    'form',
    {
      onsubmit: onSubmit(async () => {
        const multi = kind.value === 'multi';
        const made = await api<Project>('POST', `orgs/${encodeURIComponent(org.id)}/projects`, {
          name: name.value.trim(),
          kind: kind.value,
          environments: multi ? environments.items() : [],
        });
        await done();
        say(`Project ${made.name} created in ${org.name}.`);
      }),
    },
    h(
      'fieldset',
      {},
      h('legend', {}, `New project in ${org.name}`),
      field('Name', name),
      field('Kind', kind),
      environments.element,
      h('p', {}, h('button', { type: 'submit' }, 'Create project')),
    ),
  );
}

/** A new organisation; the signed-in user becomes its Owner. */
export function orgForm(done: () => Promise<void>): HTMLElement {
  const name = h('input', { type: 'text', name: 'name', required: true });
  return h(
    'form',
    {
      onsubmit: onSubmit(async () => {
        const made = await api<Org>('POST', 'orgs', { name: name.value.trim() });
        await done();
        say(`Organisation ${made.name} created; you are its Owner.`);
      }),
    },
    h(
      'fieldset',
      {},
      h('legend', {}, 'New organisation'),
      field('Name', name),
      h('p', {}, h('button', { type: 'submit' }, 'Create organisation')),
    ),
  );
}
