// Issue 15 (onboarding), black-box through the real console: the list and show commands, `flag
// create` on every plan and on personal projects with the Management API's rules and representation
// (checked against a running server), `--as` on flag edits, unique names, the audit entries of
// environment and audience changes, --version and per-command help. The subtests build on each other.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { kCliCommands } from '../../src/cli/commands.js';
import { cli, expectAllRefused, expectRefused, ok, type TestContext } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { call } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';
import { exportStore } from '../helpers/store-export.js';

const dir = tempDir(t);
const ids: Record<string, string> = {};

t.test('set-up, and the lists: org list, user list, project list [--org | --owner], project show', async (t) => {
  const acme = await ok(t, dir, ['org', 'create', '--name', 'Acme', '--plan', 'teams']);
  const free = await ok(t, dir, ['org', 'create', '--name', 'Freebies']);
  const user = (email: string, name: string) => ok(t, dir, ['user', 'create', '--email', email, '--name', name]);
  const [owner, editor, viewer, outsider] = [
    await user('o@acme.test', 'Olive'),
    await user('e@acme.test', 'Eddie'),
    await user('v@acme.test', 'Vera'),
    await user('x@else.test', 'Xavier'),
  ];
  for (const [u, role] of [
    [owner, 'owner'],
    [editor, 'editor'],
    [viewer, 'viewer'],
  ] as const)
    await ok(t, dir, ['org', 'add-member', acme.id, u.id, '--role', role]);
  await ok(t, dir, ['org', 'add-member', free.id, owner.id, '--role', 'owner']);
  const shop = await ok(t, dir, ['project', 'create', '--name', 'Shop', '--org', acme.id]);
  const platform = await ok(t, dir, [
    'project',
    'create',
    '--name',
    'Platform',
    '--org',
    acme.id,
    '--kind',
    'multi',
    '--env',
    'staging,production',
  ]);
  const freeShop = await ok(t, dir, ['project', 'create', '--name', 'Shop', '--org', free.id]);
  const personal = await ok(t, dir, ['project', 'create', '--name', 'Shop', '--owner', owner.id]);
  Object.assign(ids, {
    acme: acme.id,
    free: free.id,
    owner: owner.id,
    editor: editor.id,
    viewer: viewer.id,
    outsider: outsider.id,
    shop: shop.id,
    platform: platform.id,
    freeShop: freeShop.id,
    personal: personal.id,
  });

  const orgs = await ok(t, dir, ['org', 'list']);
  t.strictSame(
    orgs.orgs.map((o: { name: string }) => o.name),
    ['Acme', 'Freebies'],
    '{orgs}, oldest first',
  );
  t.strictSame(orgs.orgs, [acme, free], '{orgs}: the org records');
  const users = await ok(t, dir, ['user', 'list']);
  t.strictSame(
    users.users.map((u: { id: string }) => u.id),
    [owner.id, editor.id, viewer.id, outsider.id],
    '{users}, oldest first',
  );
  t.match(users.users[0], { email: 'o@acme.test', name: 'Olive' });
  const all = await ok(t, dir, ['project', 'list']);
  t.strictSame(
    all.projects.map((p: { id: string }) => p.id),
    [shop.id, platform.id, freeShop.id, personal.id],
    '{projects}, every one',
  );
  t.strictSame(all.projects[1], platform, 'each is the project record');
  t.strictSame(
    (await ok(t, dir, ['project', 'list', '--org', acme.id])).projects.map((p: { id: string }) => p.id),
    [shop.id, platform.id],
  );
  t.strictSame(
    (await ok(t, dir, ['project', 'list', '--owner', owner.id])).projects.map((p: { id: string }) => p.id),
    [personal.id],
    '--owner: personal projects only',
  );
  t.strictSame(await ok(t, dir, ['project', 'show', platform.id]), platform);
  await expectAllRefused(t, dir, [
    [['project', 'list', '--org', 'org_missing'], { error: 'Not found', detail: /No organisation with id "org_missing"/ }],
    [['project', 'list', '--owner', 'usr_missing'], { error: 'Not found', detail: /usr_missing/ }],
    [['project', 'show', 'prj_missing'], { error: 'Not found', detail: /No project with id "prj_missing"/ }],
    [['flag', 'list', 'prj_missing'], { error: 'Not found' }],
    [['flag', 'show', 'flg_missing'], { error: 'Not found', detail: /No flag with id "flg_missing"/ }],
    [['audience', 'list', 'prj_missing'], { error: 'Not found' }],
    [
      ['project', 'list', '--org', acme.id, '--owner', owner.id],
      { code: 2, error: 'Invalid request', detail: /at most one of --org and --owner/ },
    ],
  ]);

  const human = await cli(dir, ['project', 'list'], { json: false });
  t.match(human.stdout, /^ID +NAME +KIND +ORGANISATION +OWNER +ENVIRONMENTS +CREATED\n/);
  t.match(human.stdout, new RegExp(`\\n${platform.id} +Platform +multi +${acme.id} +- +staging, production +\\d{4}-`));
  t.match(human.stdout, new RegExp(`\\n${personal.id} +Shop +single +- +${owner.id} +- +\\d{4}-`));
  t.match((await cli(dir, ['org', 'list'], { json: false })).stdout, new RegExp(`\\n${free.id} +Freebies +free +- +good +\\d{4}-`));
  t.match(
    (await cli(dir, ['user', 'list'], { json: false })).stdout,
    new RegExp(`^ID +EMAIL +NAME +CREATED\\n${owner.id} +o@acme\\.test +Olive +`),
  );
  const empty = tempDir(t);
  await ok(t, empty, ['org', 'create', '--name', 'Only']);
  t.equal((await cli(empty, ['project', 'list'], { json: false })).stdout, 'No projects.\n');
  t.equal((await cli(empty, ['user', 'list'], { json: false })).stdout, 'No users.\n');
  t.strictSame(await ok(t, empty, ['user', 'list']), { users: [] });
});

