// One part of the console's rule builder driven alone (src/web-console/browser/rule-controls.ts
// RuleEditing): the test's builder records each value edit and each structural edit with the focus it
// asks for, and on a structural edit draws the part again into #page and focuses as the real builder
// does, so a test goes on through the page as a person would. Import browser-dom.js first.
import { type Focus, focusKeyed, type RuleEditing } from '../../src/web-console/browser/rule-controls.js';

export interface PartOptions {
  where?: string;
  variants?: string[];
  fragments?: string[];
}

export interface DrivenPart {
  /** Value edits (the JSON view written, nothing drawn) and structural edits, by the focus each asked for. */
  readonly calls: { edits: number; reshapes: Focus[] };
  byLabel<E extends HTMLElement>(label: string): E;
  /** Every accessible name drawn, in order. */
  labels(): string[];
}

export function drivePart(draw: (ed: RuleEditing) => HTMLElement | HTMLElement[], options: PartOptions = {}): DrivenPart {
  const page = document.getElementById('page')!;
  const calls = { edits: 0, reshapes: [] as Focus[] };
  const redraw = (focus: Focus) => {
    const drawn = draw(ed);
    page.replaceChildren(...(Array.isArray(drawn) ? drawn : [drawn]));
    focusKeyed(page, focus);
  };
  const ed: RuleEditing = {
    where: options.where ?? '',
    variants: () => options.variants ?? ['red', 'green'],
    fragments: options.fragments ?? [],
    edited: () => {
      calls.edits++;
    },
    reshaped: (focus) => {
      calls.reshapes.push(focus);
      redraw(focus);
    },
  };
  redraw(null);
  return {
    calls,
    byLabel: <E extends HTMLElement>(label: string) => {
      const found = page.querySelector<E>(`[aria-label="${label}"]`);
      if (found === null) throw new Error(`nothing is labelled "${label}"`);
      return found;
    },
    labels: () => [...page.querySelectorAll('[aria-label]')].map((el) => el.getAttribute('aria-label')!),
  };
}

/**
 * The accessible name of the control that has the focus. Compared as a name, not as an element: tap
 * prints an unequal element whole, and a happy-dom element reaches its whole window (4 GB, then out of memory).
 */
export function focused(): string | null {
  return document.activeElement?.getAttribute('aria-label') ?? null;
}

export function type(el: HTMLInputElement | HTMLTextAreaElement, value: string): void {
  el.value = value;
  el.dispatchEvent(new Event('input', { bubbles: true }));
}

export function choose(el: HTMLSelectElement, value: string): void {
  el.value = value;
  el.dispatchEvent(new Event('change', { bubbles: true }));
}

/**
 * The option a select was drawn with (its `selected` attribute, which a browser honours). happy-dom
 * 21.0.4 reads such a select's value wrong (five options, the last marked: selectedIndex 1), so a test
 * asks the markup.
 */
export function drawnChoice(el: HTMLSelectElement): string | undefined {
  return [...el.options].find((o) => o.hasAttribute('selected'))?.value;
}

/** A select's options as (value, text). */
export function options(el: HTMLSelectElement): [string, string][] {
  return [...el.options].map((o) => [o.value, o.textContent ?? '']);
}
