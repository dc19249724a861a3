// A modal question before an action that cannot be taken back (rotating or revoking a token): the
// browser's <dialog> shown with showModal(), so focus moves into it, the page behind is inert to the
// keyboard and the screen reader, and Escape cancels, with no focus trap of our own to get wrong.
import { h } from './dom.js';

export interface ConfirmOptions {
  /** The dialog's heading and accessible name: names what is acted on ("Revoke token ci-deploy?"). */
  title: string;
  /** What happens if the user confirms. */
  text: string;
  /** The confirming button's words ("Revoke"); Cancel is always offered, and has the focus first. */
  confirm: string;
  danger?: boolean;
  /** Controls shown between the text and the buttons (the rotation's grace period), read after confirming. */
  extra?: HTMLElement;
}

let dialogIds = 0;

/** Resolves true when the user confirms; false on Cancel or Escape. The dialog is removed either way. */
export function askToConfirm(options: ConfirmOptions): Promise<boolean> {
  const id = `confirm-${++dialogIds}`;
  const cancel = h('button', { type: 'button', class: 'secondary', value: 'cancel' }, 'Cancel');
  const ok = h('button', { type: 'submit', class: options.danger ? 'danger' : null, value: 'confirm' }, options.confirm);
  const dialog = h(
    'dialog',
    { role: 'alertdialog', 'aria-labelledby': `${id}-title`, 'aria-describedby': `${id}-text`, class: 'confirm' },
    h(
      'form',
      { method: 'dialog' },
      h('h2', { id: `${id}-title` }, options.title),
      h('p', { id: `${id}-text` }, options.text),
      options.extra ?? null,
      h('div', { class: 'row' }, ok, ' ', cancel),
    ),
  );
  // The element focused before, to give the keyboard back to where the user was.
  const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  cancel.addEventListener('click', () => dialog.close('cancel'));
  document.body.append(dialog);
  dialog.showModal();
  // Cancel first: a stray Enter does not take the irreversible step.
  cancel.focus();
  return new Promise((resolve) => {
    // Escape fires `cancel` then `close` with an empty returnValue; the form's submit sets 'confirm'.
    dialog.addEventListener('close', () => {
      dialog.remove();
      if (opener?.isConnected) opener.focus();
      resolve(dialog.returnValue === 'confirm');
    });
  });
}
