// Which page the URL's hash (#/projects/ID, ...) shows.
import { h, sayError } from './dom.js';
import { auditPage } from './audit-page.js';
import { flagPage, projectPage } from './flag-pages.js';
import { homePage } from './home-page.js';
import { mailPage } from './mail-page.js';
import { membersPage } from './members-page.js';
import { settingsPage } from './settings-page.js';
import { show } from './shell.js';
import { activityPage, tokensPage } from './token-pages.js';
import { webhooksPage } from './webhooks-page.js';

export async function route(): Promise<void> {
  const [path, query] = location.hash.replace(/^#/, '').split('?') as [string, string | undefined];
  const parts = path
    .split('/')
    .filter((p) => p !== '')
    .map(decodeURIComponent);
  const params = new URLSearchParams(query ?? '');
  try {
    if (parts.length === 0) await homePage();
    else if (parts[0] === 'projects' && parts.length === 2) await projectPage(parts[1]!);
    else if (parts[0] === 'projects' && parts[2] === 'tokens') await tokensPage(parts[1]!);
    else if (parts[0] === 'projects' && parts[2] === 'webhooks') await webhooksPage(parts[1]!);
    else if (parts[0] === 'projects' && parts[2] === 'audit') await auditPage(parts[1]!, params);
    else if (parts[0] === 'projects' && parts[2] === 'settings') await settingsPage(parts[1]!);
    else if (parts[0] === 'flags') await flagPage(parts[1]!);
    else if (parts[0] === 'tokens') await activityPage(parts[1]!);
    else if (parts[0] === 'orgs' && parts[2] === 'members') await membersPage(parts[1]!);
    else if (parts[0] === 'mail') await mailPage();
    else show('Not found', h('h1', {}, 'Not found'), h('p', {}, h('a', { href: '#/' }, 'Back to your projects')));
  } catch (err) {
    sayError(err);
  }
}
