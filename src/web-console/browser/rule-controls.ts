// What the rule builder's parts share (rule-builder.ts draws them: condition-editor.ts,
// condition-value-editor.ts, outcome-editor.ts, branch-list.ts): the builder they edit for, and its
// controls. Each control is named for what it edits and where ("Branch 1 condition 1 attribute in
// production"), and that name less the `where` is its data-key, so that a structural edit, which draws
// the builder again, can put the focus back on the control used or on the one the edit made.
import { h } from './dom.js';

/** The controls' keys to focus after a structural edit, the first one drawn wins; null: none. */
export type Focus = string | readonly string[] | null;

/** The builder a part edits for; a test drives a part alone with its own. */
export interface RuleEditing {
  /** The state (" in production", or "") ending every control's accessible name. */
  readonly where: string;
  /** The variant names as the form has them now. */
  variants(): string[];
  /** The project's shared fragments, by name. */
  readonly fragments: readonly string[];
  /** A value was edited in place: the controls drawn still show the model, so only the JSON view and the checks follow. */
  edited(): void;
  /** The model changed shape: the builder is drawn again, the focus on the first control of `focus` that is there. */
  reshaped(focus: Focus): void;
}

function control<E extends HTMLElement>(ed: RuleEditing, el: E, name: string): E {
  el.setAttribute('aria-label', `${name}${ed.where}`);
  el.dataset.key = name;
  return el;
}

/** A text box; each keystroke goes to `onInput`, then to the JSON view. */
export function textBox(ed: RuleEditing, value: string, name: string, onInput: (v: string) => void): HTMLInputElement {
  const box = control(ed, h('input', { type: 'text', value }), name);
  box.addEventListener('input', () => {
    onInput(box.value);
    ed.edited();
  });
  return box;
}

/** A list of lines; each keystroke goes to `onInput`, then to the JSON view. */
export function lines(ed: RuleEditing, text: string, rows: number, name: string, onInput: (v: string) => void): HTMLTextAreaElement {
  const list = control(ed, h('textarea', { rows }, text), name);
  list.addEventListener('input', () => {
    onInput(list.value);
    ed.edited();
  });
  return list;
}

/**
 * A choice of `options` (value, text). A choice may change which controls follow it (an operator, a
 * value's type), so it is a structural edit, the focus kept on the choice.
 */
export function choice(
  ed: RuleEditing,
  options: readonly (readonly [string, string])[],
  value: string,
  name: string,
  onChange: (v: string) => void,
): HTMLSelectElement {
  const select = control(
    ed,
    h(
      'select',
      {},
      options.map(([v, text]) => h('option', { value: v, selected: v === value }, text)),
    ),
    name,
  );
  select.addEventListener('change', () => {
    onChange(select.value);
    ed.reshaped(name);
  });
  return select;
}

export function button(ed: RuleEditing, text: string, name: string, onClick: () => void): HTMLButtonElement {
  const b = control(ed, h('button', { type: 'button', class: 'secondary' }, text), name);
  b.addEventListener('click', onClick);
  return b;
}

/** Focuses the first control under `container` keyed by one of `focus`, in `focus`'s order. */
export function focusKeyed(container: HTMLElement, focus: Focus): void {
  const keyed = [...container.querySelectorAll<HTMLElement>('[data-key]')];
  for (const key of focus === null ? [] : typeof focus === 'string' ? [focus] : focus) {
    const target = keyed.find((el) => el.dataset.key === key);
    if (target !== undefined) {
      target.focus();
      return;
    }
  }
}
