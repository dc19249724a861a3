// What a branch serves in the rule builder, alone (src/web-console/browser/outcome-editor.ts): a
// variant, the default variant or a split; a split's weights typed update every share's percentage in
// place, the focus left in the box; shares added and removed; bucketing by an attribute.
import '../../helpers/browser-dom.js';
import t from 'tap';
import { outcomeEditor } from '../../../src/web-console/browser/outcome-editor.js';
import type { Outcome } from '../../../src/web-console/browser/rule-model.js';
import { choose, drawnChoice, drivePart, focused, options, type } from '../../helpers/rule-editing.js';

function drive(outcome: Outcome | null, variants = ['red', 'green', 'blue']) {
  const held = { outcome };
  const part = drivePart(
    (ed) =>
      outcomeEditor(ed, held.outcome, 'Branch 1', (o) => {
        held.outcome = o;
      }),
    { variants },
  );
  return { held, ...part };
}
const percents = () => [...document.querySelectorAll('.rule-percent')].map((el) => el.textContent);

t.test('a variant, the default variant, or a split of the first two variants at 50 each', async (t) => {
  const { held, byLabel, calls } = drive({ kind: 'variant', name: 'gone' });
  t.same(
    options(byLabel('Branch 1 serves')),
    [
      ['v:gone', 'variant gone'],
      ['v:red', 'variant red'],
      ['v:green', 'variant green'],
      ['v:blue', 'variant blue'],
      ['split', 'a split of variants'],
      ['default', 'the default variant'],
    ],
    "a variant the form no longer has is kept as chosen (the checks name it), then the form's",
  );
  choose(byLabel('Branch 1 serves'), 'v:green');
  t.same(held.outcome, { kind: 'variant', name: 'green' });
  choose(byLabel('Branch 1 serves'), 'default');
  t.same(held.outcome, { kind: 'default' });
  choose(byLabel('Branch 1 serves'), 'split');
  t.same(held.outcome, {
    kind: 'split',
    by: null,
    buckets: [
      { variant: 'red', weight: 50 },
      { variant: 'green', weight: 50 },
    ],
  });
  t.same(calls.reshapes, ['Branch 1 serves', 'Branch 1 serves', 'Branch 1 serves']);
  t.same(percents(), ['50%', '50%']);
});

t.test("a split's weights: percentages follow each keystroke in place, the focus kept in the box", async (t) => {
  const { held, byLabel, calls } = drive({
    kind: 'split',
    by: null,
    buckets: [
      { variant: 'red', weight: 1 },
      { variant: 'blue', weight: 3 },
    ],
  });
  t.same(percents(), ['25%', '75%']);
  const weight = byLabel<HTMLInputElement>('Branch 1 share 2 weight');
  t.equal(weight.getAttribute('inputmode'), 'numeric');
  weight.focus();
  type(weight, '1');
  t.same(percents(), ['50%', '50%']);
  t.ok(document.activeElement === weight, 'the same box, not one drawn again');
  t.same(calls, { edits: 1, reshapes: [] });
  type(weight, '');
  t.equal(held.outcome?.kind === 'split' && held.outcome.buckets[1]!.weight, null, 'no weight: written without one');
  choose(byLabel('Branch 1 share 1 variant'), 'green');
  t.equal(held.outcome?.kind === 'split' && held.outcome.buckets[0]!.variant, 'green');
});

t.test('shares added and removed, bucketing by an attribute', async (t) => {
  const { held, byLabel } = drive({ kind: 'split', by: null, buckets: [{ variant: 'red', weight: 50 }] });
  byLabel<HTMLButtonElement>('Add share to Branch 1').click();
  t.same(held.outcome?.kind === 'split' && held.outcome.buckets[1], { variant: 'red', weight: 0 }, 'the first variant, weight 0');
  t.equal(focused(), 'Branch 1 share 2 weight', "the focus on the new share's weight");
  byLabel<HTMLButtonElement>('Remove Branch 1 share 1').click();
  t.same(held.outcome?.kind === 'split' && held.outcome.buckets, [{ variant: 'red', weight: 0 }]);
  t.equal(focused(), 'Add share to Branch 1');
  t.equal(document.querySelector('[aria-label="Branch 1 bucketing attribute"]'), null, 'by the key: no attribute box');
  choose(byLabel('Branch 1 buckets by'), 'attribute');
  t.equal(held.outcome?.kind === 'split' && held.outcome.by, '');
  type(byLabel('Branch 1 bucketing attribute'), 'company');
  t.equal(held.outcome?.kind === 'split' && held.outcome.by, 'company');
  choose(byLabel('Branch 1 buckets by'), 'key');
  t.equal(held.outcome?.kind === 'split' && held.outcome.by, null);
});

t.test('nothing written (null) shows as the default variant', async (t) => {
  const { byLabel } = drive(null);
  t.equal(drawnChoice(byLabel('Branch 1 serves')), 'default');
});
