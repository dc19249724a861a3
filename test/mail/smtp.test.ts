// Denial e-mail delivered over SMTP to a real SMTP server (smtp-server) on a free port, with retry;
// and an SMTP server that hangs delays neither API answers nor shutdown.
import t from 'tap';
import { call } from '../helpers/http.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { hungSmtpServer, smtpServer, until } from '../helpers/smtp.js';
import { flushActivity } from '../helpers/test-hooks.js';
import { buildWorld } from '../helpers/world.js';
import { mailRetryDelayMs } from '../../src/mail/mail-commands.js';
import { principalOf } from '../../src/actor/audit-actor.js';
import { listDueMail, listMail } from '../../src/model/records/mail-records.js';

t.test('backoff doubles from 1 s and is capped', async (t) => {
  t.same([1, 2, 3, 4].map(mailRetryDelayMs), [1000, 2000, 4000, 8000]);
  t.equal(mailRetryDelayMs(40), 30 * 60 * 1000);
});

t.test('a denial e-mail reaches the SMTP server; a failed send is retried', async (t) => {
  const smtp = await smtpServer(1);
  const dataDir = tempDataDir();
  const world = buildWorld(dataDir);
  const server = await startTestServer({
    dataDir,
    env: { FLAGWIRE_TEST_HOOKS: '1', FLAGWIRE_SMTP_URL: `smtp://127.0.0.1:${smtp.port}` },
  });
  t.teardown(async () => {
    await server.stop();
    await world.store.close();
    await smtp.close();
  });
  const r = await call(server.baseUrl, 'POST', '/api/v1/flags', { token: world.secrets.read, body: { name: 'x' } });
  t.equal(r.status, 403);
  await call(server.baseUrl, 'POST', '/__test/flush');
  await until('the first (rejected) attempt', () => smtp.attempts() >= 1);
  world.store.resetReadTxn();
  await until('the failure to be recorded', () => {
    world.store.resetReadTxn();
    return listMail(world.store).some((m) => m.attempts === 1 && m.lastError !== null);
  });
  await until('both messages delivered after the retry', () => smtp.received.length >= 2);
  t.same(smtp.received.flatMap((m) => m.to).sort(), ['editor@a.test', 'owner@a.test']);
  t.match(smtp.received[0]!.raw, /ci-read/);
  t.notMatch(smtp.received.map((m) => m.raw).join(''), world.secrets.read, 'no secret in mail');
  await until('delivery recorded in the outbox', () => {
    world.store.resetReadTxn();
    return listMail(world.store).every((m) => m.sentAt !== null);
  });
  t.pass('every outbox message is marked sent');
});

t.test('an SMTP server that accepts and never greets delays neither API answers nor shutdown', async (t) => {
  const hung = await hungSmtpServer();
  const dataDir = tempDataDir();
  const world = buildWorld(dataDir);
  // The URL's own timeouts (they win over the mailer's 10 s): a delivery hangs past anything below, so an
  // answer that comes while it is still the one connection did not wait for it, however busy the machine.
  const kHangMs = 600_000;
  const server = await startTestServer({
    dataDir,
    env: {
      FLAGWIRE_TEST_HOOKS: '1',
      FLAGWIRE_SMTP_URL: `smtp://127.0.0.1:${hung.port}?greetingTimeout=${kHangMs}&connectionTimeout=${kHangMs}&socketTimeout=${kHangMs}`,
    },
  });
  t.teardown(async () => {
    await server.stop();
    await world.store.close();
    await hung.close();
  });
  const timed = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
    const started = performance.now();
    const value = await fn();
    return [value, performance.now() - started];
  };
  const deny = (token: string) => call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.flag}`, { token, body: { enabled: true } });
  t.equal((await deny(world.secrets.read)).status, 403);
  await flushActivity(server);
  await until('the mailer to be stuck on the hung server', () => hung.connections() >= 1);

  // A delivery now hangs (nodemailer waits for the greeting). A denial with another token queues more
  // mail when its activity is flushed through the writer: both answers come at once all the same.
  world.run('tokenRevoke', { tokenId: world.tokenIds.write!, principal: principalOf(world.ids.owner) });
  const [denied, denyMs] = await timed(() => deny(world.secrets.write));
  t.equal(denied.status, 401);
  const [, flushMs] = await timed(() => flushActivity(server));
  const [read, readMs] = await timed(() => call(server.baseUrl, 'GET', '/api/v1/token', { token: world.secrets.multiRead }));
  t.equal(read.status, 200);
  t.comment(
    `with a delivery hung: denial ${denyMs.toFixed(0)} ms, flush (queues its mail) ${flushMs.toFixed(0)} ms, read ${readMs.toFixed(0)} ms`,
  );
  t.equal(hung.connections(), 1, 'the API answered without waiting for mail: the first delivery still hangs, never retried');
  world.store.resetReadTxn();
  t.equal(listMail(world.store).length, 4, 'both denials queued their mail (creator and owner each)');

  const [code, stopMs] = await timed(() => server.stop());
  t.comment(`SIGTERM with a delivery hung: exit ${code} after ${stopMs.toFixed(0)} ms`);
  t.equal(code, 0, 'a clean exit: the writer and the store were closed');
  t.notMatch(server.logs(), /shutdown did not finish in time/);
  world.store.resetReadTxn();
  t.ok(
    listMail(world.store).every((m) => m.sentAt === null && m.failedAt === null),
    'nothing was lost: every message is still to send',
  );
  t.equal(listDueMail(world.store, Number.MAX_SAFE_INTEGER, 10).length, 4, 'and due, for the next start');
});
