// Recording one delivery attempt: sent, retried later with backoff, or given up; it reads and writes
// that message only, never the whole outbox.
import t from 'tap';
import type { MailMessage } from '../../src/model/mail.js';
import type { StoreWriter } from '../../src/store/interfaces.js';
import { LmdbStore as Store } from '../../src/store/lmdb-store.js';
import { kMaxMailAttempts, mailResult } from '../../src/mail/mail-commands.js';
import { tempDir } from '../helpers/scratch-dir.js';

const at = Date.UTC(2030, 0, 1);
const mail: Omit<MailMessage, 'seq'> = {
  at,
  to: 'olive@acme.test',
  subject: 'Refused',
  text: 'x',
  sentAt: null,
  attempts: 0,
  nextAttemptAt: at,
  lastError: null,
  failedAt: null,
};

/** The store's writer, except that listing the outbox fails the test. */
function withoutScans(w: StoreWriter): StoreWriter {
  return new Proxy(w, {
    get(target, prop) {
      if (prop === 'listMail')
        return () => {
          throw new Error('the whole outbox was read');
        };
      const value: unknown = Reflect.get(target, prop);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

t.test('a delivery result updates its own message without reading the outbox', async (t) => {
  const store = Store.open(tempDir(t, 'flagwire-mail-'));
  t.teardown(() => store.close());
  const [first, second] = store.transact((w) => {
    for (let i = 0; i < 1000; i++) w.appendMail({ ...mail, sentAt: at, attempts: 1 });
    return [w.appendMail(mail), w.appendMail({ ...mail, to: 'x@acme.test' })];
  });
  const result = (seq: number, error: string | null, now: number) =>
    store.transact((w) => mailResult(withoutScans(w), { seq, error }, now));

  t.match(result(first!.seq, 'busy', at + 5), { attempts: 1, lastError: 'busy', nextAttemptAt: at + 1005, sentAt: null, failedAt: null });
  t.strictSame(
    store.listDueMail(at + 5, 10).map((m) => m.seq),
    [second!.seq],
    'the failed one waits for its retry',
  );
  t.match(result(first!.seq, null, at + 1005), { attempts: 2, sentAt: at + 1005, lastError: null });
  t.equal(result(first!.seq, null, at + 2000), null, 'a result for a message already sent changes nothing');
  t.equal(result(99_999, null, at), null, 'nor one for a message that does not exist');

  for (let i = 1; i < kMaxMailAttempts; i++) result(second!.seq, 'refused', at + i);
  t.match(result(second!.seq, 'refused', at + kMaxMailAttempts), { attempts: kMaxMailAttempts, failedAt: at + kMaxMailAttempts });
  t.strictSame(store.listDueMail(Number.MAX_SAFE_INTEGER, 10), [], 'nothing left to send');
  t.equal(store.listMail().length, 1002, 'every message stays in the outbox');
});
