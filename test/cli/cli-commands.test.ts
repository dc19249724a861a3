// Every console command with --json against a fresh data dir: the object it prints, its refusals
// (exit 1, {error, detail}, store unchanged), and what it leaves in the audit log. The subtests run
// in order and build on each other.
import { createHash } from 'node:crypto';
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { cli, expectAllRefused, expectRefused, inStore, ok } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { putActivity } from '../../src/model/records/token-records.js';
import { appendMail } from '../../src/model/records/mail-records.js';

const kDayMs = 24 * 3600 * 1000;
const dir = tempDir(t);
const ids: Record<string, string> = {};

t.test('org create', async (t) => {
  const before = Date.now();
  const org = await ok(t, dir, ['org', 'create', '--name', '  Acme  ']);
  t.match(org, { id: /^\S+$/, name: 'Acme', plan: 'free', trialEndsAt: null, standing: 'good', createdAt: Number });
  ids.org = org.id;

  const trial = await ok(t, dir, [
    'org',
    'create',
    '--name',
    'Trial Co',
    '--plan',
    'teams-trial',
    '--trial-ends',
    '2031-06-30T12:00:00+02:00',
  ]);
  t.equal(trial.plan, 'teams-trial');
  t.equal(trial.trialEndsAt, Date.UTC(2031, 5, 30, 10), 'trialEndsAt is the stored Unix ms');
  const defaultTrial = await ok(t, dir, ['org', 'create', '--name', 'Trial 2', '--plan', 'teams-trial']);
  t.ok(
    defaultTrial.trialEndsAt >= before + 14 * kDayMs && defaultTrial.trialEndsAt <= Date.now() + 14 * kDayMs,
    'a trial runs 14 days by default',
  );
  const teams = await ok(t, dir, ['org', 'create', '--name', 'Teams Co', '--plan', 'teams']);
  ids.teamsOrg = teams.id;

  await expectAllRefused(t, dir, [
    [
      ['org', 'create', '--name', 'X', '--plan', 'gold'],
      { error: 'Invalid request', detail: /plan must be one of free, pro, teams, enterprise, teams-trial/ },
    ],
    [
      ['org', 'create', '--name', 'X', '--plan', 'teams', '--trial-ends', '2031-01-01'],
      { error: 'Invalid request', detail: /only applies to the teams-trial plan/ },
    ],
    [['org', 'create', '--name', '   '], { error: 'Invalid request', detail: /name must be a non-blank string/ }],
  ]);
});

t.test('org update', async (t) => {
  const pro = await ok(t, dir, ['org', 'update', ids.org!, '--plan', 'pro']);
  t.match(pro, { id: ids.org, name: 'Acme', plan: 'pro', trialEndsAt: null, standing: 'good' });
  const lapsed = await ok(t, dir, ['org', 'update', ids.org!, '--standing', 'lapsed']);
  t.match(lapsed, { plan: 'pro', standing: 'lapsed' });
  const trial = await ok(t, dir, ['org', 'update', ids.org!, '--plan', 'teams-trial', '--trial-ends', '2032-01-01', '--standing', 'good']);
  t.match(trial, { plan: 'teams-trial', trialEndsAt: Date.UTC(2032, 0, 1), standing: 'good' });
  const moved = await ok(t, dir, ['org', 'update', ids.org!, '--trial-ends', '2032-02-01']);
  t.equal(moved.trialEndsAt, Date.UTC(2032, 1, 1));
  const enterprise = await ok(t, dir, ['org', 'update', ids.org!, '--plan', 'enterprise']);
  t.match(enterprise, { plan: 'enterprise', trialEndsAt: null });

  await expectAllRefused(t, dir, [
    [['org', 'update', 'org_missing', '--plan', 'teams'], { error: 'Not found', detail: /No organisation with id "org_missing"/ }],
    [['org', 'update', ids.org!, '--standing', 'great'], { error: 'Invalid request', detail: /standing must be good or lapsed/ }],
    [['org', 'update', ids.org!, '--plan', 'platinum'], { error: 'Invalid request', detail: /plan must be one of/ }],
  ]);
});

