// The web console's browser app: its entry module (the page loads it as an ES module; the pages are
// modules beside it, one per page, chosen by the URL's hash in router.ts). Every page reads one
// /console/api endpoint and renders it; every change is one call, whose refusal (the writer's own
// text) is shown in the status line.
import { api, kRequestOpenedEvent, kSignedInEvent, setCsrfToken, whenSignedOut } from './dom.js';
import { route } from './router.js';
import { accountBar, signInPage } from './sign-in.js';
import { mayLeave } from './unsaved-edits.js';
import type { SessionView } from './views.js';

async function boot(): Promise<void> {
  whenSignedOut(signInPage);
  // An invitation's link is for someone with no user yet: its page needs no session.
  if (location.hash.startsWith('#/join/')) {
    await route();
    return;
  }
  try {
    const session = await api<SessionView>('GET', 'session');
    setCsrfToken(session.csrfToken);
    accountBar(session.user);
  } catch {
    signInPage();
    return;
  }
  await route();
}

/**
 * "/" takes the keyboard to the page's search field, as on many sites; typed in a field, it is only
 * the character it is.
 */
function focusSearch(event: KeyboardEvent): void {
  if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
  if (event.target instanceof Element && event.target.closest('input, textarea, select, [contenteditable]')) return;
  const search = document.querySelector<HTMLInputElement>('#page input[type="search"]');
  if (search === null) return;
  event.preventDefault();
  search.focus();
}

// A page that is not signed in answers every route with the sign-in form (api() calls whenSignedOut).
// A page with unsaved edits asks before it is left (unsaved-edits.ts).
window.addEventListener('hashchange', (event) => {
  if (mayLeave(event)) void route();
});
window.addEventListener(kSignedInEvent, () => void route());
// A change became a change request: the page is drawn again, the state as it still is, the request beside it.
window.addEventListener(kRequestOpenedEvent, () => void route());
document.addEventListener('keydown', focusSearch);
void boot();
