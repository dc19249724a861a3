// Recording one delivery attempt: sent, retried later with backoff, or given up; it reads and writes
// that message only, never the whole outbox. And the claim a node takes before it sends a message.
import t from 'tap';
import type { MailMessage } from '../../src/model/mail.js';
import type { KeyedKind, StoreWriter } from '../../src/store/interfaces.js';
import { Store } from '../helpers/store.js';
import { kMaxMailAttempts, mailClaim, mailRelease, mailResult } from '../../src/mail/mail-commands.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { appendMail, kMailRecords, listDueMail, listMail } from '../../src/model/records/mail-records.js';

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
      if (prop === 'listKeyed')
        return (kind: KeyedKind<unknown>, limit?: number) => {
          if (kind.name === kMailRecords.name) throw new Error('the whole outbox was read');
          return target.listKeyed(kind, limit);
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
    for (let i = 0; i < 1000; i++) appendMail(w, { ...mail, sentAt: at, attempts: 1 });
    return [appendMail(w, mail), appendMail(w, { ...mail, to: 'x@acme.test' })];
  });
  const result = (seq: number, error: string | null, now: number) =>
    store.transact((w) => mailResult(withoutScans(w), { seq, error }, now));

  t.match(result(first!.seq, 'busy', at + 5), { attempts: 1, lastError: 'busy', nextAttemptAt: at + 1005, sentAt: null, failedAt: null });
  t.strictSame(
    listDueMail(store, at + 5, 10).map((m) => m.seq),
    [second!.seq],
    'the failed one waits for its retry',
  );
  t.match(result(first!.seq, null, at + 1005), { attempts: 2, sentAt: at + 1005, lastError: null });
  t.equal(result(first!.seq, null, at + 2000), null, 'a result for a message already sent changes nothing');
  t.equal(result(99_999, null, at), null, 'nor one for a message that does not exist');

  for (let i = 1; i < kMaxMailAttempts; i++) result(second!.seq, 'refused', at + i);
  t.match(result(second!.seq, 'refused', at + kMaxMailAttempts), { attempts: kMaxMailAttempts, failedAt: at + kMaxMailAttempts });
  t.strictSame(listDueMail(store, Number.MAX_SAFE_INTEGER, 10), [], 'nothing left to send');
  t.equal(listMail(store).length, 1002, 'every message stays in the outbox');
});

t.test('a node claims a due message; another finds it held; a claim given back makes it due at once', async (t) => {
  const store = Store.open(tempDir(t, 'flagwire-mail-'));
  t.teardown(() => store.close());
  const queued = store.transact((w) => appendMail(w, mail));
  const run = <T>(fn: (w: StoreWriter) => T) => store.transact((w) => fn(withoutScans(w)));
  const claim = (nodeId: string, now: number) => run((w) => mailClaim(w, { seq: queued.seq, nodeId, claimMs: 30_000 }, now));

  t.equal(claim('node_a', at - 1), null, 'not before it is due');
  t.match(claim('node_a', at + 5), { claimedBy: 'node_a', nextAttemptAt: at + 30_005, attempts: 0, sentAt: null });
  t.equal(claim('node_b', at + 10), null, 'another node finds it held');
  t.strictSame(listDueMail(store, at + 30_004, 10), [], 'out of the due index until the claim runs out');
  t.equal(
    run((w) => mailRelease(w, { seq: queued.seq, nodeId: 'node_b' }, at + 20)),
    null,
    'only its holder gives a claim back',
  );
  t.match(
    run((w) => mailRelease(w, { seq: queued.seq, nodeId: 'node_a' }, at + 20)),
    { claimedBy: null, nextAttemptAt: at + 20 },
  );
  t.match(claim('node_b', at + 20), { claimedBy: 'node_b' }, 'given back: due at once, for any node');
  t.match(
    run((w) => mailResult(w, { seq: queued.seq, error: null }, at + 30)),
    { sentAt: at + 30, attempts: 1, claimedBy: null },
  );
  t.equal(claim('node_a', at + 60_000), null, 'a message sent is never claimed again');
  t.equal(claim('node_a', Number.MAX_SAFE_INTEGER), null);
});

t.test('a claim that runs out (its node died mid-send) lets another node take the message', async (t) => {
  const store = Store.open(tempDir(t, 'flagwire-mail-'));
  t.teardown(() => store.close());
  const queued = store.transact((w) => appendMail(w, mail));
  const claim = (nodeId: string, now: number) => store.transact((w) => mailClaim(w, { seq: queued.seq, nodeId, claimMs: 30_000 }, now));
  t.ok(claim('node_a', at));
  t.equal(claim('node_b', at + 29_999), null);
  t.match(claim('node_b', at + 30_000), { claimedBy: 'node_b', nextAttemptAt: at + 60_000 });
  t.strictSame(
    listDueMail(store, at + 60_000, 10).map((m) => m.seq),
    [queued.seq],
    'and due again when its claim runs out',
  );
});
