// What every page of the web console is drawn in: the page element, breadcrumbs and the project's tabs.
import { h } from './dom.js';
import type { Project } from './views.js';

export const page = () => document.getElementById('page')!;

export function show(title: string, ...content: (Node | null)[]): void {
  document.title = `${title} · Flagwire console`;
  page().replaceChildren(...content.filter((n): n is Node => n !== null));
}

export function crumbs(...links: [string, string][]): HTMLElement {
  return h(
    'nav',
    { 'aria-label': 'Breadcrumbs', class: 'crumbs' },
    h('a', { href: '#/' }, 'Home'),
    links.flatMap(([href, text]) => [' / ', h('a', { href }, text)]),
  );
}

export function projectTabs(project: Project): HTMLElement {
  return h(
    'nav',
    { 'aria-label': 'Project', class: 'tabs' },
    h('a', { href: `#/projects/${project.id}` }, 'Flags'),
    h('a', { href: `#/projects/${project.id}/tokens` }, 'Tokens'),
    h('a', { href: `#/projects/${project.id}/audit` }, 'Audit log'),
    h('a', { href: `#/projects/${project.id}/settings` }, 'Environments and audiences'),
  );
}
