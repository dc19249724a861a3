// Browser side of the web console: building elements (text always as text nodes, never as markup) and
// calling /console/api with the session's CSRF token.
type Child = Node | string | number | null | undefined | false;
type Props = Record<string, string | number | boolean | null | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: (Child | Child[])[]): HTMLElementTagNameMap[K] {
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
  constructor(readonly status: number, readonly title: string, readonly detail: string) {
    super(`${title}: ${detail}`);
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

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (method !== 'GET') headers['X-Flagwire-CSRF'] = csrfToken;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`/console/api/${path}`, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin',
  });
  const data = await res.json().catch(() => null) as (T & { error?: string; detail?: string }) | null;
  if (!res.ok) {
    const error = new ApiError(res.status, data?.error ?? `HTTP ${res.status}`, data?.detail ?? '');
    if (res.status === 401 && data?.error === 'Not signed in') onSignedOut();
    throw error;
  }
  return data as T;
}

/** The live status line under the header: what the last action did, or why it was refused. */
export function say(message: string, kind: 'ok' | 'error' = 'ok'): void {
  const status = document.getElementById('status')!;
  status.className = `status ${kind}`;
  status.textContent = message;
}

export function sayError(err: unknown): void {
  say(err instanceof ApiError ? `${err.title}: ${err.detail}` : String(err), 'error');
}

export function formatTime(ms: number | null): string {
  if (ms === null || ms === 0) return '—';
  return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

export function splitList(text: string): string[] {
  return text.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

export function field(label: string, input: HTMLElement, className = ''): HTMLLabelElement {
  return h('label', { class: className }, `${label} `, input);
}

/** Runs `work` from a form's submit: the page does not reload; errors go to the status line. */
export function onSubmit(work: (form: HTMLFormElement) => Promise<void>): EventListener {
  return (event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    work(form).catch(sayError);
  };
}
