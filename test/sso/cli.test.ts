// Single sign-on's settings at the command line (docs/cli.md: Single sign-on): only an Owner (or the
// operator) sets them; the first needs the issuer, client id and secret (read from a file); show never
// prints the secret; SSO only is refused without a break-glass Owner with a password; remove turns it
// off. A refusal changes nothing. The Management API's /api/v1/sso does the same for an Owner's token.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { cli, expectRefused, ok } from '../helpers/cli.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { demoSecret, setPassword } from '../helpers/web-console.js';

t.test('sso set, show and remove at the command line', async (t) => {
  const dir = tempDataDir();
  // Beside the data dir, not in it: the store refuses a directory holding files it did not write.
  const secretFile = join(tempDataDir(), 'client-secret');
  writeFileSync(secretFile, 'the-client-secret\n');
  const org = await ok(t, dir, ['org', 'create', '--name', 'Acme', '--plan', 'teams']);
  const owner = await ok(t, dir, ['user', 'create', '--email', 'owner@acme.test']);
  const editor = await ok(t, dir, ['user', 'create', '--email', 'ed@acme.test']);
  await ok(t, dir, ['org', 'add-member', org.id, owner.id, '--role', 'owner']);
  await ok(t, dir, ['org', 'add-member', org.id, editor.id, '--role', 'editor']);
  const idp = ['--issuer', 'https://idp.acme.test', '--client-id', 'flagwire', '--client-secret-file', secretFile];

  await expectRefused(t, dir, ['sso', 'set', org.id, ...idp, '--as', editor.id], { code: 1, error: 'Forbidden', detail: /Only an Owner/ });
  await expectRefused(t, dir, ['sso', 'set', org.id, '--issuer', 'https://idp.acme.test'], {
    code: 1,
    error: 'Invalid request',
    detail: /send clientId, clientSecret too/,
  });
  const set = await ok(t, dir, [
    'sso',
    'set',
    org.id,
    ...idp,
    '--group-role',
    'Flagwire Admins=admin',
    '--scope',
    'groups',
    '--as',
    owner.id,
  ]);
  t.match(set, { orgId: org.id, enabled: true, clientSecretSet: true, scopes: ['groups'], groupRoles: { 'Flagwire Admins': 'admin' } });
  await expectRefused(t, dir, ['sso', 'set', org.id, '--group-role', 'Admins=boss'], {
    code: 1,
    error: 'Invalid request',
    detail: /groupRoles/,
  });
  await expectRefused(t, dir, ['sso', 'set', org.id, '--sso-only', 'on', '--break-glass', owner.id], {
    code: 1,
    error: 'Invalid request',
    detail: /no one is locked out: .* has no password/,
  });
  t.equal((await setPassword(dir, owner.id, 'the owner has a long password')).code, 0);
  t.match(await ok(t, dir, ['sso', 'set', org.id, '--sso-only', 'on', '--break-glass', owner.id]), {
    ssoOnly: true,
    breakGlassUserId: owner.id,
  });

  const shown = await cli(dir, ['sso', 'show', org.id], { json: false });
  t.equal(shown.code, 0);
  t.match(shown.stdout, /https:\/\/idp\.acme\.test/);
  t.match(shown.stdout, /SSO only\s+on \(break-glass Owner usr_/);
  t.notOk(shown.stdout.includes('the-client-secret'), 'show never prints the client secret');
  t.same(await ok(t, dir, ['sso', 'remove', org.id, '--as', owner.id]), { orgId: org.id, removed: true });
  t.match(await ok(t, dir, ['sso', 'show', org.id]), { enabled: false });
});

t.test('the Management API: an Owner token reads, changes and removes the settings', async (t) => {
  const server = await startTestServer({ demo: true });
  t.teardown(() => server.stop());
  const token = demoSecret(server.output(), 'demo-write');
  const call = async (method: string, body?: unknown) => {
    const res = await fetch(`${server.baseUrl}/api/v1/sso`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: await res.json() };
  };
  t.match(await call('GET'), { status: 200, json: { enabled: false, signInPath: /^\/console\/sso\/org_.*\/start$/ } });
  t.match(await call('PATCH', { issuer: 'ftp://idp', clientId: 'x', clientSecret: 'y', ssoOnly: 'yes' }), {
    status: 400,
    json: { error: 'Invalid request', detail: /ssoOnly must be true or false/ },
  });
  t.match(await call('GET'), { json: { enabled: false } }, 'refused: nothing changed');
  const patched = await call('PATCH', { issuer: 'https://idp.demo.test', clientId: 'flagwire', clientSecret: 'demo-secret' });
  t.match(patched, { status: 200, json: { enabled: true, issuer: 'https://idp.demo.test', clientSecretSet: true } });
  t.notOk(JSON.stringify(patched.json).includes('demo-secret'), 'never answered');
  t.match(await call('DELETE'), { status: 200, json: { removed: true } });
  t.match(await call('GET'), { json: { enabled: false } });
});
