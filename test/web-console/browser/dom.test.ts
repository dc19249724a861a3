// The console's element building (src/web-console/browser/dom.ts) in a DOM: text is always text, never
// markup; attributes carry values as they are; the list editors keep items exactly.
import '../../helpers/browser-dom.js';
import t from 'tap';
import {
  ApiError,
  api,
  errorText,
  h,
  listEditor,
  newPage,
  pageLeft,
  pairsEditor,
  setCsrfToken,
} from '../../../src/web-console/browser/dom.js';
import { holdRequests } from '../../helpers/browser-dom.js';

const kHostile = `<img src=x onerror="alert(1)"> & "quoted" 'single' </b>`;

t.test('h puts a name with markup characters in as text: no element is made from it', async (t) => {
  const cell = h('td', {}, kHostile);
  t.equal(cell.textContent, kHostile);
  t.equal(cell.children.length, 0, 'no <img> or <b> element was made');
  t.equal(cell.innerHTML, '&lt;img src=x onerror="alert(1)"&gt; &amp; "quoted" \'single\' &lt;/b&gt;');
  const row = h('tr', {}, h('td', {}, 'a'), [h('td', {}, 'b'), null, false, undefined], 3);
  t.equal(row.outerHTML, '<tr><td>a</td><td>b</td>3</tr>', 'nested children, arrays and numbers; null, false and undefined left out');
});

t.test('h sets attributes to their values as they are, quotes and angle brackets included', async (t) => {
  const link = h('a', { href: '#/flags/a"b', title: kHostile, 'aria-label': null, hidden: false, download: true });
  t.equal(link.getAttribute('href'), '#/flags/a"b');
  t.equal(link.getAttribute('title'), kHostile);
  t.notOk(link.hasAttribute('aria-label'), 'null leaves the attribute out');
  t.notOk(link.hasAttribute('hidden'), 'false leaves the attribute out');
  t.equal(link.getAttribute('download'), '', 'true sets an empty attribute');
  const box = h('input', { type: 'text', value: kHostile });
  t.equal(box.value, kHostile, 'value is set as the property');
  const check = h('input', { type: 'checkbox', checked: true });
  t.equal(check.checked, true);
});

t.test('h adds on* properties as event listeners, not as attributes', async (t) => {
  let clicks = 0;
  const button = h('button', { type: 'button', onclick: () => clicks++ }, 'Go');
  t.notOk(button.hasAttribute('onclick'));
  button.click();
  t.equal(clicks, 1);
});

t.test('listEditor keeps items exactly (commas, blanks) and counts added, edited and emptied boxes as changes', async (t) => {
  const editor = listEditor('Cohorts', 'Cohort', ['a, b', ' padded ', kHostile]);
  document.getElementById('page')!.replaceChildren(editor.element);
  const boxes = () => Array.from(editor.element.querySelectorAll('input'));
  t.same(
    boxes().map((b) => [b.value, b.getAttribute('aria-label')]),
    [
      ['a, b', 'Cohort 1'],
      [' padded ', 'Cohort 2'],
      [kHostile, 'Cohort 3'],
    ],
  );
  t.same(editor.items(), ['a, b', ' padded ', kHostile]);
  t.equal(editor.changed(), false);
  const add = Array.from(editor.element.querySelectorAll('button')).find((b) => b.textContent === 'Add cohort')!;
  add.click();
  t.equal(boxes().length, 4);
  t.equal(editor.changed(), false, 'an added box left empty is no item');
  boxes()[3]!.value = 'new';
  boxes()[3]!.dispatchEvent(new Event('input'));
  t.same(editor.items(), ['a, b', ' padded ', kHostile, 'new']);
  t.equal(editor.changed(), true);
  editor.element.querySelector<HTMLButtonElement>('button[aria-label="Remove cohort 1"]')!.click();
  t.same(editor.items(), [' padded ', kHostile, 'new']);
  t.same(
    boxes().map((b) => b.getAttribute('aria-label')),
    ['Cohort 1', 'Cohort 2', 'Cohort 3'],
    'the rows are numbered again',
  );
});

t.test('pairsEditor leaves out a row without a name', async (t) => {
  const editor = pairsEditor('Context', 'Attribute', [
    ['country', 'NL'],
    ['', 'orphan'],
  ]);
  t.same(editor.pairs(), [{ name: 'country', value: 'NL' }]);
  t.equal(editor.element.querySelectorAll('input').length, 4);
});

t.test('api sends the CSRF token on a change, not on a read, and turns an error answer into ApiError', async (t) => {
  const held = holdRequests();
  setCsrfToken('csrf-1');
  const read = api<{ ok: boolean }>('GET', 'home');
  const change = api('PATCH', 'flags/f1', { enabled: true });
  t.equal(held.length, 2);
  t.equal(held[0]!.url, '/console/api/home');
  t.notOk('X-Flagwire-CSRF' in held[0]!.headers, 'a read carries no CSRF token');
  t.equal(held[1]!.method, 'PATCH');
  t.equal(held[1]!.headers['X-Flagwire-CSRF'], 'csrf-1');
  t.equal(held[1]!.headers['Content-Type'], 'application/json');
  t.equal(held[1]!.body, '{"enabled":true}');
  held[0]!.answer({ status: 200, body: { ok: true } });
  t.same(await read, { ok: true });
  held[1]!.answer({ status: 409, body: { error: 'Conflict', detail: 'Flag <b> changed' } });
  const err = await change.catch((e: unknown) => e);
  t.ok(err instanceof ApiError);
  t.equal((err as ApiError).status, 409);
  t.equal(errorText(err), 'Conflict: Flag <b> changed');
});

t.test('a new page abandons the reads of the one before, never a change already sent', async (t) => {
  const held = holdRequests();
  const read = api('GET', 'projects/p1').catch((e: unknown) => e);
  const change = api<{ changed: boolean }>('PATCH', 'flags/f1', { enabled: false });
  newPage();
  t.ok(pageLeft(await read), 'the read rejects as a page left');
  held[1]!.answer({ status: 200, body: { changed: true } });
  t.same(await change, { changed: true }, "the change's answer still arrives");
  t.notOk(pageLeft(new ApiError(404, 'Not found', 'x')), 'an error answer is no page left');
});
