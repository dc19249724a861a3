// Browser side of the web console: building elements (text always as text nodes, never as markup) and
// calling /console/api with the session's CSRF token.
import { formatTime } from '../../words/time.js';
import type { OpenedRequest } from './views.js';

type Child = Node | string | number | null | undefined | false;
type Props = Record<string, string | number | boolean | null | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'value' && 'value' in el) (el as HTMLInputElement).value = String(value);
    else if (key === 'checked') (el as HTMLInputElement).checked = Boolean(value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'object' ? child : String(child));
  }
  return el;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
  ) {
    super(`${title}: ${detail}`);
  }
}

/**
 * A change the approvals gate did not apply but turned into a change request (the console's 202
 * `{changeRequest}`, docs/web-console.md: Approvals). Thrown by api() so that no caller reads the
 * request as the change it asked for; sayError says what happened and draws the page again.
 */
export class RequestOpened extends Error {
  constructor(
    readonly request: OpenedRequest,
    /** Whether the change edited the user's pending request rather than opening one (the 202's `edited`). */
    readonly edited: boolean,
  ) {
    super(`Change request ${request.id} ${edited ? 'edited' : 'opened'}`);
  }
}

let csrfToken = '';
export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/** Called when an answer says the session is gone (expired, or signed out elsewhere). */
let onSignedOut: () => void = () => {};
export function whenSignedOut(fn: () => void): void {
  onSignedOut = fn;
}

/**
 * The page shown, or being loaded: a navigation aborts the one before (newPage), so an answer that comes
 * after the user went on is never drawn over the page they asked for since (its read rejects: pageLeft).
 */
let pageLoad = new AbortController();

/** A navigation began (router.ts): the reads of the page before it are abandoned. */
export function newPage(): void {
  pageLoad.abort();
  pageLoad = new AbortController();
}

/** Whether `err` is a read abandoned because the user left its page: nothing to show, the next page draws itself. */
export function pageLeft(err: unknown): boolean {
  return err instanceof DOMException && err.name === 'AbortError';
}

/**
 * `load` for the page now shown, called later (a reload after a save): it does nothing once the user has
 * left the page, so a save answered after they went on does not draw its page over the next.
 */
export function onThisPage<A extends unknown[]>(load: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  const { signal } = pageLoad;
  return async (...args) => {
    if (!signal.aborted) await load(...args);
  };
}

/** `ifMatch`: the version of what it changes that the page read (a flag's ETag): refused (412) if it changed since. */
export async function api<T>(method: string, path: string, body?: unknown, ifMatch?: string): Promise<T> {
  const headers: Record<string, string> = {};
  if (method !== 'GET') headers['X-Flagwire-CSRF'] = csrfToken;
  if (ifMatch !== undefined) headers['If-Match'] = ifMatch;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`/console/api/${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    // A read belongs to its page; a change is never abandoned halfway: its answer says whether it was made.
    signal: method === 'GET' ? pageLoad.signal : null,
  });
  const data = (await res.json().catch(() => null)) as
    | (T & { error?: string; detail?: string; changeRequest?: OpenedRequest; edited?: boolean })
    | null;
  if (res.status === 202 && data?.changeRequest !== undefined) throw new RequestOpened(data.changeRequest, data.edited === true);
  if (!res.ok) {
    const error = new ApiError(res.status, data?.error ?? `HTTP ${res.status}`, data?.detail ?? '');
    if (res.status === 401 && data?.error === 'Not signed in') onSignedOut();
    throw error;
  }
  return data as T;
}

/**
 * The live status line under the header: what the last action did, or why it was refused. It belongs to
 * the page it was said on: a navigation clears it (newPageStatus), unless it was said for that page.
 */
export function say(message: string, kind: 'ok' | 'error' = 'ok'): void {
  statusLine(`status ${kind}`, message);
}

/** Says `message` with a button after it that runs `action` (Undo); a failure of the action is said in its place. */
export function sayWithAction(message: string, label: string, action: () => Promise<void>): void {
  say(message);
  const button = h('button', { type: 'button', class: 'secondary' }, label);
  button.addEventListener('click', () => {
    button.disabled = true;
    action().catch(sayError);
  });
  document.getElementById('status')!.append(' ', button);
}

function statusLine(className: string, text: string): void {
  const status = document.getElementById('status')!;
  status.className = className;
  status.textContent = text;
}

/** What an action said just before it navigated (a flag created, then its page), for the page it leads to. */
let forNextPage: (() => void) | null = null;

/** Says `message` on the page the next navigation shows (call it before changing location.hash). */
export function sayOnNextPage(message: string): void {
  forNextPage = () => say(message);
}

/** A navigation began: the status line shows only what was said for the new page, so no message outlives its page. */
export function newPageStatus(): void {
  const sayIt = forNextPage;
  forNextPage = null;
  if (sayIt === null) statusLine('status', '');
  else sayIt();
}

/**
 * Dispatched on window when a change became a change request: the app draws the page the address names
 * again (app.ts listens), so it shows the state as it still is and the request beside it.
 */
export const kRequestOpenedEvent = 'flagwire-request-opened';

/** "Not applied: sent for approval", the request opened or edited, with its link, on the page drawn again. */
function requestOpened(request: OpenedRequest, edited: boolean): void {
  forNextPage = () => {
    statusLine(
      'status ok',
      `Not applied: this change needs approval. Change request ${edited ? 'edited' : 'opened'}: ${request.title} (${request.approvals.length} of ${request.required} approvals).`,
    );
    document.getElementById('status')!.append(' ', h('a', { href: `#/requests/${request.id}` }, 'Open the change request'));
  };
  window.dispatchEvent(new Event(kRequestOpenedEvent));
}

