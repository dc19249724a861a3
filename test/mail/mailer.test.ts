// The mailer on its own (no HTTP server): a real SMTP server, a real store, the writer's commands run
// in this process.
import t from 'tap';
import { pino } from 'pino';
import { Clock } from '../../src/clock.js';
import { FlagwireError } from '../../src/errors.js';
import { Mailer } from '../../src/mail/mailer.js';
import type { MailMessage } from '../../src/model/mail.js';
import type { KeyedKind } from '../../src/store/interfaces.js';
import { Store } from '../helpers/store.js';
import type { WriterCommand } from '../../src/writer/command.js';
import { runCommand } from '../../src/writer/thread/commands.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { hungSmtpServer, smtpServer, until } from '../helpers/smtp.js';
import { appendMail, getMail, kMailRecords, listDueMail, listMail } from '../../src/model/records/mail-records.js';

const kSilent = pino({ level: 'silent' });

function setup(t: { teardown(fn: () => unknown): void }) {
  const store = Store.open(tempDir(t, 'flagwire-mailer-'));
  t.teardown(() => store.close());
  const clock = Clock.create();
  const writer = {
    call: <I, O>(command: WriterCommand<I, O>, input: I): Promise<O> =>
      Promise.resolve(store.transact((w) => runCommand(w, command, input, clock.now()))),
  };
  const message = (to: string, extra: Partial<MailMessage> = {}): Omit<MailMessage, 'seq'> => ({
    at: clock.now(),
    to,
    subject: 'Refused',
    text: 'x',
    sentAt: null,
    attempts: 0,
    nextAttemptAt: clock.now(),
    lastError: null,
    failedAt: null,
    ...extra,
  });
  const queue = (to: string, extra: Partial<MailMessage> = {}) => store.transact((w) => appendMail(w, message(to, extra)));
  return { store, clock, writer, message, queue };
}

t.test('a poll reads only the messages due, never the whole outbox', async (t) => {
  const smtp = await smtpServer();
  t.teardown(() => smtp.close());
  const { store, clock, writer, message, queue } = setup(t);
  store.transact((w) => {
    for (let i = 0; i < 2000; i++) appendMail(w, message(`old-${i}@acme.test`, { sentAt: clock.now(), attempts: 1 }));
  });
  queue('later@acme.test', { nextAttemptAt: clock.now() + 3_600_000 });
  queue('due-1@acme.test');
  queue('due-2@acme.test');
  // The store as the mailer sees it, except that listing the outbox fails the test.
  let scans = 0;
  const reader = new Proxy(store, {
    get(target, prop) {
      if (prop === 'listKeyed')
        return (kind: KeyedKind<unknown>, limit?: number) => {
          if (kind.name !== kMailRecords.name) return target.listKeyed(kind, limit);
          scans++;
          return [];
        };
      const value: unknown = Reflect.get(target, prop);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const mailer = new Mailer(`smtp://127.0.0.1:${smtp.port}`, reader, writer, clock, kSilent, { intervalMs: 20 });
  mailer.start();
  await until('both due messages delivered', () => smtp.received.length === 2);
  await mailer.stop();
  t.same(smtp.received.flatMap((m) => m.to).sort(), ['due-1@acme.test', 'due-2@acme.test']);
  t.equal(scans, 0, 'the outbox was never listed');
  store.resetReadTxn();
  t.match(
    listMail(store).filter((m) => m.to.startsWith('due-')),
    [{ sentAt: Number }, { sentAt: Number }],
    'both recorded as sent',
  );
  t.equal(
    listDueMail(store, Number.MAX_SAFE_INTEGER, 10)
      .map((m) => m.to)
      .join(),
    'later@acme.test',
  );
});

t.test('a hung SMTP server: the send times out, is recorded as failed, and is retried', async (t) => {
  const hung = await hungSmtpServer();
  t.teardown(() => hung.close());
  const { store, clock, writer, queue } = setup(t);
  const message = queue('olive@acme.test');
  const mailer = new Mailer(`smtp://127.0.0.1:${hung.port}`, store, writer, clock, kSilent, { intervalMs: 20, timeoutMs: 300 });
  mailer.start();
  t.teardown(() => mailer.stop());
  await until('the timed-out attempt to be recorded', () => {
    store.resetReadTxn();
    return getMail(store, message.seq)!.attempts === 1;
  });
  t.match(getMail(store, message.seq), { sentAt: null, failedAt: null, lastError: /greeting|timeout/i });
  await until('a retry after the 1 s backoff', () => hung.connections() >= 2);
  t.pass('retried');
});

t.test('stop() waits only briefly for a hung send; the message stays due', async (t) => {
  const hung = await hungSmtpServer();
  t.teardown(() => hung.close());
  const { store, clock, writer, queue } = setup(t);
  const message = queue('olive@acme.test');
  const mailer = new Mailer(`smtp://127.0.0.1:${hung.port}`, store, writer, clock, kSilent, { intervalMs: 20, stopWaitMs: 300 });
  mailer.start();
  await until('a send in progress', () => hung.connections() >= 1);
  const started = performance.now();
  await mailer.stop();
  const waited = performance.now() - started;
  // It waited its 300 ms; that it returned without the send ending (which only the transport's 10 s
  // timeouts could end) is what the record below shows: no attempt made, the message still due.
  t.ok(waited >= 250, `stop() returned after ${waited.toFixed(0)} ms (waits 300 ms at most)`);
  await hung.close();
  await new Promise((resolve) => setTimeout(resolve, 100));
  store.resetReadTxn();
  t.strictSame(
    { ...getMail(store, message.seq)!, nextAttemptAt: message.nextAttemptAt },
    { ...message, claimedBy: null },
    'the abandoned send recorded nothing: its claim was given back, no attempt written',
  );
  t.strictSame(
    listDueMail(store, clock.now(), 10).map((m) => m.seq),
    [message.seq],
    'so it is sent after the restart',
  );
});

t.test('a delivery result refused as busy (write lock held elsewhere) is recorded later; the message is sent once', async (t) => {
  const smtp = await smtpServer();
  t.teardown(() => smtp.close());
  const { store, clock, writer, queue } = setup(t);
  let refusals = 2;
  const busyWriter = {
    call: <I, O>(command: WriterCommand<I, O>, input: I): Promise<O> =>
      command.name === 'mailResult' && refusals-- > 0
        ? Promise.reject(new FlagwireError('STORE_BUSY', 'busy'))
        : writer.call(command, input),
  };
  const message = queue('olive@acme.test');
  const mailer = new Mailer(`smtp://127.0.0.1:${smtp.port}`, store, busyWriter, clock, kSilent, { intervalMs: 20 });
  mailer.start();
  t.teardown(() => mailer.stop());
  await until(
    'the delivery to be recorded',
    () => {
      store.resetReadTxn();
      return getMail(store, message.seq)!.sentAt !== null;
    },
    8000,
  );
  t.equal(smtp.received.length, 1, 'sent once: not again while its result waited for the writer');
  t.match(getMail(store, message.seq), { attempts: 1, lastError: null });
});
