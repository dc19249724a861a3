// The pending change requests an author counts as an author of (requests.ts pendingRequestsBy), read from
// the change requests' lookup by author: the same requests, in the same order, as filtering every pending
// request of every project by authors.ts's rule (isAuthorOf), for authors who are people, tokens with a
// creator and a rotator, and co-authors; and as requests are decided (no longer pending) or edited by
// someone new (a co-author added). In process, on a real store.
import t from 'tap';
import { isAuthorOf } from '../../src/approvals/authors.js';
import { kChangeRequestRecords, type ChangeRequest, type RequestAuthor, type RequestStatus } from '../../src/approvals/records.js';
import { pendingRequestsBy } from '../../src/approvals/requests.js';
import { Store } from '../helpers/store.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { random } from '../helpers/seeded-random.js';

const next = random(46);
const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;

const people = Array.from({ length: 6 }, (_, i) => ({ id: `user:u${i}`, name: `Person ${i}` }));
/** Authors as the gate makes them (authors.ts asAuthor): people, and tokens with their creator and maybe a rotator. */
const authors: RequestAuthor[] = [
  ...people,
  ...Array.from({ length: 6 }, (_, i) => ({
    id: `token:t${i}`,
    name: `token ${i}`,
    createdBy: pick(people),
    ...(i % 2 === 0 ? { rotatedBy: pick(people) } : {}),
  })),
];
const statuses: RequestStatus[] = ['pending', 'pending', 'applied', 'rejected', 'withdrawn'];
/** What the lookup does not read: a request with no change, approval or comment yet. */
const kUndecided = { changes: [], base: [], audit: [], approvals: [], comments: [], decided: null };

function request(i: number): ChangeRequest {
  return {
    id: `chr_${String(i).padStart(4, '0')}`,
    projectId: `prj_${i % 5}`,
    status: pick(statuses),
    environments: [null],
    summary: `change ${i}`,
    author: pick(authors),
    ...(next() < 0.3 ? { coAuthors: [pick(authors)] } : {}),
    createdAt: 1000 + i,
    // Ties on purpose: the order then falls to the request's id.
    updatedAt: 2000 + Math.floor(next() * 40),
    ...kUndecided,
  };
}

/** What the rule says: every pending request of every project that `author` counts as an author of, the last changed first. */
function expected(store: Store, author: RequestAuthor): string[] {
  return store
    .listKeyed(kChangeRequestRecords)
    .filter((r) => r.status === 'pending' && isAuthorOf(r, author))
    .sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : 1))
    .map((r) => r.id);
}

t.test("an author's pending requests, from the lookup, are those the rule finds among all", async (t) => {
  const store = Store.open(tempDir(t, 'flagwire-pending-by-'));
  t.teardown(() => store.close());
  const made = Array.from({ length: 300 }, (_, i) => request(i));
  store.transact((w) => {
    for (const r of made) w.putKeyed(kChangeRequestRecords, r);
  });
  const check = (when: string) => {
    let differ = 0;
    let found = 0;
    for (const author of authors) {
      const want = expected(store, author);
      const got = pendingRequestsBy(store, author).map((r) => r.id);
      if (JSON.stringify(got) !== JSON.stringify(want)) differ++;
      found += got.length;
    }
    t.equal(differ, 0, `${when}: every author's requests as the rule finds them`);
    t.ok(found > 0, `${when}: some author has pending requests`);
  };
  check('as made');
  // Decided, edited with a new co-author, and opened again: the lookup follows each write.
  store.transact((w) => {
    for (const r of made.slice(0, 120)) {
      const edit = next();
      if (edit < 0.4) w.putKeyed(kChangeRequestRecords, { ...r, status: pick(['applied', 'rejected', 'withdrawn'] as const) });
      else if (edit < 0.8) w.putKeyed(kChangeRequestRecords, { ...r, coAuthors: [...(r.coAuthors ?? []), pick(authors)], updatedAt: 3000 });
      else w.putKeyed(kChangeRequestRecords, { ...r, status: 'pending' });
    }
  });
  check('after edits');
});