t.test('names people tell apart: organisations unique, projects unique per organisation or owner, ignoring case', async (t) => {
  await expectAllRefused(t, dir, [
    [
      ['org', 'create', '--name', ' acme '],
      { error: 'Invalid request', detail: new RegExp(`an organisation named "Acme" already exists \\(${ids.acme}\\)`) },
    ],
    [
      ['project', 'create', '--name', 'SHOP', '--org', ids.acme!],
      {
        error: 'Invalid request',
        detail: new RegExp(`a project named "Shop" already exists in organisation ${ids.acme} \\(${ids.shop}\\)`),
      },
    ],
    [
      ['project', 'create', '--name', 'shop', '--owner', ids.owner!],
      { error: 'Invalid request', detail: new RegExp(`personal projects of user ${ids.owner} \\(${ids.personal}\\)`) },
    ],
  ]);
  // The same name elsewhere is fine: another organisation, or another user's personal projects (set-up made "Shop" three times).
  await ok(t, dir, ['project', 'create', '--name', 'Shop', '--owner', ids.editor!]);
});

t.test("flag create: any plan, personal projects, the API's representation; flag list and flag show", async (t) => {
  const onFree = await ok(t, dir, ['flag', 'create', ids.freeShop!, '--name', 'checkout', '--enabled', '--percentage', '25']);
  t.match(onFree, {
    id: /^flg_/,
    name: 'checkout',
    kind: 'flag',
    enabled: true,
    trafficPercentage: 25,
    cohorts: [],
    audienceId: null,
    description: '',
    tags: [],
  });
  t.notOk('projectId' in onFree, "the Management API's representation, not the stored record");
  const onPersonal = await ok(t, dir, ['flag', 'create', ids.personal!, '--name', 'dark-mode']);
  t.match(onPersonal, { kind: 'flag', enabled: false, trafficPercentage: 0 }, "the API's defaults");
  const group = await ok(t, dir, [
    'flag',
    'create',
    ids.platform!,
    '--name',
    'search',
    '--enabled',
    '--percentage',
    '10',
    '--env',
    'staging',
  ]);
  t.strictSame(Object.keys(group.environments), ['staging', 'production'], "every environment, in the project's order");
  t.match(
    group.environments,
    {
      staging: { enabled: true, trafficPercentage: 10, cohorts: [], audienceId: null },
      production: { enabled: false, trafficPercentage: 0 },
    },
    '--env names the environments --enabled and --percentage apply to',
  );
  const both = await ok(t, dir, ['flag', 'create', ids.platform!, '--name', 'both', '--percentage', '100', '--env', 'staging,production']);
  t.match(both.environments, {
    staging: { enabled: false, trafficPercentage: 100 },
    production: { enabled: false, trafficPercentage: 100 },
  });
  Object.assign(ids, { freeFlag: onFree.id, groupFlag: group.id, personalFlag: onPersonal.id });

  t.strictSame(await ok(t, dir, ['flag', 'show', group.id]), group, 'flag show: the same representation');
  t.strictSame(await ok(t, dir, ['flag', 'list', ids.platform!]), { flags: [group, both] }, '{flags}, oldest first');
  t.strictSame(await ok(t, dir, ['flag', 'list', ids.shop!]), { flags: [] });

  const shown = await cli(dir, ['flag', 'show', group.id], { json: false });
  t.match(shown.stdout, /\nkind +groupflag\n/);
  t.match(shown.stdout, /\nenv staging +on, 10%\nenv production +off, 0%\n/);
  t.match(shown.stdout, /\nlast evaluated +never\nevaluations +0$/m, 'never evaluated: said so');
  const listed = await cli(dir, ['flag', 'list', ids.platform!], { json: false });
  t.match(
    listed.stdout,
    new RegExp(
      `^ID +NAME +KIND +STATE +UPDATED +LAST EVALUATED\\n${group.id} +search +groupflag +staging: on, 10%; production: off, 0% +\\d{4}-\\S+ +never\\n`,
    ),
  );
  t.equal((await cli(dir, ['flag', 'list', ids.shop!], { json: false })).stdout, 'No flags.\n');

  await expectAllRefused(t, dir, [
    [
      ['flag', 'create', ids.freeShop!, '--name', 'checkout'],
      { error: 'Invalid request', detail: /^a flag named "checkout" already exists in this project$/ },
    ],
    [
      ['flag', 'create', ids.platform!, '--name', 'x', '--enabled'],
      { error: 'Invalid request', detail: /this is a multi-environment project: move enabled under "environments"/ },
    ],
    [
      ['flag', 'create', ids.freeShop!, '--name', 'x', '--env', 'staging'],
      { error: 'Invalid request', detail: /this is a single-environment project/ },
    ],
    [
      ['flag', 'create', ids.platform!, '--name', 'x', '--env', 'nowhere'],
      { error: 'Invalid request', detail: /environments\.nowhere is not an environment of this project/ },
    ],
    [['flag', 'create', ids.freeShop!, '--name', 'x', '--percentage', '101'], { error: 'Invalid request', detail: /trafficPercentage/ }],
    [['flag', 'create', 'prj_missing', '--name', 'x'], { error: 'Not found', detail: /prj_missing/ }],
    [
      ['flag', 'create', ids.freeShop!, '--name', 'x', '--percentage', 'half'],
      { code: 2, error: 'Invalid request', detail: /--percentage must be a number/ },
    ],
    [['flag', 'create', ids.freeShop!], { code: 2, error: 'Invalid request', detail: /missing --name/ }],
  ]);
});