t.test('user create', async (t) => {
  const olive = await ok(t, dir, ['user', 'create', '--email', 'olive@acme.test', '--name', 'Olive Owner']);
  t.match(olive, { id: /^\S+$/, email: 'olive@acme.test', name: 'Olive Owner' });
  const ed = await ok(t, dir, ['user', 'create', '--email', 'ed@acme.test']);
  t.match(ed, { email: 'ed@acme.test', name: 'ed' }, 'name defaults to the e-mail local part');
  ids.owner = olive.id;
  ids.editor = ed.id;
  await expectAllRefused(t, dir, [
    [['user', 'create', '--email', 'OLIVE@acme.test'], { error: 'Invalid request', detail: /already exists/ }],
    [['user', 'create', '--email', 'not-an-address'], { error: 'Invalid request', detail: /is not an e-mail address/ }],
    [['user', 'create', '--email', `${'a'.repeat(250)}@x.test`], { error: 'Invalid request', detail: /at most 254 characters/ }],
  ]);
});

t.test('org add-member', async (t) => {
  t.strictSame(await ok(t, dir, ['org', 'add-member', ids.teamsOrg!, ids.owner!, '--role', 'owner']), {
    orgId: ids.teamsOrg,
    userId: ids.owner,
    role: 'owner',
  });
  t.strictSame(await ok(t, dir, ['org', 'add-member', ids.teamsOrg!, ids.editor!, '--role', 'viewer']), {
    orgId: ids.teamsOrg,
    userId: ids.editor,
    role: 'viewer',
  });
  t.strictSame(
    await ok(t, dir, ['org', 'add-member', ids.teamsOrg!, ids.editor!, '--role', 'editor']),
    { orgId: ids.teamsOrg, userId: ids.editor, role: 'editor' },
    'a second call changes the role',
  );
  await expectAllRefused(t, dir, [
    [
      ['org', 'add-member', ids.teamsOrg!, ids.editor!, '--role', 'superuser'],
      { error: 'Invalid request', detail: /role must be one of owner, admin, editor, viewer/ },
    ],
    [
      ['org', 'add-member', ids.teamsOrg!, 'usr_missing', '--role', 'editor'],
      { error: 'Not found', detail: /No user with id "usr_missing"/ },
    ],
    [['org', 'add-member', 'org_missing', ids.editor!, '--role', 'editor'], { error: 'Not found', detail: /No organisation/ }],
  ]);
});

t.test('project create', async (t) => {
  const single = await ok(t, dir, ['project', 'create', '--name', 'Shop', '--org', ids.teamsOrg!]);
  t.match(single, { id: /^\S+$/, name: 'Shop', kind: 'single', environments: [], orgId: ids.teamsOrg, ownerUserId: null });
  const multi = await ok(t, dir, [
    'project',
    'create',
    '--name',
    'Platform',
    '--org',
    ids.teamsOrg!,
    '--kind',
    'multi',
    '--env',
    'staging',
    '--env',
    'qa,production',
  ]);
  t.match(multi, { name: 'Platform', kind: 'multi', environments: ['staging', 'qa', 'production'] });
  const bare = await ok(t, dir, ['project', 'create', '--name', 'Bare', '--org', ids.teamsOrg!, '--kind', 'multi']);
  t.strictSame(bare.environments, []);
  const personal = await ok(t, dir, ['project', 'create', '--name', 'Mine', '--owner', ids.owner!]);
  t.match(personal, { kind: 'single', orgId: null, ownerUserId: ids.owner });
  Object.assign(ids, { single: single.id, multi: multi.id, personal: personal.id });

  await expectAllRefused(t, dir, [
    [
      ['project', 'create', '--name', 'S', '--org', ids.teamsOrg!, '--env', 'staging'],
      { error: 'Invalid request', detail: /single-environment project has no environments/ },
    ],
    [
      ['project', 'create', '--name', 'S', '--org', ids.teamsOrg!, '--kind', 'triple'],
      { error: 'Invalid request', detail: /kind must be single or multi/ },
    ],
    [
      ['project', 'create', '--name', 'S', '--org', ids.teamsOrg!, '--kind', 'multi', '--env', 'a', '--env', 'a'],
      { error: 'Invalid request', detail: /repeat/ },
    ],
    [
      ['project', 'create', '--name', 'S', '--org', ids.teamsOrg!, '--kind', 'multi', '--env', 'bad name'],
      { error: 'Invalid request', detail: /environment name "bad name"/ },
    ],
    [['project', 'create', '--name', 'S', '--org', 'org_missing'], { error: 'Not found' }],
    [['project', 'create', '--name', 'S', '--owner', 'usr_missing'], { error: 'Not found', detail: /usr_missing/ }],
  ]);
});

