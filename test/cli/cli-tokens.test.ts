// Token rules through the console (spec: Token lifecycle, Authentication, Limits; design §3): who may
// create, rotate and revoke; 50 active tokens per project, expired unrevoked ones included; 365 days
// at most; no tokens on personal projects; no changes below Teams. Every refusal is checked to leave
// the store byte-for-byte unchanged.
import { createHash } from 'node:crypto';
import t from 'tap';
import type { Plan, Standing } from '../../src/model/accounts.js';
import { cli, expectAllRefused, expectRefused, inStore, ok } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { exportStore } from '../helpers/store-export.js';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';

const kDayMs = 24 * 3600 * 1000;
const kPlanRefused = { error: 'Plan does not include the Management API', detail: /not on Teams or Enterprise/ };
const kForbidden = 'Forbidden';

const dir = tempDir(t);
const ids: Record<string, string> = {};

// Set-up straight through the writer's commands (the console's org/user/project commands have their
// own tests): the token commands below are what runs through the CLI.
t.before(() =>
  inStore(dir, (run) => {
    const org = run('orgCreate', { principal: kOperator, name: 'Acme', plan: 'teams' });
    ids.org = org.id;
    for (const name of ['owner', 'admin', 'editor', 'editor2', 'viewer', 'outsider']) {
      ids[name] = run('userCreate', { email: `${name}@acme.test`, name }).id;
    }
    for (const role of ['owner', 'admin', 'editor', 'viewer'] as const)
      run('orgAddMember', { principal: kOperator, orgId: org.id, userId: ids[role]!, role });
    run('orgAddMember', { principal: kOperator, orgId: org.id, userId: ids.editor2!, role: 'editor' });
    ids.single = run('projectCreate', { principal: kOperator, name: 'Shop', orgId: org.id }).id;
    ids.multi = run('projectCreate', {
      principal: kOperator,
      name: 'Platform',
      orgId: org.id,
      kind: 'multi',
      environments: ['staging', 'production'],
    }).id;
    ids.personal = run('projectCreate', { principal: kOperator, name: 'Mine', ownerUserId: ids.owner! }).id;
    ids.busy = run('projectCreate', { principal: kOperator, name: 'Busy', orgId: org.id }).id;
  }),
);

/** Plan and standing changes between checks (`org update` itself is tested in cli-commands.test.ts). */
const setOrg = (change: { plan?: Plan; trialEndsAt?: number | null; standing?: Standing }) =>
  inStore(dir, (run) => run('orgUpdate', { orgId: ids.org!, ...change }));

const create = (projectId: string, asUser: string, ...extra: string[]) => [
  'token',
  'create',
  projectId,
  '--as',
  asUser,
  '--name',
  'ci',
  '--permission',
  'write',
  ...extra,
];

t.test('create: Editor, Admin or Owner; not a Viewer, not an outsider', async (t) => {
  for (const who of ['owner', 'admin', 'editor'] as const) {
    const token = await ok(t, dir, create(ids.single!, ids[who]!));
    t.match(token, { createdBy: ids[who], projectId: ids.single, revokedAt: null }, `${who} may create`);
  }
  await expectAllRefused(t, dir, [
    [create(ids.single!, ids.viewer!), { error: kForbidden, detail: /needs the Editor, Admin or Owner role.*is viewer/ }],
    [create(ids.single!, ids.outsider!), { error: kForbidden, detail: /is not a member/ }],
    [create(ids.single!, 'usr_nobody'), { error: kForbidden }],
    [create('prj_missing', ids.owner!), { error: 'Not found', detail: /No project with id "prj_missing"/ }],
  ]);
});

