// Edits not yet saved (src/web-console/browser/unsaved-edits.ts), in a DOM: a form whose fields differ
// from what they held when drawn makes leaving ask (the console's dialog for the app's own navigation,
// the browser's prompt on unload); search forms, forms marked as no edit, saved forms and forms whose
// change became a change request never do.
import '../../helpers/browser-dom.js';
import t from 'tap';
import { h, kRequestOpenedEvent, kSavedEvent, newPageStatus, onSubmit, RequestOpened } from '../../../src/web-console/browser/dom.js';
import { kNotAnEdit, mayLeave, rememberForms } from '../../../src/web-console/browser/unsaved-edits.js';
import { kConsoleUrl, settle } from '../../helpers/browser-dom.js';

const page = () => document.getElementById('page')!;
const dialog = () => document.querySelector('dialog');

/** Draws a page of `forms` as shell.ts's show does, and returns its first text box per form. */
function draw(...forms: HTMLFormElement[]): HTMLInputElement[] {
  page().replaceChildren(...forms);
  rememberForms(page());
  return forms.map((f) => f.querySelector('input')!);
}

function form(legend: string, props: Record<string, string | boolean> = {}): HTMLFormElement {
  return h('form', props, h('fieldset', {}, h('legend', {}, legend), h('input', { type: 'text', value: 'drawn' })));
}

/** Types into `box` as a user does: the value, then the input event that bubbles to the document. */
function type(box: HTMLInputElement, value: string): void {
  box.value = value;
  box.dispatchEvent(new Event('input', { bubbles: true }));
}

/** A hash change from the flag page to the home page, as the browser would fire it. */
function hashChange(): HashChangeEvent {
  return Object.assign(new Event('hashchange'), { oldURL: `${kConsoleUrl}#/flags/f1`, newURL: `${kConsoleUrl}#/` }) as HashChangeEvent;
}

/** Whether closing the tab now would ask: the beforeunload listener is there and cancels. */
function unloadAsks(): boolean {
  const event = new Event('beforeunload', { cancelable: true });
  window.dispatchEvent(event);
  return event.defaultPrevented;
}

t.test('a page as drawn lets the user leave without asking', async (t) => {
  draw(form('Flag state'));
  t.equal(mayLeave(hashChange()), true);
  t.equal(dialog(), null);
  t.equal(unloadAsks(), false);
});

t.test('an edit makes leaving ask, naming the form; Cancel keeps the page and its edit', async (t) => {
  const [box] = draw(form('Flag state'), form('Tags'));
  location.href = `${kConsoleUrl}#/`;
  type(box!, 'typed');
  t.equal(unloadAsks(), true, 'closing the tab asks');
  t.equal(mayLeave(hashChange()), false, 'the app does not go on');
  t.equal(location.href, `${kConsoleUrl}#/flags/f1`, 'the address is put back to the page with the edit');
  t.equal(dialog()?.querySelector('p')?.textContent, 'Your changes to Flag state are not saved. Leaving the page discards them.');
  Array.from(dialog()!.querySelectorAll('button'))
    .find((b) => b.textContent === 'Cancel')!
    .click();
  await settle();
  t.equal(location.href, `${kConsoleUrl}#/flags/f1`, 'still on the page');
  t.equal(box!.value, 'typed');
  t.equal(mayLeave(hashChange()), false, 'and leaving still asks');
  dialog()!.close();
  await settle();
});

t.test('Leave page goes on to the address asked for, and that navigation is let through', async (t) => {
  const [box] = draw(form('Flag state'));
  type(box!, 'typed');
  t.equal(mayLeave(hashChange()), false);
  Array.from(dialog()!.querySelectorAll('button'))
    .find((b) => b.textContent === 'Leave page')!
    .click();
  await settle();
  t.equal(location.href, `${kConsoleUrl}#/`);
  t.equal(mayLeave(hashChange()), true, 'the hash change the leaving made is let through');
});

t.test('typing back what was drawn is no edit', async (t) => {
  const [box] = draw(form('Flag state'));
  type(box!, 'typed');
  t.equal(unloadAsks(), true);
  type(box!, 'drawn');
  t.equal(unloadAsks(), false, 'the prompt is gone again (the back-forward cache keeps the page)');
  t.equal(mayLeave(hashChange()), true);
});

t.test('a search form and a form marked as no edit never hold edits', async (t) => {
  const [search, signIn] = draw(form('Filter', { role: 'search' }), form('Sign in', kNotAnEdit));
  type(search!, 'tag:beta');
  type(signIn!, 'secret');
  t.equal(mayLeave(hashChange()), true);
  t.equal(unloadAsks(), false);
});

t.test('a form whose save succeeded holds its saved values, not an edit', async (t) => {
  const [box] = draw(form('Flag state'));
  type(box!, 'saved value');
  box!.form!.dispatchEvent(new Event(kSavedEvent, { bubbles: true }));
  t.equal(unloadAsks(), false);
  t.equal(mayLeave(hashChange()), true);
  type(box!, 'edited after saving');
  t.equal(mayLeave(hashChange()), false, 'an edit after the save asks again');
  dialog()!.close();
  await settle();
});

t.test('a form whose change became a change request holds no edit: the request holds it', async (t) => {
  const held = form('Name');
  const opened = { id: 'chr_1', summary: 'flag.rename', title: 'Rename checkout-v3', approvals: [], required: 1 };
  held.addEventListener(
    'submit',
    onSubmit(async () => Promise.reject(new RequestOpened(opened, false))),
  );
  // What app.ts's route does first on the request-opened event, before it reads the page to draw it again.
  const routeBegins = () => newPageStatus();
  window.addEventListener(kRequestOpenedEvent, routeBegins);
  t.teardown(() => window.removeEventListener(kRequestOpenedEvent, routeBegins));
  const [box] = draw(held);
  type(box!, 'checkout-v4');
  t.equal(mayLeave(hashChange()), false, 'typed, not yet sent: leaving asks');
  dialog()!.close();
  await settle();
  held.dispatchEvent(new Event('submit', { cancelable: true }));
  await settle();
  // The page is drawn again later (app.ts routes on the request-opened event); until then the typed
  // name is still on screen, and the status line's link to the request must lead there without asking.
  t.equal(box!.value, 'checkout-v4', 'the form not drawn again yet');
  t.match(document.getElementById('status')!.textContent, /Not applied: this change needs approval/);
  t.equal(mayLeave(hashChange()), true, 'leaving does not ask');
  t.equal(unloadAsks(), false);
});
