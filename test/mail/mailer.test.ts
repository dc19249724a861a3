// The mailer on its own (no HTTP server): a real SMTP server, a real store, the writer's commands run
// in this process.
import t from 'tap';
import { pino } from 'pino';
import { Clock } from '../../src/clock.js';
import { Mailer } from '../../src/mail/mailer.js';
import type { MailMessage } from '../../src/store/records.js';
import { Store } from '../../src/store/store.js';
import { runCommand, type CommandInput, type CommandName, type CommandOutput } from '../../src/writer/commands.js';
import { tempDir } from '../helpers/cli.js';
import { smtpServer, until } from '../helpers/smtp.js';

const kSilent = pino({ level: 'silent' });

function setup(t: { teardown(fn: () => unknown): void }) {
  const store = Store.open(tempDir(t, 'flagwire-mailer-'));
  t.teardown(() => store.close());
  const clock = new Clock();
  const writer = {
    call: <N extends CommandName>(name: N, input: CommandInput<N>): Promise<CommandOutput<N>> =>
      Promise.resolve(store.transact((w) => runCommand(w, name, input, clock.now()))),
  };
  const queue = (to: string, extra: Partial<MailMessage> = {}) => store.transact((w) => w.appendMail({
    at: clock.now(), to, subject: 'Refused', text: 'x', sentAt: null, attempts: 0, nextAttemptAt: clock.now(), lastError: null, failedAt: null, ...extra,
  }));
  return { store, clock, writer, queue };
}

t.test('a poll reads only the messages due, never the whole outbox', async (t) => {
  const smtp = await smtpServer();
  t.teardown(() => smtp.close());
  const { store, clock, writer, queue } = setup(t);
  for (let i = 0; i < 2000; i++) queue(`old-${i}@acme.test`, { sentAt: clock.now(), attempts: 1 });
  queue('later@acme.test', { nextAttemptAt: clock.now() + 3_600_000 });
  queue('due-1@acme.test');
  queue('due-2@acme.test');
  // The store as the mailer sees it, except that listing the outbox fails the test.
  let scans = 0;
  const reader = new Proxy(store, {
    get(target, prop) {
      if (prop === 'listMail') return () => { scans++; return []; };
      const value: unknown = Reflect.get(target, prop);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const mailer = new Mailer(`smtp://127.0.0.1:${smtp.port}`, reader, writer, clock, kSilent, 20);
  mailer.start();
  await until('both due messages delivered', () => smtp.received.length === 2);
  await mailer.stop();
  t.same(smtp.received.flatMap((m) => m.to).sort(), ['due-1@acme.test', 'due-2@acme.test']);
  t.equal(scans, 0, 'the outbox was never listed');
  store.resetReadTxn();
  t.match(store.listMail().filter((m) => m.to.startsWith('due-')), [{ sentAt: Number }, { sentAt: Number }], 'both recorded as sent');
  t.equal(store.listDueMail(Number.MAX_SAFE_INTEGER, 10).map((m) => m.to).join(), 'later@acme.test');
});