t.test('env add and env rename', async (t) => {
  const added = await ok(t, dir, ['env', 'add', ids.multi!, 'eu-1']);
  t.match(added, { id: ids.multi, environments: ['staging', 'qa', 'production', 'eu-1'] });
  const renamed = await ok(t, dir, ['env', 'rename', ids.multi!, 'qa', 'test']);
  t.strictSame(renamed.environments, ['staging', 'test', 'production', 'eu-1']);
  await expectAllRefused(t, dir, [
    [['env', 'add', ids.multi!, 'staging'], { error: 'Invalid request', detail: /"staging" already exists/ }],
    [['env', 'add', ids.single!, 'staging'], { error: 'Invalid request', detail: /single-environment project has no environments/ }],
    [
      ['env', 'rename', ids.multi!, 'nope', 'x'],
      { error: 'Invalid request', detail: /unknown environment "nope"; valid environments: staging, test, production, eu-1/ },
    ],
    [['env', 'rename', ids.multi!, 'test', 'staging'], { error: 'Invalid request', detail: /already exists/ }],
    [['env', 'add', 'prj_missing', 'x'], { error: 'Not found', detail: /No project with id "prj_missing"/ }],
  ]);
});

t.test('audience create and update', async (t) => {
  const audience = await ok(t, dir, [
    'audience',
    'create',
    ids.single!,
    '--name',
    'Beta',
    '--rule',
    'plan=beta,pro',
    '--rule',
    'country=DE',
  ]);
  t.match(audience, {
    id: /^\S+$/,
    projectId: ids.single,
    name: 'Beta',
    rules: [
      { attribute: 'plan', values: ['beta', 'pro'] },
      { attribute: 'country', values: ['DE'] },
    ],
  });
  const renamed = await ok(t, dir, ['audience', 'update', audience.id, '--name', 'Beta testers']);
  t.match(renamed, { id: audience.id, name: 'Beta testers', rules: audience.rules });
  const rerouted = await ok(t, dir, ['audience', 'update', audience.id, '--rule', 'tier=gold']);
  t.strictSame(rerouted.rules, [{ attribute: 'tier', values: ['gold'] }]);
  t.equal(rerouted.name, 'Beta testers');

  await expectAllRefused(t, dir, [
    [
      ['audience', 'create', ids.single!, '--name', 'A', '--rule', 'cohort=x'],
      { error: 'Invalid request', detail: /"cohort" is never an attribute/ },
    ],
    [
      ['audience', 'create', ids.single!, '--name', 'A', '--rule', 'plan='],
      { error: 'Invalid request', detail: /each rule needs an attribute and at least one value/ },
    ],
    [['audience', 'create', 'prj_missing', '--name', 'A', '--rule', 'a=b'], { error: 'Not found' }],
    [['audience', 'update', 'aud_missing', '--name', 'A'], { error: 'Not found', detail: /No audience with id "aud_missing"/ }],
  ]);
});

