// The rule builder's branches in order (rule-builder.ts): each branch's conditions and what it serves,
// moved up and down, added and removed, then what everyone else gets.
import { conditionEditor } from './condition-editor.js';
import { newCompare } from './condition-value-editor.js';
import { h } from './dom.js';
import { outcomeEditor } from './outcome-editor.js';
import { button, type RuleEditing } from './rule-controls.js';
import type { RuleModel } from './rule-model.js';

/** The branches of `model`, an Add branch button and the last line, as the builder's body shows them. */
export function branchList(ed: RuleEditing, model: RuleModel): HTMLElement[] {
  const branches = model.branches.map((branch, i) => {
    const place = `Branch ${i + 1}`;
    const move = (to: number) => () => {
      const [moved] = model.branches.splice(i, 1);
      model.branches.splice(to, 0, moved!);
      // Focus stays on the button pressed, or on the other one where the branch reached an end.
      const [pressed, other] = to < i ? ['up', 'down'] : ['down', 'up'];
      ed.reshaped([`Move ${pressed} Branch ${to + 1}`, `Move ${other} Branch ${to + 1}`]);
    };
    return h(
      'li',
      { class: 'rule-branch' },
      h(
        'fieldset',
        {},
        h('legend', {}, `${place}: if`),
        conditionEditor(
          ed,
          branch.when,
          `${place} condition 1`,
          (n) => {
            branch.when = n;
          },
          null,
        ),
        branch.when.kind === 'all' || branch.when.kind === 'any'
          ? null
          : button(ed, 'Add condition', `Add condition to ${place}`, () => {
              branch.when = { kind: 'all', items: [branch.when, newCompare()] };
              ed.reshaped(`${place} condition 1.2 attribute`);
            }),
        outcomeEditor(ed, branch.serve, place, (o) => {
          branch.serve = o;
        }),
        h(
          'div',
          { class: 'row' },
          i > 0 ? button(ed, 'Move up', `Move up ${place}`, move(i - 1)) : null,
          i < model.branches.length - 1 ? button(ed, 'Move down', `Move down ${place}`, move(i + 1)) : null,
          button(ed, 'Remove branch', `Remove ${place}`, () => {
            model.branches.splice(i, 1);
            ed.reshaped('Add branch');
          }),
        ),
      ),
    );
  });
  return [
    model.branches.length === 0
      ? h('p', {}, 'No branch yet: everyone the state lets in gets what the last line says.')
      : h('ol', { class: 'rule-branches' }, branches),
    button(ed, 'Add branch', 'Add branch', () => {
      model.branches.push({ when: newCompare(), serve: { kind: 'variant', name: ed.variants()[0] ?? '' } });
      // Written out (`null`, the default variant), so the chain ends in an else: the playground then names the branch that held.
      if (model.otherwise === null) model.otherwise = { kind: 'default' };
      ed.reshaped(`Branch ${model.branches.length} condition 1 attribute`);
    }),
    h(
      'fieldset',
      {},
      h('legend', {}, model.branches.length === 0 ? 'Everyone' : 'Otherwise'),
      outcomeEditor(ed, model.otherwise, 'Otherwise', (o) => {
        model.otherwise = o;
      }),
    ),
  ];
}