t.test('create: the secret is fw_-prefixed, shown once, and only its hash is stored', async (t) => {
  const token = await ok(t, dir, ['token', 'create', ids.single!, '--as', ids.editor!, '--name', 'read-only', '--permission', 'read']);
  t.match(token, {
    id: /^[0-9A-Za-z]{20}$/,
    secret: /^fw_[0-9A-Za-z]{20,}$/,
    name: 'read-only',
    permission: 'read',
    environments: [],
    expiresAt: 0,
  });
  for (const key of ['id', 'secret', 'name', 'permission', 'environments', 'expiresAt']) t.ok(key in token, `has ${key}`);
  const list = await cli(dir, ['token', 'list', ids.single!]);
  const shown = list.json.tokens.find((x: { id: string }) => x.id === token.id);
  t.ok(shown, 'listed');
  t.notOk('secret' in shown || 'secretHash' in shown, 'the list has no secret or hash field');
  t.notMatch(list.stdout, token.secret);
  const human = await cli(dir, ['token', 'list', ids.single!], { json: false });
  t.notMatch(human.stdout, token.secret);
  const everything = JSON.stringify(await exportStore(dir));
  t.notMatch(everything, token.secret, 'the secret is nowhere in the data file');
  t.match(everything, createHash('sha256').update(token.secret).digest('hex'), 'its SHA-256 is');
  t.not(
    (await ok(t, dir, ['token', 'create', ids.single!, '--as', ids.editor!, '--name', 'read-only', '--permission', 'read'])).secret,
    token.secret,
  );
  await expectAllRefused(t, dir, [
    [
      ['token', 'create', ids.single!, '--as', ids.editor!, '--name', 'x', '--permission', 'admin'],
      { error: 'Invalid request', detail: /permission must be read or write/ },
    ],
    [
      ['token', 'create', ids.single!, '--as', ids.editor!, '--name', ' ', '--permission', 'read'],
      { error: 'Invalid request', detail: /name must be a non-blank string/ },
    ],
  ]);
});

t.test('expiry: never, 30d, 90d or 365d; nothing longer', async (t) => {
  for (const [choice, days] of [
    ['30d', 30],
    ['90d', 90],
    ['365d', 365],
  ] as const) {
    const before = Date.now();
    const token = await ok(t, dir, create(ids.single!, ids.editor!, '--expires', choice));
    t.ok(
      token.expiresAt >= before + days * kDayMs && token.expiresAt <= Date.now() + days * kDayMs,
      `${choice}: expiresAt = creation + ${days} days`,
    );
  }
  t.equal((await ok(t, dir, create(ids.single!, ids.editor!, '--expires', 'never'))).expiresAt, 0, 'never is 0');
  const tooLong = { error: 'Invalid request', detail: /never, 30d, 90d, 365d \(the maximum lifetime is 365 days\)/ };
  await expectAllRefused(
    t,
    dir,
    ['400d', '366d', '1y', '0', ''].map((choice) => [create(ids.single!, ids.editor!, '--expires', choice), tooLong] as const),
  );
});

t.test('environments: named ones of a multi-environment project only', async (t) => {
  t.strictSame((await ok(t, dir, create(ids.multi!, ids.editor!, '--env', 'staging'))).environments, ['staging']);
  t.strictSame((await ok(t, dir, create(ids.multi!, ids.editor!, '--env', 'staging,production'))).environments, ['staging', 'production']);
  t.strictSame((await ok(t, dir, create(ids.multi!, ids.editor!))).environments, [], 'no --env: every environment');
  await expectAllRefused(t, dir, [
    [
      create(ids.multi!, ids.editor!, '--env', 'staging,prod'),
      { error: 'Invalid request', detail: /unknown environment "prod"; valid environments: staging, production/ },
    ],
    [create(ids.single!, ids.editor!, '--env', 'staging'), { error: 'Invalid request', detail: /single-environment project/ }],
  ]);
});

t.test('a personal project cannot have tokens', async (t) => {
  await expectRefused(t, dir, create(ids.personal!, ids.owner!), {
    error: 'Invalid request',
    detail: /personal project cannot have tokens/,
  });
  t.strictSame((await ok(t, dir, ['token', 'list', ids.personal!])).tokens, []);
});

