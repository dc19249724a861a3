// A rotation's grace period, from outside (issue 29, item 4.2): rotated with `gracePeriodSeconds`, the old
// secret keeps authenticating until the period ends (the server's test clock is moved, not slept through),
// then gets exactly what a secret rotated without one gets; Revoke ends a grace early; bad values are a
// 400 in the spec's envelope with nothing changed; the audit log records the period.
import t from 'tap';
import { call } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';
import { advanceClock } from '../helpers/test-hooks.js';
import { consoleCall, demoPassword, demoSecret, kDemoOwner, signIn } from '../helpers/web-console.js';

t.test('the old secret works during the grace period and is refused after it', async (t) => {
  const server = await startTestServer({ demo: true, env: { FLAGWIRE_TEST_HOOKS: '1' } });
  t.teardown(() => server.stop());
  const base = server.baseUrl;
  const session = await signIn(base, kDemoOwner, demoPassword(server.output()));
  const writeSecret = demoSecret(server.output(), 'demo-write');
  const readSecret = demoSecret(server.output(), 'demo-read');
  const whoAmI = (secret: string) => call(base, 'GET', '/api/v1/token', { token: secret });
  const tokenId = async (secret: string) => (await whoAmI(secret)).json.id as string;
  const projectId = (await whoAmI(writeSecret)).json.project.id as string;
  const tokens = async () => (await consoleCall(base, session, 'GET', `projects/${projectId}/tokens`)).json.tokens as Record<string, any>[];
  const writeId = await tokenId(writeSecret);
  const readId = await tokenId(readSecret);

  // ---- bad values: 400 in the spec's envelope, nothing changed ----
  const before = JSON.stringify(await tokens());
  for (const bad of [-1, 1.5, '3600', 604_801, null, true]) {
    const r = await consoleCall(base, session, 'POST', `tokens/${writeId}/rotate`, { body: { gracePeriodSeconds: bad } });
    t.equal(r.status, 400, `gracePeriodSeconds ${JSON.stringify(bad)} is refused`);
    t.match(
      r.json,
      {
        error: 'Invalid request',
        detail: 'gracePeriodSeconds must be a whole number of seconds from 0 (none) to 604800 (7 days)',
      },
      'with the reason',
    );
  }
  t.equal(JSON.stringify(await tokens()), before, 'no token changed');
  t.equal((await whoAmI(writeSecret)).status, 200, 'the secret still works');

  // ---- without a grace period (no body, as before): the old secret is refused at once ----
  const plain = await consoleCall(base, session, 'POST', `tokens/${readId}/rotate`);
  t.equal(plain.status, 200, 'rotated with no body');
  t.same(plain.json.replaced, { id: readId, graceEndsAt: null }, 'no grace');
  const refusedToday = await whoAmI(readSecret);
  t.equal(refusedToday.status, 401, 'the old secret is refused at once');
  t.equal(refusedToday.json.error, 'Token revoked');

  // ---- an hour's grace ----
  const rotated = await consoleCall(base, session, 'POST', `tokens/${writeId}/rotate`, { body: { gracePeriodSeconds: 3600 } });
  t.equal(rotated.status, 200, 'rotated with an hour of grace');
  t.equal(rotated.json.replaced.id, writeId);
  const during = await whoAmI(writeSecret);
  t.equal(during.status, 200, 'the old secret still authenticates');
  t.equal(during.json.id, writeId, 'as the old token');
  t.equal((await whoAmI(rotated.json.secret)).status, 200, 'and so does the new one');
  const old = (await tokens()).find((tk) => tk.id === writeId)!;
  t.equal(old.status, 'revoked', 'the old token is listed as revoked');
  t.equal(old.secretWorksUntil, rotated.json.replaced.graceEndsAt, 'with when its secret stops working');
  t.equal(old.graceRevocable, true, 'and may be revoked now');
  t.equal((await consoleCall(base, session, 'POST', `tokens/${writeId}/rotate`)).status, 400, 'it cannot be rotated again');

  await advanceClock(server, 3599);
  t.equal((await whoAmI(writeSecret)).status, 200, 'still works a second before the end');
  await advanceClock(server, 2);
  const after = await whoAmI(writeSecret);
  t.equal(after.status, 401, 'refused once the grace period is over');
  t.same(after.json, refusedToday.json, 'exactly as a secret rotated without grace');
  t.equal((await tokens()).find((tk) => tk.id === writeId)!.secretWorksUntil, null, 'the list no longer shows a grace');

  // ---- Revoke ends a grace early; the replacement keeps working ----
  const again = await consoleCall(base, session, 'POST', `tokens/${await tokenId(rotated.json.secret)}/rotate`, {
    body: { gracePeriodSeconds: 86_400 },
  });
  const graceId = again.json.replaced.id as string;
  t.equal((await whoAmI(rotated.json.secret)).status, 200, 'the second secret is in its grace');
  const ended = await consoleCall(base, session, 'POST', `tokens/${graceId}/revoke`);
  t.equal(ended.status, 200, 'revoked during its grace');
  t.same((await whoAmI(rotated.json.secret)).json, refusedToday.json, 'refused from then on');
  t.equal((await whoAmI(again.json.secret)).status, 200, 'the replacement is not affected');
  t.equal((await consoleCall(base, session, 'POST', `tokens/${graceId}/revoke`)).status, 400, 'a second revoke is refused, as before');

  // ---- audited ----
  const audit = (await consoleCall(base, session, 'GET', `projects/${projectId}/audit`)).json.entries as Record<string, any>[];
  const rotations = audit.filter((e) => e.action === 'token.rotate');
  t.same(
    rotations.map((e) => e.changes.gracePeriodSeconds),
    [
      { before: null, after: 86_400 },
      { before: null, after: 3600 },
      { before: null, after: 0 },
    ],
    'each rotation records its grace period',
  );
  const revoke = audit.find((e) => e.action === 'token.revoke')!;
  t.equal(revoke.changes.graceEndsAt.before, again.json.replaced.graceEndsAt, 'the revoke records the grace it ended');
});
