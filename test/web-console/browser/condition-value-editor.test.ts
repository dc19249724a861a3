// A comparison's operator and value in the rule builder, alone (src/web-console/browser/
// condition-value-editor.ts): what a new operator keeps of the value, and each operator's controls
// writing the value typed, in its type, into the condition; a type chosen is a structural edit that
// keeps the focus, a value typed is not.
import '../../helpers/browser-dom.js';
import t from 'tap';
import { h } from '../../../src/web-console/browser/dom.js';
import { valueControls, withOp } from '../../../src/web-console/browser/condition-value-editor.js';
import type { Compare } from '../../../src/web-console/browser/rule-model.js';
import { choose, drawnChoice, drivePart, focused, options, type } from '../../helpers/rule-editing.js';

const place = 'Branch 1 condition 1';
const drive = (c: Compare) => drivePart((ed) => h('div', {}, valueControls(ed, c, place)), { where: ' in production' });

t.test('a new operator keeps the attribute and what of the value still fits', async (t) => {
  const eq: Compare = { kind: 'compare', attribute: 'plan', op: '==', value: 'gold' };
  t.same(withOp(eq, 'in'), { kind: 'compare', attribute: 'plan', op: 'in', value: ['gold'] }, 'a value becomes the one item');
  t.same(withOp({ kind: 'compare', attribute: 'c', op: 'in', value: ['NL', 'BE'] }, '!='), {
    kind: 'compare',
    attribute: 'c',
    op: '!=',
    value: 'NL',
  });
  t.same(withOp({ kind: 'compare', attribute: 'c', op: 'in', value: [3] }, 'ends_with').value, '3', 'the first item as text');
  t.same(withOp(eq, 'sem_ver'), { kind: 'compare', attribute: 'plan', op: 'sem_ver', semVer: '>=', value: 'gold' });
  t.equal(withOp({ kind: 'compare', attribute: 'age', op: '==', value: 18 }, '<').value, 18);
  t.ok(Number.isNaN(withOp(eq, '>=').value), 'text that is no number stays NaN, for the checks to name');
  t.ok(Number.isNaN(withOp({ kind: 'compare', attribute: 'a', op: '==', value: '' }, '<').value), 'nothing typed is no number');
});

t.test('equals: the value typed in its type, the type chosen', async (t) => {
  const c: Compare = { kind: 'compare', attribute: 'plan', op: '==', value: 'gold' };
  const part = drive(c);
  t.same(part.labels(), [`${place} value in production`, `${place} value type in production`], 'named with the state');
  t.equal(part.byLabel<HTMLInputElement>(`${place} value in production`).value, 'gold');
  type(part.byLabel(`${place} value in production`), '12');
  t.equal(c.value, '12', 'typed as text, the type shown');
  t.same(part.calls, { edits: 1, reshapes: [] }, 'a value typed is written, nothing drawn again');
  choose(part.byLabel(`${place} value type in production`), 'number');
  t.equal(c.value, 12, 'the text kept as a number');
  t.same(part.calls.reshapes, [`${place} value type`], 'drawn again, the focus on the type');
  t.equal(focused(), `${place} value type in production`);
  t.equal(drawnChoice(part.byLabel(`${place} value type in production`)), 'number', 'drawn again as a number');
  type(part.byLabel(`${place} value in production`), 'twelve');
  t.ok(Number.isNaN(c.value), 'a number box holding no number');
  choose(part.byLabel(`${place} value type in production`), 'boolean');
  t.equal(c.value, true);
  const value = part.byLabel<HTMLSelectElement>(`${place} value in production`);
  t.same(options(value), [
    ['true', 'true'],
    ['false', 'false'],
  ]);
  choose(value, 'false');
  t.equal(c.value, false);
  choose(part.byLabel(`${place} value type in production`), 'text');
  t.equal(c.value, 'false', 'back to text, as shown');
});

t.test('is one of: a value a line, blank lines left out, the items typed as numbers on request', async (t) => {
  const c: Compare = { kind: 'compare', attribute: 'country', op: 'in', value: ['NL', 'BE', 'DE'] };
  const part = drive(c);
  const list = part.byLabel<HTMLTextAreaElement>(`${place} values, one a line in production`);
  t.equal(list.value, 'NL\nBE\nDE');
  t.equal(list.getAttribute('rows'), '3', 'a row per item');
  type(list, 'NL\n\nFR\n');
  t.same(c.value, ['NL', 'FR']);
  t.equal(part.calls.edits, 1);
  type(list, '1\n2');
  choose(part.byLabel(`${place} values type in production`), 'number');
  t.same(c.value, [1, 2]);
  type(part.byLabel(`${place} values, one a line in production`), '3\nx');
  t.same(c.value.length, 2);
  t.equal(c.value[0], 3);
  t.ok(Number.isNaN(c.value[1]), 'a line that is no number, for the checks to name');
});

t.test('version: the comparison chosen and the version typed', async (t) => {
  const c: Compare = { kind: 'compare', attribute: 'v', op: 'sem_ver', semVer: '>=', value: '2.0.0' };
  const part = drive(c);
  const comparison = part.byLabel<HTMLSelectElement>(`${place} version comparison in production`);
  t.same(
    options(comparison).map(([v]) => v),
    ['=', '!=', '<', '<=', '>', '>=', '^', '~'],
  );
  choose(comparison, '^');
  t.equal(c.op === 'sem_ver' && c.semVer, '^');
  type(part.byLabel(`${place} version in production`), '3.1.0');
  t.equal(c.value, '3.1.0');
});

t.test('starts with and less than: one box, text or a number', async (t) => {
  const text: Compare = { kind: 'compare', attribute: 'email', op: 'starts_with', value: 'admin' };
  type(drive(text).byLabel(`${place} value in production`), '42');
  t.equal(text.value, '42', 'text stays text');
  const less: Compare = { kind: 'compare', attribute: 'age', op: '<', value: 18 };
  const part = drive(less);
  t.equal(part.byLabel<HTMLInputElement>(`${place} number in production`).value, '18');
  type(part.byLabel(`${place} number in production`), '21');
  t.equal(less.value, 21);
  type(part.byLabel(`${place} number in production`), ' ');
  t.ok(Number.isNaN(less.value), 'a blank box is no number, not 0');
});
