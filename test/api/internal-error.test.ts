// spec: Errors, 500. Nothing a client sends causes one (test/reliability/fuzz-management.test.ts), so a
// fault is injected through the test hooks: the next read of the Management API's store throws.
import t from 'tap';
import { call } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t, { FLAGWIRE_TEST_HOOKS: '1' });

t.test('an unexpected fault is a 500 in the envelope, without a stack trace, and is logged', async (t) => {
  const before = world.snapshot();
  t.equal((await call(server.baseUrl, 'POST', '/__test/fault?count=1')).status, 200);
  const r = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.flag}`, {
    token: world.secrets.write,
    body: { enabled: false },
  });
  t.equal(r.status, 500);
  t.match(r.headers.get('content-type'), /^application\/json/);
  t.equal(r.headers.get('access-control-allow-origin'), '*');
  t.strictSame(Object.keys(r.json), ['error', 'detail', 'docs']);
  t.equal(r.json.error, 'Internal server error');
  t.match(r.json.detail, /unexpected error/);
  t.equal(r.json.docs, `${server.baseUrl}/docs#internal-error`);
  t.notMatch(r.text, /fault injected/, 'the cause is not shown to the client');
  t.notMatch(r.text, /\bat .*\.js:\d+/, 'no stack frames');
  t.notMatch(r.text, /\\n\s+at /, 'no stack trace');
  t.equal(world.snapshot(), before, 'nothing changed');

  // The log line (pino, JSON on stderr) has what the body leaves out.
  const deadline = Date.now() + 60_000;
  let line: { level: number; msg: string; method: string; path: string; err: { message: string; stack: string } } | undefined;
  while (line === undefined && Date.now() < deadline) {
    line = server
      .logs()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === 'unexpected error in the Management API');
    if (line === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.ok(line, 'logged');
  t.equal(line?.level, 50, 'at level error');
  t.equal(line?.method, 'PATCH');
  t.equal(line?.path, `/api/v1/flags/${world.ids.flag}`);
  t.equal(line?.err.message, 'fault injected by POST /__test/fault');
  t.match(line?.err.stack, /\n\s+at /, 'the stack trace goes to the log');

  const again = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.flag}`, {
    token: world.secrets.write,
    body: { enabled: false },
  });
  t.equal(again.status, 200, 'the next request is served');
});

t.test('a read meets the same 500', async (t) => {
  await call(server.baseUrl, 'POST', '/__test/fault?count=1');
  const r = await call(server.baseUrl, 'GET', '/api/v1/flags', { token: world.secrets.read });
  t.equal(r.status, 500);
  t.strictSame(Object.keys(r.json), ['error', 'detail', 'docs']);
  t.equal(r.json.error, 'Internal server error');
  t.equal((await call(server.baseUrl, 'GET', '/api/v1/flags', { token: world.secrets.read })).status, 200);
});
