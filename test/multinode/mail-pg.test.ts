// Mail on nodes of one PostgreSQL, both with SMTP set up (issue 43, item 4): each message reaches the
// SMTP server once. A node's mailer claims a message in a writer transaction before it sends it (the
// outbox rule, src/outbox/outbox.ts), and writers of every node run one at a time against PostgreSQL's
// records, so the other node's claim finds it held. The SMTP server answers each message after 700 ms,
// longer than a poll (500 ms): without the claim, the other node's poll finds the message still unsent
// while the first one sends it, and sends it too.
import t from 'tap';
import type { MailMessage } from '../../src/model/mail.js';
import { call } from '../helpers/http.js';
import { sharedPostgres } from '../helpers/postgres.js';
import { smtpServer } from '../helpers/smtp.js';
import { changeLog, createTokenWithConsole, seedInProcess, startReadyNodes, until } from './support.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());

const kMessages = 4;

t.test('two nodes with SMTP: every message is claimed by one node and sent once', async (t) => {
  const url = await pg.newDatabase();
  const database = new URL(url).pathname.slice(1);
  const seeded = await seedInProcess(t, url);
  const readers = await Promise.all(
    Array.from({ length: kMessages }, async (_, i) => (await createTokenWithConsole(t, url, seeded, `reader-${i}`, 'read')).json),
  );
  const smtp = await smtpServer(0, 700);
  t.teardown(() => smtp.close());
  const nodes = await startReadyNodes(t, url, 2, { FLAGWIRE_SMTP_URL: `smtp://127.0.0.1:${smtp.port}` });

  // A read token on a write route is refused, and its creator is mailed about it (one message each).
  for (const [i, reader] of readers.entries()) {
    const r = await call(nodes[i % 2]!.baseUrl, 'POST', '/api/v1/flags', { token: reader.secret, body: { name: `x${i}` } });
    t.equal(r.status, 403, r.text);
  }
  const mail = async () => {
    const latest = new Map<number, MailMessage>();
    for (const { change } of await changeLog(pg, database)) if (change.kind === 'mail') latest.set(change.value.seq, change.value);
    return [...latest.values()];
  };
  await until(
    async () => {
      const messages = await mail();
      return messages.length === kMessages && messages.every((m) => m.sentAt !== null);
    },
    120_000,
    'every message recorded as sent',
  );
  // Stopped, so no send is left under way: what the SMTP server has now is all the nodes sent.
  await Promise.all(nodes.map((node) => node.stop()));

  const sent = smtp.received.map((m) => readers.findIndex((reader) => m.raw.includes(reader.id)));
  t.equal(sent.length, kMessages, `the SMTP server received ${sent.length} messages for ${kMessages} queued`);
  t.strictSame(
    [...sent].sort((a, b) => a - b),
    readers.map((_, i) => i),
    'each token refused is told of once',
  );
  const claims = (await changeLog(pg, database)).filter(
    ({ change }) => change.kind === 'mail' && typeof change.value.claimedBy === 'string',
  );
  t.equal(claims.length, kMessages, 'one claim per message: the other node never took one');
  t.match(await mail(), Array(kMessages).fill({ attempts: 1, lastError: null, claimedBy: null }));
});