t.test('flag create and flag list match the Management API: same body rules, same 400 texts, same representation', async (t) => {
  const server = await startTestServer({ dataDir: dir });
  t.teardown(() => server.stop());
  const token = await ok(t, dir, ['token', 'create', ids.platform!, '--as', ids.editor!, '--name', 'ci', '--permission', 'write']);
  const api = await call(server.baseUrl, 'GET', '/api/v1/flags', { token: token.secret });
  t.equal(api.status, 200);
  t.strictSame(await ok(t, dir, ['flag', 'list', ids.platform!]), api.json, 'flag list is GET /api/v1/flags');
  const one = await call(server.baseUrl, 'GET', `/api/v1/flags/${ids.groupFlag}`, { token: token.secret });
  t.strictSame(await ok(t, dir, ['flag', 'show', ids.groupFlag!]), one.json, 'flag show is GET /api/v1/flags/{id}');

  for (const [args, body] of [
    [['--name', 'search'], { name: 'search' }],
    [['--name', 'y', '--enabled'], { name: 'y', enabled: true }],
    [['--name', 'y', '--env', 'qa'], { name: 'y', environments: { qa: {} } }],
  ] as const) {
    const r = await cli(dir, ['flag', 'create', ids.platform!, ...args]);
    const viaApi = await call(server.baseUrl, 'POST', '/api/v1/flags', { token: token.secret, body });
    t.equal(viaApi.status, 400);
    t.equal(r.code, 1);
    t.strictSame(r.json, { error: viaApi.json.error, detail: viaApi.json.detail }, `flag create ${args.join(' ')}: the API's 400 text`);
  }
  const created = await ok(t, dir, ['flag', 'create', ids.platform!, '--name', 'from-console', '--env', 'production', '--enabled']);
  const fetched = await call(server.baseUrl, 'GET', `/api/v1/flags/${created.id}`, { token: token.secret });
  t.strictSame(created, fetched.json, 'the created flag as the API shows it; the running server sees it at once');
});