t.test('flag rename, describe, tags, cohorts, delete', async (t) => {
  const single = await ok(t, dir, ['flag', 'create', ids.single!, '--name', 'checkout', '--enabled']);
  const other = await ok(t, dir, ['flag', 'create', ids.single!, '--name', 'banner']);
  // `flag create` sets no cohorts: this group flag, with an environment's own cohorts, comes from the writer's command.
  const group = await inStore(dir, (run) =>
    run('flagCreate', {
      projectId: ids.multi!,
      body: { name: 'search', environments: { staging: { enabled: true, cohorts: ['qa-team'] } } },
      principal: kOperator,
    }),
  );
  ids.flag = single.id;
  ids.groupFlag = group.id;

  const renamed = await ok(t, dir, ['flag', 'rename', single.id, 'new-checkout']);
  t.match(renamed, { id: single.id, projectId: ids.single, name: 'new-checkout', kind: 'flag', state: { enabled: true } });
  t.ok(renamed.updatedAt > single.updatedAt, 'updatedAt moves on');
  const described = await ok(t, dir, ['flag', 'describe', single.id, 'The redesigned checkout']);
  t.equal(described.description, 'The redesigned checkout');
  const tagged = await ok(t, dir, ['flag', 'tags', single.id, 'web, checkout,web']);
  t.strictSame(tagged.tags, ['web', 'checkout']);
  const untagged = await ok(t, dir, ['flag', 'tags', single.id, '']);
  t.strictSame(untagged.tags, [], '"" clears the tags');

  const wide = await ok(t, dir, ['flag', 'cohorts', group.id, 'alice,bob']);
  t.match(wide, { id: group.id, kind: 'groupflag', cohorts: ['alice', 'bob'] });
  t.strictSame(wide.environments.staging.cohorts, ['qa-team'], 'an environment override stays');
  const cleared = await ok(t, dir, ['flag', 'cohorts', group.id, '']);
  t.strictSame(cleared.cohorts, []);

  await expectAllRefused(t, dir, [
    [['flag', 'rename', single.id, 'banner'], { error: 'Invalid request', detail: /a flag named "banner" already exists/ }],
    [['flag', 'rename', single.id, ' '], { error: 'Invalid request', detail: /name must be a non-blank string/ }],
    [['flag', 'describe', single.id, 'x'.repeat(2001)], { error: 'Invalid request', detail: /at most 2000 characters/ }],
    [['flag', 'cohorts', single.id, 'a'], { error: 'Invalid request', detail: /only a group flag has a flag-wide cohort list/ }],
    [['flag', 'tags', 'flg_missing', 'a'], { error: 'Not found', detail: /No flag with id "flg_missing"/ }],
  ]);

  t.strictSame(await ok(t, dir, ['flag', 'delete', other.id]), { id: other.id, deleted: true });
  await expectAllRefused(t, dir, [
    [['flag', 'delete', other.id], { error: 'Not found' }],
    [['flag', 'rename', other.id, 'again'], { error: 'Not found' }],
  ]);
});

