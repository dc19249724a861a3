// The header's count of the change requests that wait for the signed-in user (docs/web-console.md:
// Approvals): read again with every page drawn (router.ts) and after a decision on a request
// (requests-page.ts); its link leads to what waits for them (waiting-page.ts).
import { api } from './dom.js';
import type { WaitingView } from './views.js';

/** "2 change requests wait for you" in the header, linking to their page; nothing while none does. */
export function showWaiting(): void {
  const link = document.getElementById('waiting');
  if (link === null) return;
  api<WaitingView>('GET', 'requests/waiting').then(
    ({ requests }) => {
      const n = requests.length;
      link.textContent = n === 1 ? '1 change request waits for you' : `${n} change requests wait for you`;
      link.hidden = n === 0;
    },
    // A count read as the user went on is read again for the next page; one that failed leaves the last.
    () => {},
  );
}