/** An error as the user reads it: the server's title and detail, or what the browser said. */
export function errorText(err: unknown): string {
  return err instanceof ApiError ? `${err.title}: ${err.detail}` : String(err);
}

/** Says why an action failed; a change that became a change request is no failure (requestOpened). */
export function sayError(err: unknown): void {
  if (err instanceof RequestOpened) requestOpened(err.request, err.edited);
  else if (!pageLeft(err)) say(errorText(err), 'error');
}

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * A time as the reader's clock reads it (`2026-11-24 17:05:09`, local), in a <time> whose `datetime`
 * is the exact instant (UTC) and whose tooltip says it in UTC.
 */
export function timeElement(ms: number): HTMLTimeElement {
  const d = new Date(ms);
  const local = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return h('time', { datetime: d.toISOString(), title: formatTime(ms) }, local);
}

/** A list's editor: its element, the items as they are now, and whether the user changed any. */
export interface ListEditor {
  readonly element: HTMLElement;
  items(): string[];
  changed(): boolean;
}

let listIds = 0;

/** How `rowsEditor` shows a row and makes a new one. */
interface RowsOptions<R> {
  /** The row's text boxes, each writing what is typed into `row`. */
  boxes(row: R, n: number): HTMLInputElement[];
  /** Put between a row's boxes (" = " for a name and its value). */
  between: string;
  blank(): R;
  /** Shown in place of the rows when there are none. */
  none: string;
}

/**
 * Rows of text boxes with Remove and Add buttons, editing `rows` in place; `label` names the whole,
 * `item` each row ("Remove cohort 2", "Add cohort"). Focus follows the row removed or added.
 */
function rowsEditor<R>(label: string, item: string, rows: R[], options: RowsOptions<R>): HTMLElement {
  const labelId = `list-${++listIds}`;
  const list = h('ul', { class: 'list-items' });
  const render = (focus: number | null = null) => {
    list.replaceChildren(
      ...rows.map((row, i) => {
        const remove = h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            'aria-label': `Remove ${item.toLowerCase()} ${i + 1}`,
            onclick: () => {
              rows.splice(i, 1);
              render(Math.min(i, rows.length - 1));
            },
          },
          'Remove',
        );
        const boxes = options.boxes(row, i + 1).flatMap((box, b) => (b === 0 ? [box] : [options.between, box]));
        return h('li', {}, ...boxes, ' ', remove);
      }),
    );
    if (rows.length === 0) list.append(h('li', { class: 'muted' }, options.none));
    if (focus !== null && focus >= 0) list.children[focus]?.querySelector('input')?.focus();
  };
  render();
  const add = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      onclick: () => {
        rows.push(options.blank());
        render(rows.length - 1);
      },
    },
    `Add ${item.toLowerCase()}`,
  );
  return h('div', { class: 'list', role: 'group', 'aria-labelledby': labelId }, h('span', { id: labelId }, label), list, add);
}

/** A text box for `rows`' editor whose typing goes to `write`. */
function rowBox(value: string, label: string, write: (value: string) => void): HTMLInputElement {
  const box = h('input', { type: 'text', value, 'aria-label': label });
  box.addEventListener('input', () => write(box.value));
  return box;
}