t.test('audit: newest first, --limit, --before, field changes', async (t) => {
  const { entries } = await ok(t, dir, ['audit', ids.single!]);
  t.strictSame(
    entries.map((e: { action: string }) => e.action),
    [
      'flag.delete',
      'flag.tags',
      'flag.tags',
      'flag.describe',
      'flag.rename',
      'flag.create',
      'flag.create',
      'audience.update',
      'audience.update',
      'audience.create',
    ],
  );
  const seqs = entries.map((e: { seq: number }) => e.seq);
  t.strictSame(
    seqs,
    [...seqs].sort((a: number, b: number) => b - a),
    'newest first',
  );
  const rename = entries.find((e: { action: string }) => e.action === 'flag.rename');
  t.match(rename, {
    seq: Number,
    at: Number,
    actor: 'console',
    actorName: 'console',
    action: 'flag.rename',
    flagId: ids.flag,
    env: null,
    changes: { name: { before: 'checkout', after: 'new-checkout' } },
  });
  const limited = await ok(t, dir, ['audit', ids.single!, '--limit', '2']);
  t.strictSame(limited.entries, entries.slice(0, 2));
  t.equal(limited.nextBefore, entries[1].seq, 'nextBefore: the --before of the next page');
  const page = await ok(t, dir, ['audit', ids.single!, '--limit', '3', '--before', String(entries[1].seq)]);
  t.strictSame(page.entries, entries.slice(2, 5), '--before pages back');
  t.equal(page.nextBefore, entries[4].seq);
  const last = await ok(t, dir, ['audit', ids.single!, '--limit', String(entries.length - 4), '--before', String(page.nextBefore)]);
  t.strictSame(last, { entries: entries.slice(5), nextBefore: null }, 'the last page says the log is exhausted');
  t.equal((await ok(t, dir, ['audit', ids.single!])).nextBefore, null, `the whole log (${entries.length} entries) fits the default page`);
  t.equal(
    (await ok(t, dir, ['audit', ids.single!, '--limit', String(entries.length)])).nextBefore,
    null,
    'a page that ends exactly at the oldest entry',
  );
  const multi = await ok(t, dir, ['audit', ids.multi!]);
  t.strictSame(
    multi.entries.map((e: { action: string }) => e.action),
    ['flag.cohorts', 'flag.cohorts', 'flag.create', 'env.rename', 'env.add'],
  );
  t.strictSame(multi.entries[0].changes, { cohorts: { before: ['alice', 'bob'], after: [] } });
  t.strictSame(
    await ok(t, dir, ['audit', ids.personal!]),
    { entries: [], nextBefore: null },
    'an empty log is {entries: [], nextBefore: null}',
  );
  await expectRefused(t, dir, ['audit', 'prj_missing'], { error: 'Not found', detail: /No project with id "prj_missing"/ });

  const human = await cli(dir, ['audit', ids.single!, '--limit', '5'], { json: false });
  t.match(human.stdout, /console +flag\.rename +\S+ +- +name: "checkout" -> "new-checkout"/);
  t.match(human.stdout, /flag\.tags +\S+ +- +tags: \["web","checkout"\] -> \[\]/);
  t.match(human.stdout, new RegExp(`\\nOlder entries: add --before ${entries[4].seq}\\n$`), 'people are told there is more');
  t.notMatch((await cli(dir, ['audit', ids.single!], { json: false })).stdout, /Older entries/);
});

t.test('audit: 50 entries by default, and nextBefore says the log goes on', async (t) => {
  const project = await ok(t, dir, ['project', 'create', '--name', 'Busy', '--org', ids.teamsOrg!]);
  const created = await inStore(dir, (run) =>
    Array.from({ length: 55 }, (_, i) => run('flagCreate', { projectId: project.id, body: { name: `f${i}` }, principal: kOperator }).id),
  );
  const first = await ok(t, dir, ['audit', project.id]);
  t.equal(first.entries.length, 50, 'the default page');
  t.strictSame(
    first.entries.map((e: { flagId: string }) => e.flagId),
    created.slice(5).reverse(),
    'the 50 newest',
  );
  t.equal(first.nextBefore, first.entries[49].seq);
  const rest = await ok(t, dir, ['audit', project.id, '--before', String(first.nextBefore)]);
  t.strictSame(
    rest.entries.map((e: { flagId: string }) => e.flagId),
    created.slice(0, 5).reverse(),
    'the 5 older ones',
  );
  t.equal(rest.nextBefore, null);
});

