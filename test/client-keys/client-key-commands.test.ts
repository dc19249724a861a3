// Client keys' commands in-process (src/client-keys/client-key-commands.ts): at most 50 not revoked per
// project, a refusal that changes nothing, and a revoked key's place freed; a person needs a flag
// editor's role, and a Viewer is refused.
import t from 'tap';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { kMaxActiveClientKeys } from '../../src/client-keys/client-key-commands.js';
import { listClientKeys } from '../../src/client-keys/records.js';
import { jsonBody } from '../../src/model/request-body.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { buildWorld } from '../helpers/world.js';

const world = buildWorld(tempDir(t, 'flagwire-client-keys-'));
t.teardown(() => world.store.close());
const { ids } = world;
const make = (name: string, principal = kOperator, projectId = ids.single, environment?: string) =>
  world.run('clientKeyCreate', {
    principal,
    projectId,
    received: jsonBody(JSON.stringify({ name, uses: ['events'], environment })),
  });

t.test(`at most ${kMaxActiveClientKeys} keys not revoked per project; a revoked key frees its place`, async (t) => {
  const made = Array.from({ length: kMaxActiveClientKeys }, (_, i) => make(`key ${i}`));
  const before = world.snapshot();
  t.throws(() => make('one too many'), {
    code: 'INVALID_REQUEST',
    detail: 'A project has at most 50 client keys that are not revoked: revoke one first.',
  });
  t.equal(world.snapshot(), before, 'the refusal changed nothing');
  world.run('clientKeyRevoke', { principal: kOperator, keyId: made[0]!.id });
  t.match(make('in its place'), { name: 'in its place', revokedAt: null });
  t.equal(listClientKeys(world.store, ids.single).length, kMaxActiveClientKeys + 1, 'the revoked one stays listed');
});

t.test("a person needs a flag editor's role", async (t) => {
  t.match(make('by an editor', principalOf(ids.editor), ids.multi, 'staging'), { createdBy: `user:${ids.editor}` });
  t.throws(() => make('by a viewer', principalOf(ids.viewer), ids.multi, 'staging'), { code: 'FORBIDDEN' });
});
