// Which page the URL's hash (#/projects/ID, ...) shows.
import { ApiError, errorText, h, newPage, newPageStatus, pageLeft, sayError } from './dom.js';
import { auditPage } from './audit-page.js';
import { flagPage, projectPage } from './flag-pages.js';
import { homePage } from './home-page.js';
import { joinPage } from './join-page.js';
import { mailPage } from './mail-page.js';
import { membersPage } from './members-page.js';
import { playgroundPage } from './playground-page.js';
import { requestPage, requestsPage } from './requests-page.js';
import { scimPage } from './scim-page.js';
import { ssoPage } from './sso-page.js';
import { settingsPage } from './settings-page.js';
import { show } from './shell.js';
import { activityPage, tokensPage } from './token-pages.js';
import { clientKeysPage } from './client-keys-page.js';
import { webhooksPage } from './webhooks-page.js';
import { fragmentsPage } from './fragments-page.js';
import { lifecyclePage } from './lifecycle-page.js';
import { experimentResultsPage, experimentsPage } from './experiments-page.js';
import { showWaiting } from './waiting-count.js';
import { waitingPage } from './waiting-page.js';

/** Navigations so far: a page's failure is shown only if no navigation came after it. */
let navigations = 0;

export async function route(): Promise<void> {
  const navigation = ++navigations;
  newPage();
  const [path, query] = location.hash.replace(/^#/, '').split('?') as [string, string | undefined];
  const parts = path
    .split('/')
    .filter((p) => p !== '')
    .map(decodeURIComponent);
  const params = new URLSearchParams(query ?? '');
  newPageStatus();
  showWaiting();
  try {
    if (parts.length === 0) await homePage();
    else if (parts[0] === 'projects' && parts.length === 2) await projectPage(parts[1]!, params);
    else if (parts[0] === 'projects' && parts[2] === 'tokens') await tokensPage(parts[1]!);
    else if (parts[0] === 'projects' && parts[2] === 'client-keys') await clientKeysPage(parts[1]!);
    else if (parts[0] === 'projects' && parts[2] === 'webhooks') await webhooksPage(parts[1]!);
    else if (parts[0] === 'projects' && parts[2] === 'fragments') await fragmentsPage(parts[1]!);
    else if (parts[0] === 'projects' && parts[2] === 'lifecycle') await lifecyclePage(parts[1]!);
    else if (parts[0] === 'projects' && parts[2] === 'experiments' && parts.length === 3) await experimentsPage(parts[1]!, params);
    else if (parts[0] === 'projects' && parts[2] === 'experiments' && parts.length === 4)
      await experimentResultsPage(parts[1]!, parts[3]!, params);
    else if (parts[0] === 'projects' && parts[2] === 'audit') await auditPage(parts[1]!, params);
    else if (parts[0] === 'projects' && parts[2] === 'settings') await settingsPage(parts[1]!);
    else if (parts[0] === 'projects' && parts[2] === 'playground') await playgroundPage(parts[1]!, params);
    else if (parts[0] === 'projects' && parts[2] === 'requests') await requestsPage(parts[1]!);
    else if (parts[0] === 'requests' && parts.length === 2) await requestPage(parts[1]!);
    else if (parts[0] === 'requests' && parts.length === 1) await waitingPage();
    else if (parts[0] === 'flags') await flagPage(parts[1]!);
    else if (parts[0] === 'tokens') await activityPage(parts[1]!);
    else if (parts[0] === 'orgs' && parts[2] === 'members') await membersPage(parts[1]!);
    else if (parts[0] === 'orgs' && parts[2] === 'scim') await scimPage(parts[1]!);
    else if (parts[0] === 'orgs' && parts[2] === 'sso') await ssoPage(parts[1]!);
    else if (parts[0] === 'mail') await mailPage();
    else if (parts[0] === 'join' && parts.length === 3) await joinPage(parts[1]!, parts[2]!);
    else notFound('No page of the console has this address.');
  } catch (err) {
    // A page left before it loaded (its read aborted, or it failed late): the newer page is drawn instead.
    if (navigation === navigations && !pageLeft(err)) pageFailed(err);
  }
}

/**
 * A page that could not be read replaces the one before it, which would otherwise stay on screen
 * under the error as if it were the page asked for.
 */
function pageFailed(err: unknown): void {
  // Signed out: api() has shown the sign-in form; the status line says why.
  if (err instanceof ApiError && err.status === 401) sayError(err);
  // An unknown id and one of a project the user is not a member of are the same 404 (src/console-route/access.ts).
  else if (err instanceof ApiError && err.status === 404)
    notFound(`${err.detail} Check the address: it may have been deleted, or belong to an organisation you are not a member of.`);
  else show('Page not loaded', h('h1', {}, 'This page could not be loaded'), h('p', { class: 'error' }, errorText(err)), backHome());
}

function notFound(text: string): void {
  show('Not found', h('h1', {}, 'Not found'), h('p', {}, text), backHome());
}

const backHome = () => h('p', {}, h('a', { href: '#/' }, 'Back to your projects'));