t.test('token create, list, rotate, revoke, activity', async (t) => {
  const created = await ok(t, dir, [
    'token',
    'create',
    ids.multi!,
    '--as',
    ids.editor!,
    '--name',
    'deploy',
    '--permission',
    'write',
    '--env',
    'staging,production',
    '--expires',
    '90d',
  ]);
  t.match(created, {
    id: /^[0-9A-Za-z]{20}$/,
    secret: /^fw_[0-9A-Za-z]+$/,
    name: 'deploy',
    permission: 'write',
    environments: ['staging', 'production'],
    expiresAt: Number,
    projectId: ids.multi,
    createdBy: ids.editor,
    revokedAt: null,
  });
  t.notOk('secretHash' in created);

  const listed = await ok(t, dir, ['token', 'list', ids.multi!]);
  t.equal(listed.tokens.length, 1);
  const { secret, ...view } = created;
  t.strictSame(listed.tokens[0], view, 'the list shows everything but the secret');
  t.notMatch(JSON.stringify(listed), secret);
  t.notMatch(JSON.stringify(listed), createHash('sha256').update(secret).digest('hex'), 'nor its hash');

  const rotated = await ok(t, dir, ['token', 'rotate', created.id, '--as', ids.editor!]);
  t.match(rotated, { name: 'deploy', permission: 'write', environments: ['staging', 'production'], secret: /^fw_/ });
  t.equal(rotated.expiresAt - rotated.createdAt, created.expiresAt - created.createdAt, 'same 90-day lifetime, from the rotation');
  t.not(rotated.id, created.id);
  t.not(rotated.secret, created.secret);
  const revoked = await ok(t, dir, ['token', 'revoke', rotated.id, '--as', ids.owner!]);
  t.strictSame(Object.keys(revoked).sort(), ['id', 'revokedAt']);
  t.equal(revoked.id, rotated.id);
  t.ok(revoked.revokedAt > 0);
  const after = await ok(t, dir, ['token', 'list', ids.multi!]);
  t.strictSame(
    after.tokens.map((x: { id: string; revokedAt: number | null }) => [x.id, x.revokedAt !== null]),
    [
      [created.id, true],
      [rotated.id, true],
    ],
  );
  t.strictSame(await ok(t, dir, ['token', 'list', ids.personal!]), { tokens: [] });
  await expectRefused(t, dir, ['token', 'list', 'prj_missing'], { error: 'Not found' });

  const activity = await ok(t, dir, ['token', 'activity', created.id]);
  t.strictSame(activity, { tokenId: created.id, lastUsedAt: null, recent: [], denials: [] }, 'no activity: empty lists');
  const at = Date.now();
  await inStore(dir, (_run, w) =>
    putActivity(w, {
      tokenId: created.id,
      lastUsedAt: at,
      lastDenialMailAt: at,
      recent: [{ at, method: 'PATCH', path: `/api/v1/flags/${ids.groupFlag}?env=staging`, status: 200 }],
      denials: [{ at, reason: 'revoked', method: 'GET', path: '/api/v1/flags' }],
    }),
  );
  t.strictSame(await ok(t, dir, ['token', 'activity', created.id]), {
    tokenId: created.id,
    lastUsedAt: at,
    recent: [{ at, method: 'PATCH', path: `/api/v1/flags/${ids.groupFlag}?env=staging`, status: 200 }],
    denials: [{ at, reason: 'revoked', method: 'GET', path: '/api/v1/flags' }],
  });
  await expectRefused(t, dir, ['token', 'activity', 'tok_missing'], { error: 'Not found', detail: /No token with id "tok_missing"/ });

  const { entries } = await ok(t, dir, ['audit', ids.multi!, '--limit', '3']);
  t.match(entries, [
    {
      action: 'token.revoke',
      actor: `user:${ids.owner}`,
      actorName: 'Olive Owner',
      changes: { token: { before: { id: rotated.id }, after: null } },
    },
    {
      action: 'token.rotate',
      actor: `user:${ids.editor}`,
      actorName: 'ed',
      changes: { token: { before: { id: created.id }, after: { id: rotated.id } } },
    },
    {
      action: 'token.create',
      actor: `user:${ids.editor}`,
      changes: { token: { before: null, after: { id: created.id, name: 'deploy' } } },
    },
  ]);
});

t.test('mail list', async (t) => {
  t.strictSame(await ok(t, dir, ['mail', 'list']), { messages: [] });
  const at = Date.now();
  await inStore(dir, (_run, w) => {
    appendMail(w, {
      at,
      to: 'olive@acme.test',
      subject: 'Token "deploy" was refused',
      text: 'It was revoked.',
      sentAt: null,
      attempts: 0,
      nextAttemptAt: at,
      lastError: null,
      failedAt: null,
    });
    appendMail(w, {
      at: at + 1,
      to: 'ed@acme.test',
      subject: 'Second',
      text: 'Two',
      sentAt: at + 5,
      attempts: 1,
      nextAttemptAt: at,
      lastError: null,
      failedAt: null,
    });
  });
  const { messages } = await ok(t, dir, ['mail', 'list']);
  t.match(messages, [
    { seq: 1, at, to: 'olive@acme.test', subject: 'Token "deploy" was refused', text: 'It was revoked.', sentAt: null },
    { seq: 2, at: at + 1, to: 'ed@acme.test', subject: 'Second', text: 'Two', sentAt: at + 5 },
  ]);
});
