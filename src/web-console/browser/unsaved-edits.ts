// Edits not yet saved: a form of the page whose fields differ from what they held when the page was
// drawn. Leaving the page then asks first: in the app (a hash change) with the console's dialog, and
// when the tab is closed or reloaded with the browser's own beforeunload prompt.
import { askToConfirm } from './confirm-dialog.js';
import { kSavedEvent } from './dom.js';

/** Each form's fields as drawn (or as last saved), to compare with what they hold now. */
const drawn = new WeakMap<HTMLFormElement, string>();

/** A form's fields as one string: their count and values, so a list editor's added or removed box counts too. */
function fieldsOf(form: HTMLFormElement): string {
  const values: unknown[] = [];
  for (const el of Array.from(form.elements)) {
    if (el instanceof HTMLInputElement) values.push(el.type === 'checkbox' || el.type === 'radio' ? el.checked : el.value);
    else if (el instanceof HTMLSelectElement || el instanceof HTMLTextAreaElement) values.push(el.value);
  }
  return JSON.stringify(values);
}

/**
 * Marks a form whose fields are no data to keep (the sign-in form's address and password): typing in it
 * is no unsaved edit, and leaving it never asks.
 */
export const kNotAnEdit = { 'data-not-an-edit': true } as const;

/** The page's forms that hold edits; a search form (role=search: filters, not data) and one marked kNotAnEdit never do. */
function editedForms(): HTMLFormElement[] {
  return Array.from(document.querySelectorAll<HTMLFormElement>('#page form')).filter(
    (form) =>
      form.getAttribute('role') !== 'search' &&
      !form.hasAttribute('data-not-an-edit') &&
      drawn.has(form) &&
      drawn.get(form) !== fieldsOf(form),
  );
}

/** Remembers what every form of a page just drawn holds (shell's show calls it). */
export function rememberForms(root: ParentNode): void {
  for (const form of Array.from(root.querySelectorAll('form'))) drawn.set(form, fieldsOf(form));
  refresh();
}

/** A form's edits were saved (dom's onSubmit says so): what it holds now is no longer an unsaved edit. */
function markSaved(event: Event): void {
  if (!(event.target instanceof HTMLFormElement)) return;
  drawn.set(event.target, fieldsOf(event.target));
  refresh();
}

function warnBeforeUnload(event: BeforeUnloadEvent): void {
  event.preventDefault();
  // Chromium before 119 and Safari still need returnValue set to show the prompt.
  event.returnValue = '';
}

let armed = false;

/**
 * The beforeunload listener is there only while edits are unsaved: a page with one can be kept out of
 * the browser's back-forward cache, so a clean page must not carry it.
 */
function refresh(): void {
  const edited = editedForms().length > 0;
  if (edited === armed) return;
  armed = edited;
  if (edited) window.addEventListener('beforeunload', warnBeforeUnload);
  else window.removeEventListener('beforeunload', warnBeforeUnload);
}

/** A navigation the user confirmed: the next hash change is let through. */
let leaving = false;

/**
 * Whether the app may show the page the hash now names. With unsaved edits it puts the address back
 * (replaceState: no second hash change, the edits stay on screen) and asks; confirmed, it goes on to
 * `event.newURL` as a navigation of its own.
 */
export function mayLeave(event: HashChangeEvent): boolean {
  if (leaving) {
    leaving = false;
    return true;
  }
  const edited = editedForms();
  if (edited.length === 0) return true;
  history.replaceState(history.state, '', event.oldURL);
  const names = edited.map((form) => form.querySelector('legend')?.textContent ?? 'a form').join(', ');
  void askToConfirm({
    title: 'Leave this page?',
    text: `Your changes to ${names} are not saved. Leaving the page discards them.`,
    confirm: 'Leave page',
    danger: true,
  }).then((leave) => {
    if (!leave) return;
    leaving = true;
    location.href = event.newURL;
  });
  return false;
}

// Typing, a choice or a list's Add and Remove may start or undo an edit.
for (const type of ['input', 'change', 'click']) document.addEventListener(type, refresh);
document.addEventListener(kSavedEvent, markSaved);
