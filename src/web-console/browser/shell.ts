// What every page of the web console is drawn in: the page element, breadcrumbs, the project's tabs, and
// the box that shows a new secret once.
import { askToConfirm } from './confirm-dialog.js';
import { h, say } from './dom.js';
import { rememberForms } from './unsaved-edits.js';
import type { Project } from './views.js';

export const page = () => document.getElementById('page')!;

/** Shows a page: its title and its content (a part of it absent: null; a few in a row: an array). */
export function show(title: string, ...content: (Node | null | (Node | null)[])[]): void {
  document.title = `${title} · Flagwire console`;
  page().replaceChildren(...content.flat().filter((n): n is Node => n !== null));
  rememberForms(page());
}

export function crumbs(...links: [string, string][]): HTMLElement {
  return h(
    'nav',
    { 'aria-label': 'Breadcrumbs', class: 'crumbs' },
    h('a', { href: '#/' }, 'Home'),
    links.flatMap(([href, text]) => [' / ', h('a', { href }, text)]),
  );
}

/** The settings page's name: a single-environment project has no environments to list there. */
export function settingsName(project: Project): string {
  return project.kind === 'multi' ? 'Environments and audiences' : 'Audiences';
}

export function projectTabs(project: Project): HTMLElement {
  return h(
    'nav',
    { 'aria-label': 'Project', class: 'tabs' },
    h('a', { href: `#/projects/${project.id}` }, 'Flags'),
    h('a', { href: `#/projects/${project.id}/lifecycle` }, 'Lifecycle'),
    h('a', { href: `#/projects/${project.id}/tokens` }, 'Tokens'),
    h('a', { href: `#/projects/${project.id}/client-keys` }, 'Client keys'),
    h('a', { href: `#/projects/${project.id}/fragments` }, 'Shared fragments'),
    h('a', { href: `#/projects/${project.id}/webhooks` }, 'Webhooks'),
    h('a', { href: `#/projects/${project.id}/experiments` }, 'Experiments'),
    h('a', { href: `#/projects/${project.id}/requests` }, 'Change requests'),
    h('a', { href: `#/projects/${project.id}/audit` }, 'Audit log'),
    h('a', { href: `#/projects/${project.id}/settings` }, settingsName(project)),
    h('a', { href: `#/projects/${project.id}/playground` }, 'Playground'),
  );
}

/**
 * What an empty list shows instead: a sentence saying what to do next and, to a user who may do it,
 * the control that starts it (`action`); a user who may not gets the sentence alone.
 */
export function emptyState(text: string, action: HTMLElement | null = null): HTMLElement {
  return h('p', { class: 'empty' }, text, action === null ? null : [' ', action]);
}

/** An empty list's action when the form that fills it is on the page: a button that takes the user to the form's first field. */
export function toForm(label: string, form: HTMLElement): HTMLButtonElement {
  const first = () => form.querySelector<HTMLElement>('input, select, textarea');
  return h('button', { type: 'button', class: 'secondary', onclick: () => first()?.focus() }, label);
}

/** A secret shown only this once (a token's, a webhook's), with a button that copies it. */
export function secretBox(opts: { label: string; heading: string; advice: string; id: string; secret: string }): HTMLElement {
  const { secret } = opts;
  return h(
    'section',
    { class: 'warning', 'aria-label': opts.label },
    h('h2', {}, opts.heading),
    h('p', {}, opts.advice),
    h('p', { class: 'secret', id: opts.id }, secret),
    h(
      'button',
      {
        type: 'button',
        onclick: () => {
          navigator.clipboard.writeText(secret).then(
            () => say('Secret copied to the clipboard.'),
            () => say('Could not copy: select the secret and copy it by hand.', 'error'),
          );
        },
      },
      'Copy secret',
    ),
  );
}

/** Whether a change to `env` of `project` asks to confirm first (docs/web-console.md: Protected environments). */
export function isProtectedEnv(project: Pick<Project, 'protectedEnvironments'>, env: string | null): boolean {
  return env !== null && (project.protectedEnvironments?.includes(env) ?? false);
}

/** Asks before a change to a protected environment; true to go on (always, for any other). */
export async function confirmProtected(
  project: Pick<Project, 'protectedEnvironments'>,
  env: string | null,
  change: string,
): Promise<boolean> {
  if (!isProtectedEnv(project, env)) return true;
  return askToConfirm({ title: `${change}?`, text: `${env} is a protected environment.`, confirm: 'Go ahead' });
}