t.test('revoke and rotate: the creator, an Admin or the Owner; nobody else', async (t) => {
  const mk = async () =>
    (await ok(t, dir, create(ids.multi!, ids.editor!, '--env', 'production', '--expires', '30d', '--name', 'deploy'))) as {
      id: string;
      secret: string;
      expiresAt: number;
    };
  const a = await mk();
  await expectAllRefused(
    t,
    dir,
    ['revoke', 'rotate'].flatMap((verb) =>
      ['editor2', 'viewer', 'outsider'].map(
        (who) =>
          [
            ['token', verb, a.id, '--as', ids[who]!],
            { error: kForbidden, detail: new RegExp(`Only the token's creator or an Admin .* may ${verb} token ${a.id}`) },
          ] as const,
      ),
    ),
  );

  // The creator rotates: same name, permission, environments and expiry setting (30 days, from the
  // rotation); new id and secret; the old one revoked.
  const b = await ok(t, dir, ['token', 'rotate', a.id, '--as', ids.editor!]);
  t.match(b, { name: 'deploy', permission: 'write', environments: ['production'], createdBy: ids.editor, revokedAt: null, secret: /^fw_/ });
  t.equal(b.expiresAt - b.createdAt, a.expiresAt - (a as unknown as { createdAt: number }).createdAt, 'same lifetime');
  t.not(b.id, a.id);
  t.not(b.secret, a.secret);
  const listed = (await ok(t, dir, ['token', 'list', ids.multi!])).tokens as { id: string; revokedAt: number | null }[];
  t.ok(listed.find((x) => x.id === a.id)!.revokedAt! > 0, 'the original is revoked');
  t.equal(listed.find((x) => x.id === b.id)!.revokedAt, null);
  await expectAllRefused(t, dir, [
    [['token', 'rotate', a.id, '--as', ids.editor!], { error: 'Invalid request', detail: /already revoked/ }],
    [['token', 'revoke', a.id, '--as', ids.owner!], { error: 'Invalid request', detail: /already revoked/ }],
  ]);

  // An Admin rotates someone else's token; the audit log names the Admin.
  const c = await ok(t, dir, ['token', 'rotate', b.id, '--as', ids.admin!]);
  t.equal(c.createdBy, ids.editor, 'the replacement keeps its creator');
  const { entries } = await ok(t, dir, ['audit', ids.multi!, '--limit', '1']);
  t.match(entries[0], { action: 'token.rotate', actor: `user:${ids.admin}`, actorName: 'admin' });

  t.match(await ok(t, dir, ['token', 'revoke', c.id, '--as', ids.owner!]), { id: c.id, revokedAt: Number }, 'the Owner may revoke');
  const d = await mk();
  t.match(await ok(t, dir, ['token', 'revoke', d.id, '--as', ids.admin!]), { id: d.id }, 'an Admin may revoke');
  const e = await mk();
  t.match(await ok(t, dir, ['token', 'revoke', e.id, '--as', ids.editor!]), { id: e.id }, 'the creator may revoke');

  // A creator who became a Viewer may no longer create tokens, nor revoke their own: a Viewer changes nothing.
  const f = await mk();
  await inStore(dir, (run) => run('orgAddMember', { principal: kOperator, orgId: ids.org!, userId: ids.editor!, role: 'viewer' }));
  await expectAllRefused(t, dir, [
    [create(ids.multi!, ids.editor!), { error: kForbidden, detail: /is viewer/ }],
    [['token', 'revoke', 'tok_missing', '--as', ids.owner!], { error: 'Not found', detail: /No token with id "tok_missing"/ }],
    [['token', 'rotate', 'tok_missing', '--as', ids.owner!], { error: 'Not found' }],
    [['token', 'revoke', f.id, '--as', ids.editor!], { error: kForbidden, detail: /a Viewer may not/ }],
  ]);
  await inStore(dir, (run) => run('orgAddMember', { principal: kOperator, orgId: ids.org!, userId: ids.editor!, role: 'editor' }));
});

t.test('below Teams: tokens are read-only; back on Teams they work again', async (t) => {
  const kept = await ok(t, dir, create(ids.single!, ids.editor!, '--name', 'kept'));
  const listBefore = await ok(t, dir, ['token', 'list', ids.single!]);
  const refusedEverywhere = async (label: string) => {
    await expectAllRefused(t, dir, [
      [create(ids.single!, ids.owner!), kPlanRefused],
      [['token', 'rotate', kept.id, '--as', ids.owner!], kPlanRefused],
      [['token', 'revoke', kept.id, '--as', ids.editor!], kPlanRefused],
    ]);
    t.strictSame(await ok(t, dir, ['token', 'list', ids.single!]), listBefore, `${label}: the tokens are still listed, unchanged`);
  };

  await setOrg({ plan: 'free' });
  await refusedEverywhere('free');
  await setOrg({ plan: 'pro' });
  await refusedEverywhere('pro');
  await setOrg({ plan: 'teams-trial', trialEndsAt: Date.UTC(2020, 0, 1) });
  await refusedEverywhere('ended Teams trial');
  await setOrg({ plan: 'teams', standing: 'lapsed' });
  await refusedEverywhere('Teams, lapsed');

  await setOrg({ plan: 'teams-trial', trialEndsAt: Date.now() + 7 * kDayMs, standing: 'good' });
  const onTrial = await ok(t, dir, create(ids.single!, ids.owner!, '--name', 'trial'));
  t.ok(onTrial.secret.startsWith('fw_'), 'an active Teams trial may create');
  t.match(await ok(t, dir, ['token', 'rotate', kept.id, '--as', ids.editor!]), { name: 'kept' }, 'and rotate the token made before');
  t.match(await ok(t, dir, ['token', 'revoke', onTrial.id, '--as', ids.owner!]), { id: onTrial.id }, 'and revoke');

  await setOrg({ plan: 'enterprise' });
  t.ok((await ok(t, dir, create(ids.single!, ids.owner!, '--name', 'ent'))).secret, 'Enterprise may create');
  await setOrg({ plan: 'teams' });
});

