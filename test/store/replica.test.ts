// The LMDB store as a copy of a system of record (src/store/pg/): rehearse runs commands and leaves
// nothing written, recording exactly what the functions that succeeded wrote; applyRevisions applies
// a change set so that a copy reads as the store that recorded it (derived indexes and counters
// rebuilt), skips revisions already applied and refuses a gap; replaceAll makes a full copy, which
// replaces every database of the layout but meta.
import t from 'tap';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { jsonBody } from '../../src/model/request-body.js';
import { hashSecret } from '../../src/model/ids.js';
import { hashPassword } from '../../src/model/passwords.js';
import { kStoreLayout } from '../../src/capabilities.js';
import { exportStore } from '../helpers/store-export.js';
import { buildWorld } from '../helpers/world.js';
import { experimentPlan } from '../helpers/experiment-plan.js';
import { Store } from '../helpers/store.js';
import { runCommand } from '../../src/writer/thread/commands.js';
import { tempDir } from '../helpers/scratch-dir.js';
import type { TestContext } from '../helpers/cli.js';
import { listFlags } from '../../src/flags/records/flag-store.js';
import { listOrgs } from '../../src/model/records/org-records.js';
import { markDemoSeeded } from '../../src/writer/thread/demo-records.js';

const now = Date.UTC(2030, 0, 1);

t.test('rehearse writes nothing and records what the successful functions wrote', async (t) => {
  const source = Store.open(tempDir(t));
  const org = source.transact((w) => runCommand(w, 'orgCreate', { principal: kOperator, name: 'Acme', plan: 'teams' }, now));
  const project = source.transact((w) =>
    runCommand(w, 'projectCreate', { principal: kOperator, name: 'Shop', orgId: org.id, kind: 'single' }, now),
  );
  const before = source.configSeq();
  const { settled, changes } = source.rehearse([
    (w) => runCommand(w, 'flagCreate', { projectId: project.id, body: { name: 'a' }, principal: kOperator }, now),
    (w) => runCommand(w, 'flagCreate', { projectId: project.id, body: { name: 'a' }, principal: kOperator }, now),
    (w) => runCommand(w, 'flagCreate', { projectId: project.id, body: { name: 'b' }, principal: kOperator }, now),
  ]);
  t.strictSame(
    settled.map((s) => s.ok),
    [true, false, true],
    'the duplicate name fails alone, seeing the first in the same group',
  );
  t.equal(listFlags(source, project.id).length, 0, 'nothing written');
  t.equal(source.configSeq(), before, 'no commit');
  t.strictSame(
    changes.map((c) => c.kind),
    ['flag', 'audit', 'flag', 'audit'],
    "the failed function's writes are not recorded",
  );

  // A copy of the store before, applying the change set, reads exactly as the store applying it.
  const copy = Store.open(tempDir(t));
  copy.replaceAll('db-1', 0, source.exportRecords());
  t.equal(copy.applyRevisions([{ revision: 1, changes }]), 1);
  source.applyRevisions([{ revision: 1, changes }]);
  t.strictSame(
    listFlags(copy, project.id)
      .map((f) => f.name)
      .sort(),
    ['a', 'b'],
  );
  t.strictSame(copy.exportRecords(), source.exportRecords(), 'the same records');
  t.strictSame(
    copy.listAudit(project.id, { limit: 10, before: null }),
    source.listAudit(project.id, { limit: 10, before: null }),
    'the same audit, sequence numbers included',
  );
  t.equal(copy.replicaRevision(), 1);
  t.equal(copy.replicaOf(), 'db-1');

  t.equal(copy.applyRevisions([{ revision: 1, changes }]), 1, 'a revision already applied is skipped');
  t.equal(listFlags(copy, project.id).length, 2);
  t.throws(() => copy.applyRevisions([{ revision: 3, changes: [] }]), /gap/, 'a gap is refused');
  t.equal(copy.replicaRevision(), 1, 'and applies nothing');
  await source.close();
  await copy.close();
});

