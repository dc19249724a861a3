// A RevisionWaiter (src/http/revisions.ts) over a revision the test moves by hand, read every
// millisecond while requests wait, counting its reads.
import { RevisionWaiter } from '../../src/http/revisions.js';

export function waiterAt(initial: number, waitMs: number, maxWaiting = 100) {
  const at = { revision: initial, reads: 0 };
  const waiter = new RevisionWaiter({
    current: () => {
      at.reads++;
      return at.revision;
    },
    waitMs,
    maxWaiting,
    pollMs: 1,
  });
  return { at, waiter };
}
