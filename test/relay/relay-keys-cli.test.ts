// Relay keys at the command line (docs/cli.md: Relay keys): create prints the secret once and keeps only
// its SHA-256, list never shows a secret or hash, revoke marks the key; bad input is refused and changes
// nothing. Whether a key opens the relay service is test/relay/follow-service.test.ts's.
import { kOperator } from '../../src/actor/audit-actor.js';
import { createHash } from 'node:crypto';
import t from 'tap';
import { kRelayKeyRecords } from '../../src/relay/records.js';
import { cli, expectRefused, inStore, ok } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';

const dir = tempDir(t);
t.before(() => inStore(dir, (run) => run('orgCreate', { principal: kOperator, name: 'Acme', plan: 'teams' })));

t.test('create shows the secret once, list shows the keys without it, revoke revokes', async (t) => {
  const created = await ok(t, dir, ['relay', 'key', 'create', '--name', 'eu-west relay']);
  t.match(created, { id: /^rk_[A-Za-z0-9]{16}$/, name: 'eu-west relay', revokedAt: null, secret: /^fwr_[A-Za-z0-9]{40}$/ });
  const stored = await inStore(dir, (_run, w) => w.listKeyed(kRelayKeyRecords));
  t.strictSame(
    stored.map((k) => k.secretHash),
    [createHash('sha256').update(created.secret).digest('hex')],
    'only the hash of the secret is stored',
  );
  t.notOk(JSON.stringify(stored).includes(created.secret), 'never the secret');

  const second = await ok(t, dir, ['relay', 'key', 'create', '--name', 'us-east relay']);
  const listed = await ok(t, dir, ['relay', 'key', 'list']);
  t.strictSame(
    listed.keys.map((k: { id: string }) => k.id),
    [created.id, second.id],
    'oldest first',
  );
  t.notOk(JSON.stringify(listed).includes('secret'), 'no secret and no hash in the list');

  const revoked = await ok(t, dir, ['relay', 'key', 'revoke', created.id]);
  t.equal(revoked.id, created.id);
  t.type(revoked.revokedAt, 'number');
  const after = await ok(t, dir, ['relay', 'key', 'list']);
  t.equal(after.keys[0].revokedAt, revoked.revokedAt, 'the list shows it revoked');
  t.equal(after.keys[1].revokedAt, null, 'the other is not');

  const human = await cli(dir, ['relay', 'key', 'list'], { json: false });
  t.match(human.stdout, /ID\s+NAME\s+CREATED\s+REVOKED/);
  t.match(human.stdout, /eu-west relay/);
});

t.test('bad input is refused and changes nothing', async (t) => {
  await expectRefused(t, dir, ['relay', 'key', 'revoke', 'rk_nope'], { error: 'Not found', detail: /Relay key rk_nope does not exist/ });
  await expectRefused(t, dir, ['relay', 'key', 'create', '--name', '   '], { error: 'Invalid request', detail: /name/ });
  const usage = await cli(dir, ['relay', 'key', 'create']);
  t.equal(usage.code, 2, 'a missing --name is a usage error');
  const group = await cli(dir, ['relay'], { json: false });
  t.match(group.stderr + group.stdout, /key create, key list, key revoke/, 'the group names its commands');
});