t.test("replaceAll replaces everything, and keeps the copy's configSeq moving", async (t) => {
  const copy = Store.open(tempDir(t));
  copy.transact((w) => runCommand(w, 'orgCreate', { principal: kOperator, name: 'Old', plan: 'teams' }, now));
  const seq = copy.configSeq();
  copy.replaceAll('db-2', 7, [
    { kind: 'org', value: { id: 'org_new', name: 'New', plan: 'free', trialEndsAt: null, standing: 'good', createdAt: now } },
  ]);
  t.strictSame(
    listOrgs(copy).map((o) => o.name),
    ['New'],
  );
  t.ok(copy.configSeq() > seq, 'readers see a new commit number');
  t.equal(copy.replicaRevision(), 7);
  copy.replaceAll('db-2', 6, []);
  t.strictSame(
    listOrgs(copy).map((o) => o.name),
    ['New'],
    'an older full copy of the same database never replaces a newer one',
  );
  await copy.close();
});

/**
 * A data dir in which every database of the layout holds entries, and every exported kind records; its
 * store closed. The tests below read the databases and kinds from the layout (kStoreLayout), so a
 * capability that declares a new one fails them, naming it, until it is written here
 * (docs/architecture.md, "Adding a capability").
 */
async function everyDatabase(t: TestContext): Promise<string> {
  const dir = tempDir(t);
  // Every database of the layout holds entries: the world's accounts, projects, flags and tokens, and
  // a webhook with a pending delivery, a scheduled change, a rollout, an invitation (its mail queued), a
  // password, the demo seed's mark, a session, usage, a flag set's read, token activity, a relay key, a client key, code references,
  // a shared fragment, SCIM's settings, user and group, and single sign-on's settings, a sign-in under
  // way and a person signed in.
  const world = buildWorld(dir);
  const { ids } = world;
  const at = Date.now();
  const received = jsonBody(JSON.stringify({ url: 'https://hooks.example.com/gone' }));
  world.run('webhookCreate', { principal: kOperator, projectId: ids.single, received }, at);
  world.run('flagPatch', { flagId: ids.flag, env: null, principal: kOperator, patch: { trafficPercentage: 40 } } as never, at);
  world.run(
    'scheduleCreate',
    { principal: kOperator, flagId: ids.flag, env: null, body: { at: at + 3_600_000, patch: { enabled: false } } },
    at,
  );
  world.run(
    'rolloutStart',
    {
      principal: kOperator,
      flagId: ids.flag,
      env: null,
      body: { steps: [{ trafficPercentage: 10, holdMs: 3_600_000 }, { trafficPercentage: 100 }] },
      guardMetrics: null,
    },
    at,
  );
  world.run(
    'orgInvite',
    { orgId: ids.orgA, email: 'new@a.test', role: 'viewer', principal: principalOf(ids.owner), consoleUrl: 'http://127.0.0.1/console/' },
    at,
  );
  // A person's password (it ends that person's sessions, so another's than the session's below), and
  // the demo seed's mark, the store's own kind, which only the seed writes.
  world.run('userPassword', { userId: ids.viewer, passwordHash: await hashPassword('a long enough password') }, at);
  world.store.transact((w) => markDemoSeeded(w, at));
  world.run('sessionStart', { userId: ids.owner, idHash: 'a'.repeat(64), csrfToken: 'csrf', expiresAt: at + 3_600_000 }, at);
  world.run('recordUsage', { counts: [{ flagId: ids.flag, environment: '', evaluations: 3, lastEvaluatedAt: at }] });
  world.run('recordFlagSetReads', { reads: [{ projectId: ids.single, environment: null, at }] });
  world.run(
    'countUsageReport',
    {
      sender: { kind: 'token' as const, tokenId: world.tokenIds.read!, projectId: ids.single },
      batchId: 'replica-batch',
      counts: [{ flagId: ids.flag, environment: '', evaluations: 2, lastEvaluatedAt: at }],
    },
    at,
  );
  world.run('recordActivity', { batches: [{ tokenId: world.tokenIds.read!, lastUsedAt: at, recent: [], denials: [] }] }, at);
  world.run('relayKeyCreate', { name: 'edge' }, at);
  world.run(
    'clientKeyCreate',
    { principal: kOperator, projectId: ids.single, received: jsonBody(JSON.stringify({ name: 'web', uses: ['events'] })) },
    at,
  );
  world.run(
    'codeRefsPush',
    {
      principal: kOperator,
      projectId: ids.single,
      received: jsonBody(JSON.stringify({ repository: 'app', branch: 'main', commit: 'c1', references: [] })),
    },
    at,
  );
  const fragment = jsonBody(JSON.stringify({ name: 'paying', rule: { '==': [{ var: 'plan' }, 'pro'] } }));
  world.run('fragmentCreate', { principal: kOperator, projectId: ids.single, received: fragment }, at);
  const experiment = experimentPlan(ids.flag, 1000);
  world.run(
    'experimentCreate',
    { principal: kOperator, projectId: ids.single, env: null, received: jsonBody(JSON.stringify(experiment)) },
    at,
  );
  // SCIM on for an organisation, with a user and a group provisioned.
  const { secret } = world.run('scimEnable', { orgId: ids.orgA, principal: principalOf(ids.owner) }, at);
  const scim = { orgId: ids.orgA, secretHash: hashSecret(secret), base: 'http://127.0.0.1/scim/v2', verb: 'create' as const };
  world.run('scimUserWrite', { ...scim, body: { userName: 'provisioned@a.test' } }, at);
  world.run('scimGroupWrite', { ...scim, body: { displayName: 'Leads' } }, at);
  // Single sign-on for another organisation: its settings, a sign-in's used state and a person signed in.
  const issuer = 'https://idp.example.com';
  const sso = jsonBody(JSON.stringify({ issuer, clientId: 'flagwire', clientSecret: 'secret' }));
  world.run('ssoSet', { orgId: ids.orgB, principal: kOperator, received: sso }, at);
  world.run('ssoStateUse', { orgId: ids.orgB, stateHash: 'c'.repeat(64), expiresAt: at + 600_000 }, at);
  const session = { idHash: 'd'.repeat(64), csrfToken: 'csrf', expiresAt: at + 3_600_000 };
  world.run('ssoSignIn', { orgId: ids.orgB, issuer, subject: 's-owner', email: 'owner@b.test', name: null, groups: [], session }, at);
  // A guarded environment: a scheduled change there is held as a change request, and once approved its
  // plan is an approved plan.
  world.run('approvalsSet', { projectId: ids.single, env: null, required: 1, principal: kOperator }, at);
  const held = world.outcome(
    'scheduleCreate',
    { principal: kOperator, flagId: ids.flag, env: null, body: { at: at + 7_200_000, patch: { enabled: true } } },
    at,
  );
  if (held.applied) throw new Error('a change to a guarded environment was applied');
  world.run('requestApprove', { requestId: held.request.id, principal: principalOf(ids.owner) }, at);
  await world.store.close();
  return dir;
}