/**
 * One text box per item, with Remove and Add buttons: an item is kept exactly (commas, blanks, even
 * characters a text box cannot show) until the user edits that very box, so saving one change never
 * rewrites the others. `label` names the list, `item` each box ("Cohort 2", "Remove cohort 2").
 * A box left empty is no item.
 */
export function listEditor(label: string, item: string, initial: readonly string[]): ListEditor {
  const rows = initial.map((value) => ({ value }));
  const element = rowsEditor(label, item, rows, {
    boxes: (row, n) => [rowBox(row.value, `${item} ${n}`, (value) => (row.value = value))],
    between: '',
    blank: () => ({ value: '' }),
    none: 'None.',
  });
  const items = () => rows.map((row) => row.value).filter((v) => v !== '');
  return {
    element,
    items,
    changed: () => {
      const now = items();
      return now.length !== initial.length || now.some((v, i) => v !== initial[i]);
    },
  };
}

/** Name and value pairs, one row each, with Remove and Add; a row without a name is no pair. */
export function pairsEditor(
  label: string,
  item: string,
  initial: readonly (readonly [string, string])[],
): { element: HTMLElement; pairs(): { name: string; value: string }[] } {
  const rows = initial.map(([name, value]) => ({ name, value }));
  const element = rowsEditor(label, item, rows, {
    boxes: (row, n) => [
      rowBox(row.name, `${item} ${n} name`, (name) => (row.name = name)),
      rowBox(row.value, `${item} ${n} value`, (value) => (row.value = value)),
    ],
    between: ' = ',
    blank: () => ({ name: '', value: '' }),
    none: `No ${item.toLowerCase()}s.`,
  });
  return { element, pairs: () => rows.filter((row) => row.name !== '').map(({ name, value }) => ({ name, value })) };
}

/**
 * A table under `columns` in a box of its own that scrolls sideways when the table is wider than the
 * screen (a phone), so the page itself never does. The box is a named region the keyboard can reach,
 * so it can be scrolled without a pointer too.
 */
export function dataTable(label: string, columns: readonly string[], body: HTMLTableSectionElement): HTMLElement {
  return h(
    'div',
    { class: 'table-box', role: 'region', 'aria-label': label, tabindex: 0 },
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          columns.map((c) => h('th', { scope: 'col' }, c)),
        ),
      ),
      body,
    ),
  );
}

export function field(label: string, input: HTMLElement, className = ''): HTMLLabelElement {
  return h('label', { class: className }, `${label} `, input);
}

let hintIds = 0;

/**
 * A traffic percentage's text box, labelled, with what it takes said beside it and linked as its
 * accessible description. The browser is not told the bounds (it would refuse with its own words): what
 * is typed is sent (formNumber), and the server's rule and text decide.
 */
export function percentageField(label: string, input: HTMLInputElement): HTMLElement {
  const id = `percentage-hint-${++hintIds}`;
  input.setAttribute('inputmode', 'numeric');
  input.setAttribute('aria-describedby', id);
  return h('span', { class: 'field' }, field(label, input), h('span', { id, class: 'hint muted' }, 'A whole number, 0 to 100'));
}

/** A number typed in a form: as a number when it reads as one, else as typed (the server's rule names what is wrong). */
export function formNumber(raw: string): number | string {
  const text = raw.trim();
  return text !== '' && !Number.isNaN(Number(text)) ? Number(text) : text;
}

/** Fired (bubbling) at a form whose submit's work succeeded: its edits are saved (unsaved-edits.ts). */
export const kSavedEvent = 'flagwire-saved';
/**
 * Dispatched on window once a sign-in succeeded on the address it was made at: the app routes it again
 * (app.ts listens), so the sign-in page needs no import of the router, which imports it.
 */
export const kSignedInEvent = 'flagwire-signed-in';

/**
 * Runs `work` from a form's submit: the page does not reload; errors go to the status line. A change that
 * became a change request is no unsaved edit either: the request holds it, so the link to it leads there
 * without asking, even before the page is drawn again.
 */
export function onSubmit(work: (form: HTMLFormElement) => Promise<void>): EventListener {
  return (event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const saved = () => form.dispatchEvent(new Event(kSavedEvent, { bubbles: true }));
    work(form).then(saved, (err: unknown) => {
      if (err instanceof RequestOpened) saved();
      sayError(err);
    });
  };
}
