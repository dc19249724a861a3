// A flag state's variants and targeting rule on the flag page (src/web-console/browser/variant-editor.ts),
// in a DOM with the API held by the test: nothing is sent until every value and the rule are JSON and
// the names distinct (the status line says which one is wrong, and where), and a valid save sends one
// PATCH of exactly the variants, default and rule, then offers Undo of the values the page showed.
import '../../helpers/browser-dom.js';
import t from 'tap';
import { variantsForm } from '../../../src/web-console/browser/variant-editor.js';
import type { FlagPageView, FlatState } from '../../../src/web-console/browser/views.js';
import { holdRequests, settle } from '../../helpers/browser-dom.js';

const status = () => document.getElementById('status')!;

/** The flag page's answer as far as the form reads it: the flag's id and name, and whether the user may edit. */
function pageOf(editFlags: boolean): FlagPageView {
  return { flag: { id: 'f1', name: 'Checkout <beta>' }, can: { editFlags } } as unknown as FlagPageView;
}

const kState = {
  variants: { red: '#f00', big: { rows: 5 } },
  defaultVariant: 'red',
  targeting: { if: [{ '==': [{ var: 'country' }, 'NL'] }, 'big', 'red'] },
} as unknown as FlatState;

function drawForm(env: string | null, state: FlatState = kState) {
  let reloads = 0;
  const form = variantsForm(pageOf(true), env, state, async () => {
    reloads++;
  });
  document.getElementById('page')!.replaceChildren(form);
  const box = (label: string) => form.querySelector<HTMLInputElement | HTMLTextAreaElement>(`[aria-label="${label}"], [name="${label}"]`)!;
  const edit = (label: string, value: string) => {
    box(label).value = value;
  };
  const button = (text: string) => Array.from(form.querySelectorAll('button')).find((b) => b.textContent === text)!;
  const submit = () => form.dispatchEvent(new Event('submit', { cancelable: true }));
  return { form, box, edit, button, submit, reloads: () => reloads };
}

t.test('the state is shown as drawn: one row per variant with its value as JSON, the default and the rule', async (t) => {
  const { box, form } = drawForm('production');
  t.equal(box('Variant 1 name in production').value, 'red');
  t.equal(box('Variant 1 value in production').value, '"#f00"');
  t.equal(box('Variant 2 value in production').value, '{"rows":5}');
  t.equal(box('defaultVariant').value, 'red');
  t.same(JSON.parse(box('targeting').value), kState.targeting);
  t.equal(form.querySelector('legend')!.textContent, 'Variants and rule in production');
});

t.test("a value that is not JSON is refused, with its row and JSON.parse's words; nothing is sent", async (t) => {
  const held = holdRequests();
  const { edit, submit } = drawForm(null);
  edit('Variant 2 value', '{rows: 5}');
  submit();
  await settle();
  t.equal(held.length, 0);
  t.match(status().textContent, /^Variant 2's value is not JSON \(.+\): write a string in quotes/);
  t.equal(status().className, 'status error');
});

t.test('two variants of one name are refused by name; nothing is sent', async (t) => {
  const held = holdRequests();
  const { edit, submit } = drawForm(null);
  edit('Variant 2 name', 'red');
  submit();
  await settle();
  t.equal(held.length, 0);
  t.equal(status().textContent, 'Two variants are named "red": each needs its own name; nothing was saved.');
});

t.test('a rule that is not JSON, or not an object, is refused; nothing is sent', async (t) => {
  const held = holdRequests();
  const { edit, submit } = drawForm(null);
  edit('targeting', '{"if": [');
  submit();
  await settle();
  t.match(status().textContent, /^The rule is not JSON \(.+\); nothing was saved\.$/);
  edit('targeting', '["red"]');
  submit();
  await settle();
  t.equal(status().textContent, 'The rule must be a JSON object such as {"if": [...]}; nothing was saved.');
  t.equal(held.length, 0);
});

t.test(
  'a valid save sends one PATCH of the variants, default and rule in its environment, then offers Undo of what was shown',
  async (t) => {
    const held = holdRequests();
    const { edit, button, submit, reloads } = drawForm('prod & eu');
    button('Add variant in prod & eu').click();
    edit('Variant 3 name in prod & eu', '__proto__');
    edit('Variant 3 value in prod & eu', 'true');
    edit('defaultVariant', '');
    edit('targeting', '');
    submit();
    await settle();
    t.equal(held.length, 1);
    t.equal(held[0]!.method, 'PATCH');
    t.equal(held[0]!.url, '/console/api/flags/f1?env=prod%20%26%20eu');
    t.same(JSON.parse(held[0]!.body!), {
      variants: { red: '#f00', big: { rows: 5 }, ['__proto__']: true },
      defaultVariant: null,
      targeting: {},
    });
    t.match(held[0]!.body, '"__proto__":true', 'the name is sent as data, as written');
    held[0]!.answer({ status: 200, body: { changed: true } });
    await settle();
    t.equal(reloads(), 1, 'the page is read again');
    t.match(status().textContent, 'Saved variants and rule in prod & eu of Checkout <beta>.');
    const undo = Array.from(status().querySelectorAll('button')).find((b) => b.textContent === 'Undo')!;
    undo.click();
    await settle();
    t.equal(held.length, 2);
    t.same(JSON.parse(held[1]!.body!), kState, 'Undo sends the variants, default and rule the page showed');
  },
);

t.test('removing every variant saves a boolean flag again: only the empty variants are sent', async (t) => {
  const held = holdRequests();
  const { form, submit } = drawForm(null);
  for (const remove of Array.from(form.querySelectorAll<HTMLButtonElement>('button[aria-label^="Remove variant"]')).reverse())
    remove.click();
  t.equal(form.querySelectorAll('tbody tr').length, 0);
  submit();
  await settle();
  t.same(JSON.parse(held[0]!.body!), { variants: {} });
});

t.test('a user who may not edit sees the form disabled and no Save button', async (t) => {
  const form = variantsForm(pageOf(false), null, kState, async () => {});
  t.equal(form.querySelector('fieldset')!.disabled, true);
  t.notOk(Array.from(form.querySelectorAll('button')).some((b) => b.textContent?.startsWith('Save')));
});