t.test('a full copy of an empty source leaves every database empty (issue 41)', async (t) => {
  const dir = await everyDatabase(t);
  const before = await exportStore(dir);
  t.strictSame(Object.keys(before).sort(), [...kStoreLayout.databases].sort(), "the file holds the layout's databases");
  // The store's own (meta, and the change log, which a full copy clears itself) aside.
  const replicated = kStoreLayout.copied;
  t.strictSame(
    replicated.filter((name) => before[name]!.length === 0),
    [],
    'before: every database but meta holds entries',
  );

  const copy = Store.open(dir);
  copy.replaceAll('db-empty', 1, []);
  await copy.close();

  const after = await exportStore(dir);
  t.strictSame(
    replicated.filter((name) => after[name]!.length > 0),
    [],
    'after: every database but meta is empty (webhooks and their deliveries included)',
  );
  t.strictSame(
    after.meta!.map(([key]) => key).sort(),
    ['configSeq', 'databases', 'fileId', 'keyedLookups', 'replicaOf', 'revision', 'schemaVersion'],
    "meta keeps only the file's own keys (the databases and lookups it holds among them: the copy rebuilds the lookups) and the copy's source and revision",
  );
});

t.test("an export of every kind, copied into an empty data dir, rebuilds every database as the source's", async (t) => {
  const dir = await everyDatabase(t);
  const source = Store.open(dir);
  const records = source.exportRecords();
  await source.close();
  const copyDir = tempDir(t);
  const copy = Store.open(copyDir);
  copy.replaceAll('db-source', 1, records);
  await copy.close();
  t.strictSame(
    kStoreLayout.kinds.filter((kind) => kind.exported && !records.some((r) => r.kind === kind.name)).map((kind) => kind.name),
    [],
    'the export holds records of every exported kind the layout declares',
  );
  const [before, after] = [await exportStore(dir), await exportStore(copyDir)];
  for (const name of kStoreLayout.databases.filter((name) => name !== 'meta')) t.strictSame(after[name], before[name], name);
});
