// The operator at the command line cannot take an organisation's last Owner away (issue 61): demoting
// them is refused with the envelope's 400 Invalid request and nothing written; once another member is
// an Owner, the same command applies. There is no override flag (docs/decisions.md: the last Owner).
import t from 'tap';
import { expectRefused, ok } from '../helpers/cli.js';
import { tempDataDir } from '../helpers/server.js';

t.test('org add-member refuses to demote the last Owner, then allows it once there is another', async (t) => {
  const dir = tempDataDir();
  const org = await ok(t, dir, ['org', 'create', '--name', 'Acme', '--plan', 'teams']);
  const owner = await ok(t, dir, ['user', 'create', '--email', 'owner@acme.test']);
  const admin = await ok(t, dir, ['user', 'create', '--email', 'admin@acme.test']);
  await ok(t, dir, ['org', 'add-member', org.id, admin.id, '--role', 'admin']);
  await ok(t, dir, ['org', 'add-member', org.id, owner.id, '--role', 'owner']);

  for (const role of ['admin', 'editor', 'viewer'])
    await expectRefused(t, dir, ['org', 'add-member', org.id, owner.id, '--role', role], {
      code: 1,
      error: 'Invalid request',
      detail: new RegExp(
        `keeps at least one Owner.*${owner.id} is the last Owner of organisation ${org.id}, and this would make them an? ${role}`,
      ),
    });
  await expectRefused(t, dir, ['org', 'add-member', org.id, owner.id, '--role', 'admin', '--force'], {
    code: 2,
    error: 'Invalid request',
    detail: /Unknown option '--force'/,
  });

  await ok(t, dir, ['org', 'add-member', org.id, admin.id, '--role', 'owner']);
  t.match(
    await ok(t, dir, ['org', 'add-member', org.id, owner.id, '--role', 'viewer']),
    { role: 'viewer' },
    'another Owner first: applied',
  );
  await expectRefused(t, dir, ['org', 'add-member', org.id, admin.id, '--role', 'editor'], {
    code: 1,
    error: 'Invalid request',
    detail: /keeps at least one Owner/,
  });
});