t.test("--as on flag edits: the audit names the person; Editor, Admin or Owner (or a personal project's owner) only", async (t) => {
  await ok(t, dir, ['flag', 'rename', ids.freeFlag!, 'checkout-v2']);
  await ok(t, dir, ['flag', 'describe', ids.freeFlag!, 'New checkout', '--as', ids.owner!]);
  await ok(t, dir, ['flag', 'tags', ids.groupFlag!, 'search', '--as', ids.editor!]);
  await ok(t, dir, ['flag', 'cohorts', ids.groupFlag!, 'qa', '--as', ids.editor!]);
  await ok(t, dir, ['flag', 'rename', ids.personalFlag!, 'dark', '--as', ids.owner!]);
  const made = await ok(t, dir, ['flag', 'create', ids.shop!, '--name', 'temp', '--as', ids.editor!]);
  t.strictSame(await ok(t, dir, ['flag', 'delete', made.id, '--as', ids.owner!]), { id: made.id, deleted: true });

  const actions = async (project: string) =>
    (await ok(t, dir, ['audit', project])).entries
      .filter((e: { flagId: string | null }) => e.flagId !== null)
      .map((e: { action: string; actor: string; actorName: string }) => [e.action, e.actor, e.actorName]);
  t.strictSame(
    await actions(ids.freeShop!),
    [
      ['flag.describe', `user:${ids.owner}`, 'Olive'],
      ['flag.rename', 'console', 'console'],
      ['flag.create', 'console', 'console'],
    ],
    "with --as: user:<id> and the person's name; without: console, as before",
  );
  t.strictSame((await actions(ids.platform!)).slice(0, 2), [
    ['flag.cohorts', `user:${ids.editor}`, 'Eddie'],
    ['flag.tags', `user:${ids.editor}`, 'Eddie'],
  ]);
  t.strictSame(await actions(ids.shop!), [
    ['flag.delete', `user:${ids.owner}`, 'Olive'],
    ['flag.create', `user:${ids.editor}`, 'Eddie'],
  ]);
  t.strictSame((await actions(ids.personal!))[0], ['flag.rename', `user:${ids.owner}`, 'Olive'], "a personal project's owner");

  await expectAllRefused(t, dir, [
    [
      ['flag', 'rename', ids.groupFlag!, 'x', '--as', ids.viewer!],
      { error: 'Forbidden', detail: new RegExp(`Editor, Admin or Owner role in organisation ${ids.acme}; user ${ids.viewer} is viewer`) },
    ],
    [['flag', 'delete', ids.groupFlag!, '--as', ids.outsider!], { error: 'Forbidden', detail: /is not a member/ }],
    [['flag', 'create', ids.shop!, '--name', 'x', '--as', ids.viewer!], { error: 'Forbidden', detail: /is viewer/ }],
    [
      ['flag', 'tags', ids.personalFlag!, 'a', '--as', ids.editor!],
      { error: 'Forbidden', detail: new RegExp(`Only the owner of personal project ${ids.personal}`) },
    ],
    [['flag', 'describe', ids.groupFlag!, 'x', '--as', 'usr_missing'], { error: 'Not found', detail: /No user with id "usr_missing"/ }],
    [['flag', 'cohorts', 'flg_missing', 'a', '--as', ids.viewer!], { error: 'Not found', detail: /No flag with id "flg_missing"/ }],
    [['flag', 'rename', ids.groupFlag!, 'x', '--as'], { code: 2, error: 'Invalid request', detail: /--as/ }],
  ]);
});