t.test('at most 50 active tokens per project; expired unrevoked ones count, revoked ones do not', async (t) => {
  // 40 live tokens and 9 that expired a day ago (created 31 days ago with 30d), made with the
  // writer's own command in this process: 49 CLI runs would only be slower.
  const now = Date.now();
  const made = await inStore(dir, (run) => {
    const live = Array.from({ length: 40 }, (_, i) =>
      run('tokenCreate', { projectId: ids.busy!, principal: principalOf(ids.owner!), name: `live-${i}`, permission: 'read' }),
    );
    const expired = Array.from({ length: 9 }, (_, i) =>
      run(
        'tokenCreate',
        { projectId: ids.busy!, principal: principalOf(ids.editor!), name: `old-${i}`, permission: 'read', expires: '30d' },
        now - 31 * kDayMs,
      ),
    );
    return { live, expired };
  });
  const before = (await ok(t, dir, ['token', 'list', ids.busy!])).tokens as { id: string; expiresAt: number; revokedAt: number | null }[];
  t.equal(before.length, 49);
  t.equal(before.filter((x) => x.expiresAt !== 0 && x.expiresAt < Date.now()).length, 9, '9 of them expired');

  const fiftieth = await ok(t, dir, create(ids.busy!, ids.editor!, '--name', 'fiftieth'));
  t.ok(fiftieth.secret, 'the 50th token is created');
  const full = /This project already has 50 active tokens \(expired tokens that were not revoked count\); revoke one first\./;
  await expectAllRefused(t, dir, [
    [create(ids.busy!, ids.owner!, '--name', 'fifty-first'), { error: 'Invalid request', detail: full }],
    [create(ids.busy!, ids.admin!, '--name', 'fifty-first', '--expires', '30d'), { error: 'Invalid request', detail: full }],
  ]);

  // Rotation keeps the count (the original is revoked first), so it works at the limit.
  const rotated = await ok(t, dir, ['token', 'rotate', fiftieth.id, '--as', ids.editor!]);
  t.equal(rotated.name, 'fiftieth');
  await expectRefused(t, dir, create(ids.busy!, ids.owner!), { error: 'Invalid request', detail: full });

  // Revoking an expired token frees its slot; then the project is full again.
  await ok(t, dir, ['token', 'revoke', made.expired[0]!.id, '--as', ids.editor!]);
  t.ok((await ok(t, dir, create(ids.busy!, ids.owner!, '--name', 'after-revoke'))).secret, 'a revoked expired token no longer counts');
  await expectRefused(t, dir, create(ids.busy!, ids.owner!), { error: 'Invalid request', detail: full });
  const after = (await ok(t, dir, ['token', 'list', ids.busy!])).tokens as { revokedAt: number | null }[];
  t.equal(after.filter((x) => x.revokedAt === null).length, 50);
  t.equal(after.length, 52, 'revoked tokens are still listed');
});

// The console used to hide Rotate and Revoke from a Viewer while the writer let a token's creator act
// whatever their role was now: a Viewer changes nothing (model/permissions.ts), creator or not.
t.test('a creator who is now a Viewer may neither revoke nor rotate; an Admin still may', async (t) => {
  const token = await ok(t, dir, create(ids.single!, ids.editor2!, '--name', 'demoted'));
  await inStore(dir, (run) => run('orgAddMember', { principal: kOperator, orgId: ids.org!, userId: ids.editor2!, role: 'viewer' }));
  try {
    await expectAllRefused(
      t,
      dir,
      ['revoke', 'rotate'].map(
        (verb) =>
          [
            ['token', verb, token.id, '--as', ids.editor2!],
            { error: kForbidden, detail: new RegExp(`may ${verb} token ${token.id}, and a Viewer may not; user ${ids.editor2} is viewer`) },
          ] as const,
      ),
    );
    const revoked = await ok(t, dir, ['token', 'revoke', token.id, '--as', ids.admin!]);
    t.equal(revoked.id, token.id, 'an Admin revokes it');
  } finally {
    await inStore(dir, (run) => run('orgAddMember', { principal: kOperator, orgId: ids.org!, userId: ids.editor2!, role: 'editor' }));
  }
});
