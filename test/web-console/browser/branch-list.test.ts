// The rule builder's branches, alone (src/web-console/browser/branch-list.ts): a branch added serves the
// first variant and writes out the last line, moved up and down with the focus on the button pressed
// (or the other one, at an end), a condition added to a single one makes a group, removed.
import '../../helpers/browser-dom.js';
import t from 'tap';
import { branchList } from '../../../src/web-console/browser/branch-list.js';
import type { RuleModel } from '../../../src/web-console/browser/rule-model.js';
import { drivePart, focused } from '../../helpers/rule-editing.js';

const when = (attribute: string) => ({ kind: 'compare' as const, attribute, op: '==' as const, value: 'x' });
const attributes = (model: RuleModel) => model.branches.map((b) => (b.when.kind === 'compare' ? b.when.attribute : b.when.kind));
const legends = () => [...document.querySelectorAll('legend')].map((el) => el.textContent);

t.test('no branch: the sentence and Everyone; a branch added serves the first variant, the last line written out', async (t) => {
  const model: RuleModel = { branches: [], otherwise: null };
  const { byLabel } = drivePart((ed) => branchList(ed, model));
  t.match(document.getElementById('page')!.textContent, 'No branch yet');
  t.same(legends(), ['Everyone']);
  byLabel<HTMLButtonElement>('Add branch').click();
  t.same(model, {
    branches: [{ when: { kind: 'compare', attribute: '', op: '==', value: '' }, serve: { kind: 'variant', name: 'red' } }],
    otherwise: { kind: 'default' },
  });
  t.equal(focused(), 'Branch 1 condition 1 attribute');
  t.same(legends(), ['Branch 1: if', 'Otherwise']);
  model.otherwise = { kind: 'variant', name: 'green' };
  byLabel<HTMLButtonElement>('Add branch').click();
  t.same(model.otherwise, { kind: 'variant', name: 'green' }, 'a last line written is kept');
});

t.test('moved up and down, the focus on the button pressed, or the other one at an end', async (t) => {
  const model: RuleModel = {
    branches: ['a', 'b', 'c'].map((a) => ({ when: when(a), serve: { kind: 'default' } })),
    otherwise: null,
  };
  const { byLabel, calls, labels } = drivePart((ed) => branchList(ed, model));
  t.notOk(labels().includes('Move up Branch 1'), 'the first has no Move up');
  t.notOk(labels().includes('Move down Branch 3'), 'the last has no Move down');
  byLabel<HTMLButtonElement>('Move down Branch 1').click();
  t.same(attributes(model), ['b', 'a', 'c']);
  t.equal(focused(), 'Move down Branch 2');
  byLabel<HTMLButtonElement>('Move down Branch 2').click();
  t.same(attributes(model), ['b', 'c', 'a']);
  t.same(calls.reshapes.at(-1), ['Move down Branch 3', 'Move up Branch 3']);
  t.equal(focused(), 'Move up Branch 3', 'at the bottom: Move up');
  byLabel<HTMLButtonElement>('Move up Branch 2').click();
  t.same(attributes(model), ['c', 'b', 'a']);
  t.equal(focused(), 'Move down Branch 1', 'at the top: Move down');
  byLabel<HTMLButtonElement>('Remove Branch 2').click();
  t.same(attributes(model), ['c', 'a']);
  t.equal(focused(), 'Add branch');
});

t.test('a condition added to a single one makes a group of both; a group adds its own', async (t) => {
  const model: RuleModel = { branches: [{ when: when('plan'), serve: { kind: 'default' } }], otherwise: null };
  const { byLabel, labels } = drivePart((ed) => branchList(ed, model));
  byLabel<HTMLButtonElement>('Add condition to Branch 1').click();
  t.same(model.branches[0]!.when, { kind: 'all', items: [when('plan'), { kind: 'compare', attribute: '', op: '==', value: '' }] });
  t.equal(focused(), 'Branch 1 condition 1.2 attribute');
  t.same(
    labels().filter((l) => l.startsWith('Add condition')),
    ['Add condition to Branch 1 condition 1'],
    "the group's own Add, not the branch's",
  );
});