t.test('audit: env add and env rename, audience create and update (a change to nothing writes nothing)', async (t) => {
  await ok(t, dir, ['env', 'add', ids.platform!, 'qa']);
  await ok(t, dir, ['env', 'rename', ids.platform!, 'qa', 'test']);
  const audience = await ok(t, dir, ['audience', 'create', ids.shop!, '--name', 'Beta', '--rule', 'plan=beta']);
  await ok(t, dir, ['audience', 'update', audience.id, '--name', 'Beta testers', '--rule', 'plan=beta,pro']);
  await expectRefused(t, dir, ['audience', 'create', ids.shop!, '--name', 'beta TESTERS', '--rule', 'a=b'], {
    error: 'Invalid request',
    detail: new RegExp(`an audience named "Beta testers" already exists in this project \\(${audience.id}\\)`),
  });
  const other = await ok(t, dir, ['audience', 'create', ids.shop!, '--name', 'Other', '--rule', 'a=b']);
  await expectRefused(t, dir, ['audience', 'update', other.id, '--name', 'beta testers'], {
    error: 'Invalid request',
    detail: /already exists/,
  });
  t.match(
    await ok(t, dir, ['audience', 'update', audience.id, '--name', 'BETA TESTERS']),
    { name: 'BETA TESTERS' },
    "an audience may change its own name's case",
  );
  const unchanged = await expectNoWrite(t, ['audience', 'update', audience.id, '--rule', 'plan=beta,pro']);
  t.equal(unchanged.name, 'BETA TESTERS');

  const platform = (await ok(t, dir, ['audit', ids.platform!])).entries;
  t.match(platform.slice(0, 2), [
    {
      action: 'env.rename',
      actor: 'console',
      actorName: 'console',
      flagId: null,
      env: 'test',
      changes: { environment: { before: 'qa', after: 'test' } },
    },
    { action: 'env.add', actor: 'console', flagId: null, env: 'qa', changes: { environment: { before: null, after: 'qa' } } },
  ]);
  const shop = (await ok(t, dir, ['audit', ids.shop!])).entries.filter((e: { action: string }) => e.action.startsWith('audience.'));
  t.strictSame(
    shop.map((e: { action: string }) => e.action),
    ['audience.update', 'audience.create', 'audience.update', 'audience.create'],
  );
  t.match(shop[3], {
    actor: 'console',
    flagId: null,
    env: null,
    changes: { audience: { before: null, after: { id: audience.id, name: 'Beta', rules: [{ attribute: 'plan', values: ['beta'] }] } } },
  });
  t.match(shop[2].changes.audience, {
    before: { id: audience.id, name: 'Beta', rules: [{ values: ['beta'] }] },
    after: { id: audience.id, name: 'Beta testers', rules: [{ values: ['beta', 'pro'] }] },
  });
  t.match(shop[0].changes.audience, { before: { name: 'Beta testers' }, after: { name: 'BETA TESTERS' } });
  const listed = await ok(t, dir, ['audience', 'list', ids.shop!]);
  t.strictSame(listed.audiences.map((a: { id: string }) => a.id).sort(), [audience.id, other.id].sort(), '{audiences}');
  t.match((await cli(dir, ['audience', 'list', ids.shop!], { json: false })).stdout, /^ID +NAME +RULES +UPDATED\n/);
});

t.test('--version: the package version; nothing else may go with it', async (t) => {
  const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  const missing = `${dir}/never`;
  t.strictSame(await ok(t, missing, ['--version']), { version });
  const plain = await cli(null, ['--version'], { json: false });
  t.equal(plain.code, 0);
  t.equal(plain.stdout, `flagwire ${version}\n`);
  const bad = await cli(null, ['--version', 'org']);
  t.equal(bad.code, 2);
  t.match(bad.json, { error: 'Invalid request' });
  const inCommand = await cli(null, ['org', 'list', '--version']);
  t.equal(inCommand.code, 2, 'not an option of a command');
});

t.test("every command's help explains each of its arguments and options, --as included", async (t) => {
  const results = await Promise.all(kCliCommands.map((c) => cli(null, [...c.name.split(' '), '--help'], { json: false })));
  for (const [i, command] of kCliCommands.entries()) {
    const r = results[i]!;
    t.equal(r.code, 0, `${command.name} --help: exit 0`);
    t.match(r.stdout, new RegExp(`^Usage: flagwire ${escapeRegExp(command.name)}`), `${command.name}: usage line`);
    for (const positional of command.positionals) {
      t.match(r.stdout, new RegExp(`\\n  ${escapeRegExp(positional)} +\\S`), `${command.name}: explains ${positional}`);
    }
    for (const option of Object.keys(command.options)) {
      t.match(r.stdout, new RegExp(`\\n  --${option}( [^ ]+)? +\\w`), `${command.name}: explains --${option}`);
    }
    t.match(r.stdout, /\n {2}--data DIR +the data directory/, `${command.name}: global options`);
  }
  const flagCreate = results[kCliCommands.findIndex((c) => c.name === 'flag create')]!.stdout;
  t.match(flagCreate, /--as USER_ID +the person making the change .*user:<id>.*Editor, Admin or Owner/);
  t.match(flagCreate, /--env NAME +multi-environment project: an environment that --enabled and --percentage apply to/);
  t.match(results[kCliCommands.findIndex((c) => c.name === 'token revoke')]!.stdout, /--as USER_ID +the person acting/);
});

/** Runs a command that succeeds but must write nothing (the commit counter included). */
async function expectNoWrite(t: TestContext, args: string[]) {
  const before = await exportStore(dir);
  const result = await ok(t, dir, args);
  t.strictSame(await exportStore(dir), before, `flagwire ${args.join(' ')}: nothing written`);
  return result;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
