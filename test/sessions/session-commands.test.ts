// Sessions in the store: a sign-in drops the user's expired sessions and, past kMaxSessionsPerUser live
// ones, the oldest; a new password ends them all; sign-out ends one.
import t from 'tap';
import { hashSecret } from '../../src/model/ids.js';
import { Store } from '../helpers/store.js';
import { kMaxSessionsPerUser, sessionEnd, sessionStart } from '../../src/sessions/session-commands.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { putUser } from '../../src/model/records/org-records.js';
import { getSession, listUserSessions } from '../../src/model/records/session-records.js';

const at = Date.UTC(2030, 0, 1);
const user = { id: 'usr_1', email: 'ada@acme.test', name: 'Ada', createdAt: at };

t.test('signing in again and again keeps at most kMaxSessionsPerUser sessions, ending the oldest', async (t) => {
  const store = Store.open(tempDir(t, 'flagwire-sessions-'));
  t.teardown(() => store.close());
  store.transact((w) => putUser(w, user));
  const start = (n: number, now: number, hours = 12) =>
    store.transact((w) =>
      sessionStart(
        w,
        { userId: user.id, idHash: hashSecret(`session-${n}`), csrfToken: `csrf-${n}`, expiresAt: now + hours * 3600_000 },
        now,
      ),
    );

  start(0, at, 1);
  for (let n = 1; n <= kMaxSessionsPerUser + 5; n++) start(n, at + 2 * 3600_000 + n);
  const live = listUserSessions(store, user.id)
    .map((s) => s.csrfToken)
    .sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)));
  t.equal(live.length, kMaxSessionsPerUser);
  t.same(
    live,
    Array.from({ length: kMaxSessionsPerUser }, (_, i) => `csrf-${i + 6}`),
    'the newest are kept',
  );
  t.equal(getSession(store, hashSecret('session-0')), undefined, 'the expired one is gone');
  t.equal(getSession(store, hashSecret('session-5')), undefined, 'the oldest live ones were ended');

  t.same(
    store.transact((w) => sessionEnd(w, { idHash: hashSecret('session-6') })),
    { ended: true },
  );
  t.same(
    store.transact((w) => sessionEnd(w, { idHash: hashSecret('session-6') })),
    { ended: false },
    'ending it twice finds nothing',
  );
  t.equal(listUserSessions(store, user.id).length, kMaxSessionsPerUser - 1);
});
