// One node of a branch's conditions in the rule builder, alone (src/web-console/browser/
// condition-editor.ts): a comparison's attribute and operator, a shared fragment offered only where the
// project has one, a not put on and taken off, a group's nodes added and removed; each structural edit
// names the control that keeps the focus.
import '../../helpers/browser-dom.js';
import t from 'tap';
import { conditionEditor } from '../../../src/web-console/browser/condition-editor.js';
import type { RuleNode } from '../../../src/web-console/browser/rule-model.js';
import { choose, drawnChoice, drivePart, focused, options, type } from '../../helpers/rule-editing.js';

const place = 'Branch 1 condition 1';

/** The editor of `node` at the branch's top, as the branch list draws it (no Remove there); `held.node` is what it edits. */
function drive(node: RuleNode, fragments: string[] = [], removable = false) {
  const held = { node, removed: 0 };
  const part = drivePart(
    (ed) =>
      conditionEditor(
        ed,
        held.node,
        place,
        (n) => {
          held.node = n;
        },
        removable
          ? () => {
              held.removed++;
              return 'Add condition to Branch 1';
            }
          : null,
      ),
    { fragments },
  );
  return { held, ...part };
}

t.test('a comparison: the attribute typed, the operator chosen', async (t) => {
  const { held, byLabel, calls, labels } = drive({ kind: 'compare', attribute: 'plan', op: '==', value: 'gold' });
  t.same(labels(), [`${place} attribute`, `${place} operator`, `${place} value`, `${place} value type`, `Negate ${place}`]);
  type(byLabel(`${place} attribute`), 'tier');
  t.same(held.node, { kind: 'compare', attribute: 'tier', op: '==', value: 'gold' });
  t.same(calls, { edits: 1, reshapes: [] });
  const operator = byLabel<HTMLSelectElement>(`${place} operator`);
  t.notOk(
    options(operator).some(([v]) => v === 'fragment'),
    'no shared fragment offered where the project has none',
  );
  choose(operator, 'in');
  t.same(held.node, { kind: 'compare', attribute: 'tier', op: 'in', value: ['gold'] }, 'replaced, the value kept');
  t.same(calls.reshapes, [`${place} operator`]);
  t.equal(drawnChoice(byLabel(`${place} operator`)), 'in');
  t.equal(focused(), `${place} operator`);
  t.ok(byLabel(`${place} values, one a line`), "the new operator's value controls");
});

t.test('a shared fragment: offered where the project has some, chosen by name, left for a comparison', async (t) => {
  const { held, byLabel } = drive({ kind: 'compare', attribute: 'plan', op: '==', value: 'gold' }, ['beta-users', 'staff']);
  t.same(options(byLabel(`${place} operator`)).at(-1), ['fragment', 'matches shared fragment']);
  choose(byLabel(`${place} operator`), 'fragment');
  t.same(held.node, { kind: 'fragment', name: 'beta-users' }, 'the first fragment');
  choose(byLabel(`${place} shared fragment`), 'staff');
  t.same(held.node, { kind: 'fragment', name: 'staff' });
  choose(byLabel(`${place} operator`), '<');
  t.equal(held.node.kind === 'compare' && held.node.attribute, '', 'a new comparison, nothing kept of the fragment');
  t.equal(held.node.kind === 'compare' && held.node.op, '<');

  const gone = drive({ kind: 'fragment', name: 'old' });
  t.same(
    options(gone.byLabel(`${place} operator`)).at(-1),
    ['fragment', 'matches shared fragment'],
    'offered for a fragment condition in a project that has none now',
  );
  t.same(options(gone.byLabel(`${place} shared fragment`)), [['old', 'old']], 'the name it has, which the checks then name');
});

t.test('negate puts a not around the node, and remove not takes it off', async (t) => {
  const compare: RuleNode = { kind: 'compare', attribute: 'age', op: '<', value: 30 };
  const { held, byLabel, calls } = drive(compare);
  byLabel<HTMLButtonElement>(`Negate ${place}`).click();
  t.same(held.node, { kind: 'not', item: compare, bare: false });
  t.equal(focused(), `Remove not from ${place}`, 'the focus on the way back');
  type(byLabel(`${place} number`), '40');
  t.same(held.node, { kind: 'not', item: { kind: 'compare', attribute: 'age', op: '<', value: 40 }, bare: false }, 'edited inside the not');
  byLabel<HTMLButtonElement>(`Remove not from ${place}`).click();
  t.same(held.node, { kind: 'compare', attribute: 'age', op: '<', value: 40 });
  t.same(calls.reshapes, [`Remove not from ${place}`, `Negate ${place}`]);
  t.equal(focused(), `Negate ${place}`);
});

t.test('a group: conditions and groups added with the focus on them, removed with the focus on its Add', async (t) => {
  const { held, byLabel, labels } = drive({ kind: 'all', items: [{ kind: 'compare', attribute: 'plan', op: '==', value: 'gold' }] });
  t.notOk(labels().includes(`Remove ${place}`), "the branch's top has no Remove: it goes with the branch");
  byLabel<HTMLButtonElement>(`Add condition to ${place}`).click();
  t.equal(focused(), `${place}.2 attribute`);
  byLabel<HTMLButtonElement>(`Add group to ${place}`).click();
  t.equal(focused(), `${place}.3.1 attribute`, "the new group's first condition");
  type(byLabel(`${place}.3.1 attribute`), 'seats');
  t.same(held.node, {
    kind: 'all',
    items: [
      { kind: 'compare', attribute: 'plan', op: '==', value: 'gold' },
      { kind: 'compare', attribute: '', op: '==', value: '' },
      { kind: 'any', items: [{ kind: 'compare', attribute: 'seats', op: '==', value: '' }] },
    ],
  });
  byLabel<HTMLButtonElement>(`Remove ${place}.2`).click();
  t.equal(focused(), `Add condition to ${place}`);
  t.equal(held.node.kind === 'all' && held.node.items.length, 2);
  choose(byLabel(`${place} group`), 'any');
  t.equal(held.node.kind, 'any', 'all of these becomes any of these');
  t.same(held.node.kind === 'any' && held.node.items.map((n) => n.kind), ['compare', 'any'], 'the same nodes');
});

t.test('a node its group can remove: Remove asks the group and focuses what it names', async (t) => {
  const { held, byLabel, calls } = drive({ kind: 'compare', attribute: 'a', op: '==', value: '' }, [], true);
  byLabel<HTMLButtonElement>(`Remove ${place}`).click();
  t.equal(held.removed, 1);
  t.same(calls.reshapes, ['Add condition to Branch 1']);
});
