// One node of a branch's conditions in the rule builder (rule-builder.ts): a comparison (attribute,
// operator, value), a shared fragment, a `not`, or a group (all / any) of nodes, each drawn by this
// same editor one level down.
import { h } from './dom.js';
import { newCompare, valueControls, withOp } from './condition-value-editor.js';
import { button, choice, type RuleEditing, textBox } from './rule-controls.js';
import { type CompareOp, kCompareOps, kOpLabels, type RuleNode } from './rule-model.js';

/** The operator list's entry for a shared fragment, after the comparisons. */
const kFragmentOp = 'fragment';

/**
 * The editor of `node` at `place` ("Branch 1 condition 1.2"); `replace` puts another node in its place,
 * `remove` takes it out of its group and names the control to focus then (null: the branch's top,
 * removed with the branch).
 */
export function conditionEditor(
  ed: RuleEditing,
  node: RuleNode,
  place: string,
  replace: (n: RuleNode) => void,
  remove: (() => string) | null,
): HTMLElement {
  const removeButton = remove === null ? null : button(ed, 'Remove', `Remove ${place}`, () => ed.reshaped(remove()));
  if (node.kind === 'not') {
    return h(
      'div',
      { class: 'rule-not' },
      h('span', {}, 'not: '),
      button(ed, 'Remove not', `Remove not from ${place}`, () => {
        replace(node.item);
        ed.reshaped(`Negate ${place}`);
      }),
      removeButton,
      conditionEditor(
        ed,
        node.item,
        place,
        (n) => {
          node.item = n;
        },
        null,
      ),
    );
  }
  const negate = button(ed, 'Negate', `Negate ${place}`, () => {
    replace({ kind: 'not', item: node, bare: false });
    ed.reshaped(`Remove not from ${place}`);
  });
  // The operator list: the comparisons, and "matches shared fragment" when the project has any (or the
  // condition is one already). Choosing a comparison on a fragment condition starts a new comparison.
  const operators = (current: string) =>
    choice(
      ed,
      [
        ...kCompareOps.map((op): [string, string] => [op, kOpLabels[op]]),
        ...(ed.fragments.length > 0 || node.kind === 'fragment' ? [[kFragmentOp, 'matches shared fragment'] as [string, string]] : []),
      ],
      current,
      `${place} operator`,
      (op) => {
        if (op === kFragmentOp) replace({ kind: 'fragment', name: ed.fragments[0] ?? '' });
        else replace(withOp(node.kind === 'compare' ? node : newCompare(), op as CompareOp));
      },
    );
  if (node.kind === 'fragment') {
    const names = [...(ed.fragments.includes(node.name) ? [] : [node.name]), ...ed.fragments];
    const pick = choice(
      ed,
      names.map((n): [string, string] => [n, n === '' ? '(none)' : n]),
      node.name,
      `${place} shared fragment`,
      (name) => {
        node.name = name;
      },
    );
    return h('div', { class: 'rule-condition' }, operators(kFragmentOp), pick, negate, removeButton);
  }
  if (node.kind === 'compare') {
    const ops = operators(node.op);
    const attribute = textBox(ed, node.attribute, `${place} attribute`, (v) => {
      node.attribute = v;
    });
    return h('div', { class: 'rule-condition' }, attribute, ops, ...valueControls(ed, node, place), negate, removeButton);
  }
  const items = node.items.map((item, i) =>
    h(
      'li',
      {},
      conditionEditor(
        ed,
        item,
        `${place}.${i + 1}`,
        (n) => {
          node.items[i] = n;
        },
        () => {
          node.items.splice(i, 1);
          return `Add condition to ${place}`;
        },
      ),
    ),
  );
  const add = (what: RuleNode, focus: string) => () => {
    node.items.push(what);
    ed.reshaped(focus);
  };
  const next = `${place}.${node.items.length + 1}`;
  return h(
    'div',
    { class: 'rule-group' },
    choice(
      ed,
      [
        ['all', 'all of these hold'],
        ['any', 'any of these holds'],
      ],
      node.kind,
      `${place} group`,
      (kind) => replace({ kind: kind as 'all' | 'any', items: node.items }),
    ),
    negate,
    removeButton,
    h('ol', {}, items),
    button(ed, 'Add condition', `Add condition to ${place}`, add(newCompare(), `${next} attribute`)),
    ' ',
    button(ed, 'Add group', `Add group to ${place}`, add({ kind: 'any', items: [newCompare()] }, `${next}.1 attribute`)),
  );
}
