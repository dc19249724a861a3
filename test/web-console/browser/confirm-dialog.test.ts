// The console's question before an irreversible step (src/web-console/browser/confirm-dialog.ts), in a
// DOM: a modal <dialog> named by its title, Cancel focused first, true only for the confirming button,
// the dialog removed and the focus given back either way.
import '../../helpers/browser-dom.js';
import t from 'tap';
import { askToConfirm } from '../../../src/web-console/browser/confirm-dialog.js';
import { h } from '../../../src/web-console/browser/dom.js';

const dialog = () => document.querySelector('dialog');
const button = (text: string) => Array.from(dialog()!.querySelectorAll('button')).find((b) => b.textContent === text)!;

/** How each dialog was shown: showModal (the page behind inert) or show (not). */
const shownAs: string[] = [];
const { show, showModal } = HTMLDialogElement.prototype;
HTMLDialogElement.prototype.showModal = function (this: HTMLDialogElement) {
  shownAs.push('modal');
  showModal.call(this);
};
HTMLDialogElement.prototype.show = function (this: HTMLDialogElement) {
  shownAs.push('modeless');
  show.call(this);
};

function opener(): HTMLButtonElement {
  const b = h('button', { type: 'button' }, 'Revoke…');
  document.getElementById('page')!.replaceChildren(b);
  b.focus();
  return b;
}

t.test('the dialog is modal, named by its title, says its text as text, and focuses Cancel', async (t) => {
  const back = opener();
  const answer = askToConfirm({
    title: 'Revoke token <ci>?',
    text: 'Clients using "ci" & co. are refused.',
    confirm: 'Revoke',
    danger: true,
  });
  const d = dialog()!;
  t.ok(d.open, 'shown');
  t.same(shownAs, ['modal'], "shown with showModal (happy-dom does not make the page inert: Chromium's tests see that)");
  t.equal(d.getAttribute('role'), 'alertdialog');
  t.equal(document.getElementById(d.getAttribute('aria-labelledby')!)!.textContent, 'Revoke token <ci>?');
  t.equal(document.getElementById(d.getAttribute('aria-describedby')!)!.textContent, 'Clients using "ci" & co. are refused.');
  t.equal(d.querySelectorAll('ci').length, 0, 'the title made no element');
  t.equal(document.activeElement, button('Cancel'), 'Cancel has the focus: a stray Enter does not take the step');
  t.equal(button('Revoke').className, 'danger');
  button('Cancel').click();
  t.equal(await answer, false);
  t.equal(dialog(), null, 'removed');
  t.equal(document.activeElement, back, 'the focus is back on the button that asked');
});

t.test('the confirming button answers true', async (t) => {
  opener();
  const answer = askToConfirm({ title: 'Rotate?', text: 'A new secret is made.', confirm: 'Rotate' });
  t.equal(button('Rotate').className, '', 'not marked dangerous unless asked');
  button('Rotate').click();
  t.equal(await answer, true);
  t.equal(dialog(), null);
});

t.test('Escape (the dialog closed with no answer) answers false', async (t) => {
  opener();
  const answer = askToConfirm({ title: 'Delete?', text: 'Gone for good.', confirm: 'Delete' });
  // What the browser does on Escape: a cancel event, then close with an empty returnValue.
  dialog()!.close();
  t.equal(await answer, false);
  t.equal(dialog(), null);
});

t.test('extra controls sit between the text and the buttons', async (t) => {
  opener();
  const extra = h('label', {}, 'Grace period ', h('input', { type: 'number', value: 60 }));
  const answer = askToConfirm({ title: 'Rotate?', text: 'Old secret works a while.', confirm: 'Rotate', extra });
  const form = dialog()!.querySelector('form')!;
  t.same(
    Array.from(form.children).map((el) => el.tagName),
    ['H2', 'P', 'LABEL', 'DIV'],
  );
  button('Cancel').click();
  t.equal(await answer, false);
});
