// Protected environments (docs/web-console.md), in-process against a real store: the writer command
// that marks an environment protected or not, who may, what it refuses with nothing written, the audit
// entry, a record left as it was when nothing is protected, and a rename that keeps the protection.
import { principalOf, kOperator } from '../../src/actor/audit-actor.js';
import t from 'tap';
import type { TestContext } from '../helpers/cli.js';
import { commandStore } from '../helpers/command-store.js';
import { getProject } from '../../src/model/records/project-records.js';

const at = Date.UTC(2030, 0, 1);

function setUp(t: TestContext) {
  const { store, run, refused, member } = commandStore(t, 'flagwire-env-protect-', at);
  const org = run('orgCreate', { principal: kOperator, name: 'A', plan: 'teams' });
  const admin = member(org.id, 'admin', 'admin@a.test', 'Admin');
  const editor = member(org.id, 'editor', 'editor@a.test', 'Editor');
  const environments = ['staging', 'production'];
  const multi = run('projectCreate', { principal: kOperator, name: 'M', orgId: org.id, kind: 'multi', environments });
  const single = run('projectCreate', { principal: kOperator, name: 'S', orgId: org.id });
  return { store, run, refused, admin, editor, multi, single };
}

t.test('an Admin protects and unprotects an environment, audited; the record is as before once none is', async (t) => {
  const { store, run, admin, multi } = setUp(t);
  const before = getProject(store, multi.id);
  const on = run('envProtect', { projectId: multi.id, env: 'production', protect: true, principal: principalOf(admin.id) });
  t.same(on.protectedEnvironments, ['production']);
  t.same(getProject(store, multi.id)?.protectedEnvironments, ['production'], 'written');
  t.same(
    run('envProtect', { projectId: multi.id, env: 'production', protect: true, principal: principalOf(admin.id) }),
    on,
    'again: no change',
  );
  const entries = store.listAudit(multi.id, { limit: 10, before: null }).filter((e) => e.action === 'env.protect');
  t.equal(entries.length, 1, 'one entry for one change');
  t.match(entries[0], { actor: `user:${admin.id}`, env: 'production', changes: { protected: { before: false, after: true } } });
  run('envProtect', { projectId: multi.id, env: 'production', protect: false, principal: principalOf(admin.id) });
  t.strictSame(getProject(store, multi.id), before, 'nothing protected: the record as it was');
});

t.test('a rename keeps the protection under the new name', async (t) => {
  const { store, run, admin, multi } = setUp(t);
  run('envProtect', { projectId: multi.id, env: 'production', protect: true, principal: principalOf(admin.id) });
  run('envRename', { projectId: multi.id, from: 'production', to: 'prod', principal: principalOf(admin.id) });
  t.same(getProject(store, multi.id)?.protectedEnvironments, ['prod']);
});

t.test('refused, nothing written: an Editor, an unknown environment, a single-environment project', async (t) => {
  const { refused, editor, admin, multi, single } = setUp(t);
  t.match(refused('envProtect', { projectId: multi.id, env: 'production', protect: true, principal: principalOf(editor.id) }), {
    code: 'FORBIDDEN',
  });
  t.match(refused('envProtect', { projectId: multi.id, env: 'nope', protect: true, principal: principalOf(admin.id) }), {
    code: 'INVALID_REQUEST',
    message: 'unknown environment "nope"; valid environments: staging, production',
  });
  t.match(refused('envProtect', { projectId: single.id, env: 'production', protect: true, principal: principalOf(admin.id) }), {
    code: 'INVALID_REQUEST',
  });
});
