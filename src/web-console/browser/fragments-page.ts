// A project's shared fragments (docs/web-console.md; issue 47): named rules, flagd's `$evaluators`, that a
// flag's rule uses as {"$ref": NAME} (the rule builder's "matches shared fragment"). Each with the flags
// that use it; a form to make one, and, per fragment, its rule edited as JSON and Delete confirmed in a
// dialog (refused, naming the flags, while one uses it). Forms and buttons are offered to those who may
// change flags. The server checks every rule as the Management API does.
import { askToConfirm } from './confirm-dialog.js';
import { api, dataTable, field, h, onSubmit, onThisPage, say, sayError } from './dom.js';
import { crumbs, emptyState, projectTabs, show, toForm } from './shell.js';
import type { FragmentsView } from './views.js';

type FragmentRow = FragmentsView['fragments'][number];

/** A rule typed in a form as JSON, or the sentence saying why it is not (nothing is sent then). */
function ruleOf(text: string): { ok: true; rule: unknown } | { ok: false; why: string } {
  try {
    return { ok: true, rule: JSON.parse(text) };
  } catch (err) {
    return { ok: false, why: `The rule is not JSON (${(err as Error).message}); nothing was saved.` };
  }
}

export async function fragmentsPage(projectId: string): Promise<void> {
  const data = await api<FragmentsView>('GET', `projects/${encodeURIComponent(projectId)}/fragments`);
  const { project, can } = data;
  const reload = onThisPage(() => fragmentsPage(projectId));
  const create = can.editFlags ? createForm(project.id, reload) : null;
  show(
    `Shared fragments of ${project.name}`,
    crumbs([`#/projects/${project.id}`, project.name]),
    h('h1', {}, `Shared fragments of ${project.name}`),
    projectTabs(project),
    h(
      'p',
      {},
      'A shared fragment is a named condition that many flags\' rules use: in the rule builder, "matches shared fragment", or {"$ref": "NAME"} in the JSON. Changing it changes every flag that uses it, at once.',
    ),
    can.editFlags
      ? null
      : h('p', { class: 'muted' }, 'Making, changing and deleting shared fragments needs the Editor, Admin or Owner role.'),
    create,
    data.fragments.length > 0
      ? fragmentsTable(project.id, data.fragments, can.editFlags, reload)
      : create === null
        ? emptyState('No shared fragments yet. An Editor, Admin or Owner can create one.')
        : emptyState(
            "No shared fragments yet. Create one with the New shared fragment form, then pick it in a flag's rule builder.",
            toForm('Create a shared fragment', create),
          ),
  );
}

function createForm(projectId: string, reload: () => Promise<void>): HTMLElement {
  const name = h('input', { type: 'text', name: 'name', required: true, pattern: '[A-Za-z][A-Za-z0-9_\\-]{0,63}', size: 24 });
  const rule = h('textarea', {
    name: 'rule',
    rows: 4,
    cols: 50,
    required: true,
    placeholder: '{"in": [{"var": "country"}, ["NL", "BE"]]}',
  });
  return h(
    'form',
    {
      onsubmit: onSubmit(async () => {
        const parsed = ruleOf(rule.value);
        if (!parsed.ok) return say(parsed.why, 'error');
        await api('POST', `projects/${projectId}/fragments`, { name: name.value, rule: parsed.rule });
        await reload();
        say(`Shared fragment ${name.value} created.`);
      }),
    },
    h(
      'fieldset',
      {},
      h('legend', {}, 'New shared fragment'),
      h(
        'div',
        { class: 'row' },
        field('Name (a letter, then letters, digits, _ or -)', name),
        field('Rule (JSON)', rule, 'block'),
        h('button', { type: 'submit' }, 'Create shared fragment'),
      ),
    ),
  );
}

function fragmentsTable(projectId: string, rows: readonly FragmentRow[], manage: boolean, reload: () => Promise<void>): HTMLElement {
  const remove = (f: FragmentRow) => async () => {
    const confirmed = await askToConfirm({
      title: `Delete the shared fragment ${f.name}?`,
      text: "A fragment a flag's rule uses is not deleted: change those rules first.",
      confirm: 'Delete',
      danger: true,
    });
    if (!confirmed) return;
    api('POST', `projects/${projectId}/fragments/${encodeURIComponent(f.name)}/delete`)
      .then(() => reload())
      .then(() => say(`Shared fragment ${f.name} deleted.`))
      .catch(sayError);
  };
  const edit = (f: FragmentRow) => {
    // Its value, not its text: a label's text would then hold the whole rule.
    const rule = h('textarea', { name: 'rule', rows: 3, cols: 40 });
    rule.value = JSON.stringify(f.rule, null, 2);
    return h(
      'form',
      {
        onsubmit: onSubmit(async () => {
          const parsed = ruleOf(rule.value);
          if (!parsed.ok) return say(parsed.why, 'error');
          await api('POST', `projects/${projectId}/fragments/${encodeURIComponent(f.name)}`, { rule: parsed.rule });
          await reload();
          say(`Shared fragment ${f.name} changed: every flag that uses it answers by its new rule.`);
        }),
      },
      field(`Rule of ${f.name} (JSON)`, rule, 'block'),
      h('button', { type: 'submit', class: 'secondary' }, 'Save rule'),
      ' ',
      h('button', { type: 'button', class: 'danger', 'aria-label': `Delete shared fragment ${f.name}`, onclick: remove(f) }, 'Delete'),
    );
  };
  return dataTable(
    'Shared fragments',
    ['Name', manage ? 'Rule' : 'Rule (JSON)', 'Used by'],
    h(
      'tbody',
      {},
      rows.map((f) =>
        h(
          'tr',
          {},
          h('td', {}, h('code', {}, f.name)),
          h('td', {}, manage ? edit(f) : h('code', {}, JSON.stringify(f.rule))),
          h('td', {}, f.usedBy.length === 0 ? 'no flag' : f.usedBy.join(', ')),
        ),
      ),
    ),
  );
}
