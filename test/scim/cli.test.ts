// SCIM's settings at the command line (docs/cli.md: SCIM): enable prints the secret once, again rotates
// it; only an Owner (or the operator) may; a group maps to a role and unmaps with none; show never
// prints the secret; disable stops it. A refusal changes nothing.
import t from 'tap';
import { cli, expectRefused, ok } from '../helpers/cli.js';
import { tempDataDir } from '../helpers/server.js';

t.test('scim enable, group-role, show and disable at the command line', async (t) => {
  const dir = tempDataDir();
  const org = await ok(t, dir, ['org', 'create', '--name', 'Acme', '--plan', 'teams']);
  const owner = await ok(t, dir, ['user', 'create', '--email', 'owner@acme.test']);
  const editor = await ok(t, dir, ['user', 'create', '--email', 'ed@acme.test']);
  await ok(t, dir, ['org', 'add-member', org.id, owner.id, '--role', 'owner']);
  await ok(t, dir, ['org', 'add-member', org.id, editor.id, '--role', 'editor']);

  await expectRefused(t, dir, ['scim', 'enable', org.id, '--as', editor.id], { code: 1, error: 'Forbidden', detail: /Only an Owner/ });
  await expectRefused(t, dir, ['scim', 'group-role', org.id, '--group', 'Admins', '--role', 'admin'], {
    code: 1,
    error: 'Invalid request',
    detail: /not enabled/,
  });
  const enabled = await ok(t, dir, ['scim', 'enable', org.id, '--as', owner.id]);
  t.match(enabled, { orgId: org.id, rotated: false, secret: /^fws_[A-Za-z0-9]{40}$/, groupRoles: {} });
  const rotated = await ok(t, dir, ['scim', 'enable', org.id]);
  t.equal(rotated.rotated, true, 'again: rotated, by the operator');
  t.not(rotated.secret, enabled.secret, 'a new secret');

  await expectRefused(t, dir, ['scim', 'group-role', org.id, '--group', 'Admins', '--role', 'boss'], {
    code: 1,
    error: 'Invalid request',
    detail: /role must be one of/,
  });
  t.same((await ok(t, dir, ['scim', 'group-role', org.id, '--group', 'Admins', '--role', 'admin', '--as', owner.id])).groupRoles, {
    Admins: 'admin',
  });
  t.same((await ok(t, dir, ['scim', 'group-role', org.id, '--group', 'Viewers', '--role', 'viewer'])).groupRoles, {
    Admins: 'admin',
    Viewers: 'viewer',
  });
  t.same(
    (await ok(t, dir, ['scim', 'group-role', org.id, '--group', 'admins', '--role', 'none'])).groupRoles,
    { Viewers: 'viewer' },
    'unmapped, ignoring case',
  );

  const shown = await cli(dir, ['scim', 'show', org.id]);
  t.equal(shown.code, 0);
  t.notMatch(shown.stdout, /fws_|secretHash/, 'show prints no secret nor its hash');
  t.match(shown.json, { orgId: org.id, enabled: true, groupRoles: { Viewers: 'viewer' } });
  const human = await cli(dir, ['scim', 'show', org.id], { json: false });
  t.match(human.stdout, /SCIM is enabled at \/scim\/v2/);

  t.same(await ok(t, dir, ['scim', 'disable', org.id, '--as', owner.id]), { orgId: org.id, disabled: true });
  t.same(await ok(t, dir, ['scim', 'disable', org.id]), { orgId: org.id, disabled: false }, 'twice: nothing to disable');
  t.same((await cli(dir, ['scim', 'show', org.id])).json, { orgId: org.id, enabled: false }, 'no settings once disabled');
});
