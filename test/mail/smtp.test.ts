// Denial e-mail delivered over SMTP to a real SMTP server (smtp-server) on a free port, with retry.
import t from 'tap';
import { call } from '../helpers/http.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { smtpServer, until } from '../helpers/smtp.js';
import { buildWorld } from '../helpers/world.js';
import { mailRetryDelayMs } from '../../src/writer/mail-commands.js';

t.test('backoff doubles from 1 s and is capped', async (t) => {
  t.same([1, 2, 3, 4].map(mailRetryDelayMs), [1000, 2000, 4000, 8000]);
  t.equal(mailRetryDelayMs(40), 30 * 60 * 1000);
});

t.test('a denial e-mail reaches the SMTP server; a failed send is retried', async (t) => {
  const smtp = await smtpServer(1);
  const dataDir = tempDataDir();
  const world = buildWorld(dataDir);
  const server = await startTestServer({
    dataDir, env: { FLAGWIRE_TEST_HOOKS: '1', FLAGWIRE_SMTP_URL: `smtp://127.0.0.1:${smtp.port}` },
  });
  t.teardown(async () => {
    await server.stop();
    await world.store.close();
    await smtp.close();
  });
  const started = Date.now();
  const r = await call(server.baseUrl, 'POST', '/api/v1/flags', { token: world.secrets.read, body: { name: 'x' } });
  t.equal(r.status, 403);
  t.ok(Date.now() - started < 2000, 'the API answers without waiting for mail');
  await call(server.baseUrl, 'POST', '/__test/flush');
  await until('the first (rejected) attempt', () => smtp.attempts() >= 1);
  world.store.resetReadTxn();
  await until('the failure to be recorded', () => {
    world.store.resetReadTxn();
    return world.store.listMail().some((m) => m.attempts === 1 && m.lastError !== null);
  });
  await until('both messages delivered after the retry', () => smtp.received.length >= 2);
  t.same(smtp.received.flatMap((m) => m.to).sort(), ['editor@a.test', 'owner@a.test']);
  t.match(smtp.received[0]!.raw, /ci-read/);
  t.notMatch(smtp.received.map((m) => m.raw).join(''), world.secrets.read, 'no secret in mail');
  await until('delivery recorded in the outbox', () => {
    world.store.resetReadTxn();
    return world.store.listMail().every((m) => m.sentAt !== null);
  });
  t.pass('every outbox message is marked sent');
});
