// The web console's sign-in over HTTP, through the real server: passwords set with the CLI on standard
// input, session cookies (HttpOnly, SameSite=Strict, Secure behind an HTTPS proxy, fresh per sign-in),
// sign-out and expiry ending a session on the server, the Origin check and CSRF token on every change,
// the per-address and per-account sign-in limits, and no CORS header on any console answer.
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { consoleCall, demoPassword, kDemoOwner, setPassword, signIn } from '../helpers/web-console.js';
import { startTestServer } from '../helpers/server.js';
import { advanceClock } from '../helpers/test-hooks.js';

t.test('sign-in, sessions and their refusals', async (t) => {
  const server = await startTestServer({
    demo: true,
    env: { FLAGWIRE_TEST_HOOKS: '1', FLAGWIRE_SIGN_IN_FAIL_LIMIT: '3', FLAGWIRE_TRUSTED_PROXIES: '127.0.0.1' },
  });
  t.teardown(() => server.stop());
  const base = server.baseUrl;
  const password = demoPassword(server.output());
  t.ok(password.length >= 12, 'the demo password printed once is long enough');

  const first = await signIn(base, kDemoOwner, password);
  t.match(
    first.setCookie,
    /^flagwire_session=[0-9A-Za-z]{43}; Path=\/console; Max-Age=\d+; HttpOnly; SameSite=Strict$/,
    'HttpOnly, SameSite=Strict, not Secure over plain HTTP',
  );
  const second = await signIn(base, kDemoOwner, password);
  t.not(second.cookie, first.cookie, 'every sign-in gets a fresh session id');

  const home = await consoleCall(base, first, 'GET', 'home');
  t.equal(home.status, 200);
  t.same(
    home.json.orgs.map((o: { name: string }) => o.name),
    ['Demo Org'],
  );
  t.same(home.json.orgs[0].projects.map((p: { name: string }) => p.name).sort(), ['Platform', 'Web shop']);
  t.equal(home.headers.get('access-control-allow-origin'), null, 'no CORS header on a console answer');

  // Behind a trusted HTTPS proxy the cookie is Secure.
  const proxied = await signIn(base, kDemoOwner, password, { 'x-forwarded-proto': 'https', host: server.baseUrl.slice(7) });
  t.match(proxied.setCookie, /; Secure$/);

  // Changes: this origin and the session's CSRF token, both.
  const body = { name: 'from-test' };
  const crossSite = await consoleCall(base, first, 'POST', 'projects/prj_DemoWebShop/flags', { body, origin: 'https://evil.example' });
  t.equal(crossSite.status, 403);
  t.equal(crossSite.json.error, 'Cross-site request refused');
  t.equal(
    (await consoleCall(base, first, 'POST', 'projects/prj_DemoWebShop/flags', { body, origin: null })).status,
    403,
    'no Origin: refused',
  );
  const noToken = await consoleCall(base, first, 'POST', 'projects/prj_DemoWebShop/flags', { body, csrf: false });
  t.equal(noToken.status, 403);
  t.match(noToken.json.detail, /CSRF token/);
  t.equal(
    (await consoleCall(base, first, 'POST', 'projects/prj_DemoWebShop/flags', { body: { name: 'x' }, csrf: true, origin: base })).status,
    200,
  );
  const flags = await consoleCall(base, first, 'GET', 'projects/prj_DemoWebShop');
  t.notOk(
    flags.json.flags.some((f: { name: string }) => f.name === 'from-test'),
    'nothing refused was created',
  );

  // Sign-out ends the session on the server: the old cookie is refused, even replayed.
  t.equal((await consoleCall(base, first, 'POST', 'sign-out')).status, 200);
  const stale = await consoleCall(base, first, 'GET', 'home');
  t.equal(stale.status, 401);
  t.equal(stale.json.error, 'Not signed in');
  t.equal((await consoleCall(base, second, 'GET', 'home')).status, 200, 'other sessions live on');

  // Expiry: 12 hours by default.
  await advanceClock(server, 12 * 3600 + 5);
  t.equal((await consoleCall(base, second, 'GET', 'home')).status, 401, 'an expired session is refused');

  // A new password (CLI, standard input) ends every session of the user; short ones are refused.
  const users = await cli(server.dataDir, ['user', 'list']);
  const owner = users.json.users.find((u: { email: string }) => u.email === kDemoOwner);
  const third = await signIn(base, kDemoOwner, password);
  const short = await setPassword(server.dataDir, owner.id, 'eleven char\n');
  t.equal(short.code, 1);
  t.match(short.json.detail, /at least 12 characters/);
  const set = await setPassword(server.dataDir, owner.id, 'correct horse battery\nignored after the newline');
  t.equal(set.code, 0, JSON.stringify(set.json));
  // The expired sessions were dropped when `third` signed in: only it was left to end.
  t.equal(set.json.sessionsEnded, 1);
  t.equal((await consoleCall(base, third, 'GET', 'home')).status, 401, 'a new password signs the user out');
  await t.resolves(signIn(base, kDemoOwner, 'correct horse battery'), 'the password is the first line only');
  await t.rejects(signIn(base, kDemoOwner, password), /sign-in 401.*Sign-in failed/, 'the old password no longer works');

  // Limits: per account (any address), then per address (any account). The limit is 3 here.
  const wrong = (email: string, headers: Record<string, string> = {}) =>
    signIn(base, email, 'not the password at all', headers).catch((e: Error) => e.message);
  t.match(await wrong(kDemoOwner), /401/, 'a second failure for the owner');
  t.match(await wrong(kDemoOwner, { 'x-forwarded-for': '203.0.113.9' }), /401/);
  t.match(
    await wrong(kDemoOwner, { 'x-forwarded-for': '203.0.113.10' }),
    /429.*for this account/,
    'the account is locked, from any address',
  );
  await t.rejects(
    signIn(base, kDemoOwner, 'correct horse battery', { 'x-forwarded-for': '203.0.113.11' }),
    /429/,
    'even with the right password',
  );
  for (const who of ['a@x.test', 'b@x.test']) t.match(await wrong(who, { 'x-forwarded-for': '198.51.100.7' }), /401/);
  t.match(await wrong('c@x.test', { 'x-forwarded-for': '198.51.100.7' }), /401/);
  t.match(
    await wrong('d@x.test', { 'x-forwarded-for': '198.51.100.7' }),
    /429.*from this address/,
    'the address is locked for every account',
  );

  // At most 8 password checks at once (32 MiB each): 16 sign-ins from 16 addresses at once, each check
  // taking about 0.1 s, leave some answered 503 with Retry-After, and nothing else but 401.
  const burst = await Promise.all(
    Array.from({ length: 16 }, async (_, i) => {
      const res = await fetch(`${base}/console/api/sign-in`, {
        method: 'POST',
        headers: { origin: base, 'content-type': 'application/json', 'x-forwarded-for': `192.0.2.${i + 1}` },
        body: JSON.stringify({ email: `burst${i}@x.test`, password: 'not the password at all' }),
      });
      return { status: res.status, retry: res.headers.get('retry-after'), json: (await res.json()) as { error: string } };
    }),
  );
  const busy = burst.filter((r) => r.status === 503);
  t.ok(busy.length > 0 && busy.length <= 8, `some refused as busy: ${busy.length}`);
  t.ok(
    busy.every((r) => r.retry === '1' && r.json.error === 'Server busy'),
    'each with Retry-After: 1 and the envelope',
  );
  t.equal(burst.filter((r) => r.status === 401).length, 16 - busy.length, 'the rest checked and refused');
});
