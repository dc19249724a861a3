// Approvals on the command line, black-box (docs/approvals.md; issue 46): `approvals set|show|clear`,
// a guarded change made with the command line (exit status 3, `Change requested: ...`; with --json
// {changeRequest}), `request list|show|approve|reject|withdraw|comment` as people read them, and every
// refusal: exit 1 with the error's text (2 for usage) and not one byte of the store changed.
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { cli, expectAllRefused, expectRefused, ok } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { exportStore } from '../helpers/store-export.js';
import { buildWorld } from '../helpers/world.js';

const dataDir = tempDir(t);
const world = buildWorld(dataDir);
t.teardown(() => world.store.close());
const { ids, tokenIds } = world;
const personal = world.run('projectCreate', { principal: kOperator, name: 'Mine', ownerUserId: ids.editor, kind: 'single' });
const human = (args: string[]) => cli(dataDir, args, { json: false });
/** A guarded change: typed variants for the group flag's production, by the editor. */
const variants = (defaultVariant: string, as = ids.editor) => [
  'flag',
  'variants',
  ids.groupFlag,
  '--env',
  'production',
  '--variants',
  '{"a":1,"b":2}',
  '--default-variant',
  defaultVariant,
  '--as',
  as,
];

t.test('`approvals set` refuses what it must, and writes nothing', async (t) => {
  const set = ['approvals', 'set', ids.multi, '--env', 'production'];
  await expectAllRefused(t, dataDir, [
    [
      ['approvals', 'set', personal.id, '--required', '1'],
      { error: 'Invalid request', detail: /is a personal project: approvals need a second person/ },
    ],
    [
      [...set, '--required', '1', '--bypass-token', tokenIds.writeB!],
      { error: 'Invalid request', detail: new RegExp(`token ${tokenIds.writeB} is not a token of project ${ids.multi}`) },
    ],
    [[...set, '--required', '0'], { code: 2, error: 'Invalid request', detail: /--required must be a whole number from 1 to 5, not "0"/ }],
    [[...set, '--required', '6'], { code: 2, error: 'Invalid request', detail: /--required must be a whole number from 1 to 5, not "6"/ }],
    [
      [...set, '--required', '1', '--roles', 'owner,boss'],
      { code: 2, error: 'Invalid request', detail: /--roles takes owner, admin, editor, viewer; not boss/ },
    ],
    [[...set, '--required', '1', '--as', ids.editor], { error: 'Forbidden', detail: /needs the Admin or Owner role/ }],
    [[...set, '--required', '1', '--as', ids.ownerB], { error: 'Forbidden' }],
    [
      ['approvals', 'set', ids.multi, '--required', '1'],
      { error: 'Invalid request', detail: /an environment is required; valid environments: staging, production/ },
    ],
    [[...set.slice(0, 4), 'qa', '--required', '1'], { error: 'Invalid request', detail: /unknown environment "qa"/ }],
    [
      ['approvals', 'set', ids.single, '--env', 'production', '--required', '1'],
      { error: 'Invalid request', detail: /single-environment project: leave the environment out/ },
    ],
    [
      ['approvals', 'clear', ids.multi, '--env', 'production'],
      { error: 'Invalid request', detail: /production of project \w+ has no approval policy/ },
    ],
  ]);
});

t.test('`approvals set`, `show` and `clear`', async (t) => {
  const none = await human(['approvals', 'show', ids.multi]);
  t.equal(none.stdout, `Project ${ids.multi} has no approval policy: every change applies at once.\n`);
  t.notOk((await ok(t, dataDir, ['approvals', 'show', ids.multi])).approvals);
  const set = await human(['approvals', 'set', ids.single, '--required', '1', '--as', ids.admin]);
  t.equal(set.code, 0);
  t.match(
    set.stdout,
    /^ENVIRONMENT\s+REQUIRED\s+ROLES\s+SELF\s+BYPASS TOKENS\nthe project's environment\s+1\s+owner,admin,editor\s+no\s+-\n$/,
  );
  const project = await ok(t, dataDir, [
    'approvals',
    'set',
    ids.multi,
    '--env',
    'production',
    '--required',
    '2',
    '--roles',
    'admin,owner',
    '--allow-self',
    '--bypass-token',
    tokenIds.multiWrite!,
  ]);
  t.strictSame(project.approvals, [
    { env: 'production', required: 2, roles: ['owner', 'admin'], allowSelf: true, bypassTokens: [tokenIds.multiWrite] },
  ]);
  const shown = await human(['approvals', 'show', ids.multi]);
  t.match(shown.stdout, new RegExp(`\\nproduction\\s+2\\s+owner,admin\\s+yes\\s+${tokenIds.multiWrite}\\n$`));
  const audit = (await ok(t, dataDir, ['audit', ids.multi])).entries;
  t.match(audit[0], {
    action: 'approvals.set',
    actor: 'console',
    env: 'production',
    changes: { approvals: { before: null, after: { required: 2 } } },
  });
  // Set again, it replaces the environment's rule.
  await ok(t, dataDir, ['approvals', 'set', ids.multi, '--env', 'production', '--required', '1', '--as', ids.owner]);
  t.strictSame((await ok(t, dataDir, ['approvals', 'show', ids.multi])).approvals, [
    { env: 'production', required: 1, roles: ['owner', 'admin', 'editor'], allowSelf: false, bypassTokens: [] },
  ]);
  const cleared = await human(['approvals', 'clear', ids.single, '--as', ids.owner]);
  t.equal(cleared.stdout, `Project ${ids.single} has no approval policy: every change applies at once.\n`);
  t.match((await ok(t, dataDir, ['audit', ids.single])).entries[0], { action: 'approvals.clear', actor: `user:${ids.owner}` });
});

t.test('a guarded change made with the command line: exit 3, `Change requested:`, nothing applied', async (t) => {
  const before = await ok(t, dataDir, ['flag', 'show', ids.groupFlag]);
  const r = await human(variants('a'));
  t.equal(r.code, 3);
  t.match(
    r.stdout,
    /^Change requested: production needs approval: this change was not applied; change request chr_\w+ holds it \(0 of 1 approvals\)\.\n$/,
  );
  const json = await cli(dataDir, variants('a'));
  t.equal(json.code, 3);
  t.strictSame(Object.keys(json.json), ['changeRequest', 'edited']);
  t.equal(json.json.edited, true, 'the same change again edits the request it opened (adding nothing)');
  t.match(json.json.changeRequest, {
    id: r.stdout.match(/chr_\w+/)![0],
    status: 'pending',
    author: { id: `user:${ids.editor}`, name: 'editor' },
    summary: 'flag.patch search in production',
    diff: [
      { record: 'flag', name: 'search', field: 'environments.production.typed', current: null, proposed: { variants: { a: 1, b: 2 } } },
    ],
  });
  t.strictSame(await ok(t, dataDir, ['flag', 'show', ids.groupFlag]), before, 'the flag as it was');
  // The operator's own change too (no --as): a request by `console`.
  const operator = await cli(dataDir, [
    'flag',
    'variants',
    ids.groupFlag,
    '--env',
    'production',
    '--metadata',
    '{}',
    '--variants',
    '{"x":"X"}',
  ]);
  t.equal(operator.code, 3);
  t.match(operator.json.changeRequest.author, { id: 'console', name: 'console' });
  t.equal(
    (await ok(t, dataDir, ['request', 'withdraw', operator.json.changeRequest.id])).status,
    'withdrawn',
    'the operator withdraws its own',
  );
  // Staging is not guarded.
  const staging = await cli(dataDir, [
    'flag',
    'variants',
    ids.groupFlag,
    '--env',
    'staging',
    '--variants',
    '{"a":1,"b":2}',
    '--as',
    ids.editor,
  ]);
  t.equal(staging.code, 0);
  t.match(staging.json, { changed: true });
});

t.test('`request list` and `show`', async (t) => {
  const [request] = (await ok(t, dataDir, ['request', 'list', ids.multi, '--status', 'pending'])).changeRequests;
  t.match(request, { status: 'pending', required: 1, approvals: [] });
  const list = await human(['request', 'list', ids.multi]);
  t.match(list.stdout, /^ID\s+STATUS\s+APPROVALS\s+AUTHOR\s+CREATED\s+TITLE\n/);
  t.match(
    list.stdout,
    new RegExp(
      `\\n${request.id}\\s+pending\\s+0/1\\s+editor\\s+\\S+\\s+Set the variants of flag search in production; Set the default variant of flag search in production to a; Set the rule of flag search in production\\n`,
    ),
    "titled in the audit log's words",
  );
  t.match(list.stdout, /\nchr_\w+\s+withdrawn\s+0\/1\s+console\s/);
  t.strictSame((await ok(t, dataDir, ['request', 'list', ids.multi, '--status', 'rejected'])).changeRequests, []);
  t.equal((await human(['request', 'list', ids.multi, '--status', 'rejected'])).stdout, 'No change requests.\n');
  const shown = await human(['request', 'show', request.id]);
  t.match(shown.stdout, new RegExp(`^id\\s+${request.id}\\nstatus\\s+pending\\n`));
  t.match(shown.stdout, /\napprovals\s+0 of 1\n/);
  t.match(
    shown.stdout,
    /\nRECORD\s+NAME\s+FIELD\s+NOW\s+PROPOSED\nflag\s+search\s+environments\.production\.typed\s+null\s+\{"variants":\{"a":1,"b":2\}/,
  );
  t.strictSame(await ok(t, dataDir, ['request', 'show', request.id]), request);
  await expectAllRefused(t, dataDir, [
    [
      ['request', 'list', ids.multi, '--status', 'open'],
      { code: 2, error: 'Invalid request', detail: /--status must be one of pending, applied, rejected, withdrawn/ },
    ],
    [['request', 'show', 'chr_nope'], { error: 'Not found', detail: /No change request with id chr_nope exists/ }],
    [['request', 'list', 'prj_nope'], { error: 'Not found' }],
  ]);
});

t.test('deciding: who may not, then comment, approve, reject, withdraw', async (t) => {
  await ok(t, dataDir, ['approvals', 'set', ids.multi, '--env', 'production', '--required', '2', '--roles', 'owner,admin']);
  const [request] = (await ok(t, dataDir, ['request', 'list', ids.multi, '--status', 'pending'])).changeRequests;
  await expectAllRefused(t, dataDir, [
    [
      ['request', 'approve', request.id, '--version', String(request.version)],
      { code: 2, error: 'Invalid request', detail: /missing --as/ },
    ],
    [['request', 'reject', request.id], { code: 2, error: 'Invalid request', detail: /missing --as/ }],
    [['request', 'approve', request.id, '--as', ids.owner], { code: 2, error: 'Invalid request', detail: /missing --version/ }],
    [
      ['request', 'approve', request.id, '--version', String(request.version), '--as', ids.editor],
      { error: 'Forbidden', detail: /needs the owner, admin role in organisation \w+; user \w+ is editor/ },
    ],
    [
      ['request', 'reject', request.id, '--as', ids.viewer],
      { error: 'Forbidden', detail: /Rejecting this change needs the owner, admin role in organisation/ },
    ],
    [
      ['request', 'approve', request.id, '--version', String(request.version), '--as', ids.ownerB],
      { error: 'Not found', detail: /No change request with id/ },
    ],
    [['request', 'comment', request.id, '--text', 'hi', '--as', ids.ownerB], { error: 'Not found' }],
    [['request', 'approve', 'chr_nope', '--version', '1', '--as', ids.owner], { error: 'Not found' }],
    [['request', 'withdraw', request.id, '--as', ids.owner], { error: 'Forbidden', detail: /Only its author \(editor\) may withdraw/ }],
    [['request', 'withdraw', request.id], { error: 'Forbidden', detail: /Only its author/ }],
    [
      ['request', 'comment', request.id, '--text', '   '],
      { error: 'Invalid request', detail: /text must be a non-empty string of at most 2000 characters/ },
    ],
    [['request', 'comment', request.id, '--text', 'x'.repeat(2001)], { error: 'Invalid request' }],
  ]);
  const commented = await human(['request', 'comment', request.id, '--text', 'after the release', '--as', ids.viewer]);
  t.equal(commented.code, 0, 'anyone who may see the project comments');
  t.match(commented.stdout, /\n\nviewer at \S+: after the release\n$/);
  const once = await human([
    'request',
    'approve',
    request.id,
    '--version',
    String(request.version),
    '--as',
    ids.owner,
    '--text',
    'fine by me',
  ]);
  t.equal(once.code, 0);
  t.match(once.stdout, /\napprovals\s+1 of 2: owner\n/);
  await expectRefused(t, dataDir, ['request', 'approve', request.id, '--version', String(request.version), '--as', ids.owner], {
    error: 'Forbidden',
    detail: new RegExp(`User ${ids.owner} has approved this change already`),
  });
  const applied = await human(['request', 'approve', request.id, '--version', String(request.version), '--as', ids.admin]);
  t.equal(applied.code, 0);
  t.match(applied.stdout, /\nstatus\s+applied\n/);
  t.match(applied.stdout, /\napprovals\s+2 of 2: owner, admin\ndecided\s+admin at /);
  t.match(applied.stdout, /\nRECORD\s+NAME\s+FIELD\s+BEFORE\s+PROPOSED\n/);
  t.match((await ok(t, dataDir, ['flag', 'show', ids.groupFlag])).environments.production, {
    variants: { a: 1, b: 2 },
    defaultVariant: 'a',
  });
  await expectAllRefused(t, dataDir, [
    [
      ['request', 'approve', request.id, '--version', String(request.version), '--as', ids.owner],
      { error: 'Change request out of date', detail: /is applied already/ },
    ],
    [['request', 'reject', request.id, '--as', ids.owner], { error: 'Change request out of date', detail: /is applied already/ }],
    [['request', 'withdraw', request.id, '--as', ids.editor], { error: 'Change request out of date', detail: /is applied already/ }],
  ]);

  const next = await cli(dataDir, variants('b'));
  t.equal(next.code, 3);
  const rejected = await human(['request', 'reject', next.json.changeRequest.id, '--as', ids.admin, '--text', 'not this week']);
  t.equal(rejected.code, 0);
  t.match(rejected.stdout, /\nstatus\s+rejected\n[\s\S]*\ndecided\s+admin at \S+: not this week\n/);
  const third = await cli(dataDir, variants('b'));
  t.equal(third.code, 3);
  t.not(third.json.changeRequest.id, next.json.changeRequest.id, 'a rejected request is not edited: a new one opens');
  const withdrawn = await ok(t, dataDir, ['request', 'withdraw', third.json.changeRequest.id, '--as', ids.editor]);
  t.match(withdrawn, { status: 'withdrawn', decided: { id: `user:${ids.editor}` } });
  t.match((await ok(t, dataDir, ['flag', 'show', ids.groupFlag])).environments.production, { defaultVariant: 'a' }, 'neither applied');
  const actions = (await ok(t, dataDir, ['audit', ids.multi, '--limit', '20'])).entries.map((e: any) => e.action);
  t.strictSame(actions.slice(0, 5), ['request.withdraw', 'request.open', 'request.reject', 'request.open', 'request.apply']);
});

t.test('the operator cannot approve; after `approvals clear` the change applies at once', async (t) => {
  const pending = await cli(dataDir, variants('b'));
  t.equal(pending.code, 3);
  const before = await exportStore(dataDir);
  t.equal((await cli(dataDir, ['request', 'approve', pending.json.changeRequest.id, '--version', '1'])).code, 2, '--as is required');
  t.strictSame(await exportStore(dataDir), before);
  await ok(t, dataDir, ['approvals', 'clear', ids.multi, '--env', 'production', '--as', ids.admin]);
  const applied = await cli(dataDir, variants('b'));
  t.equal(applied.code, 0);
  t.match(applied.json, { changed: true, flag: { environments: { production: { defaultVariant: 'b' } } } });
  t.equal(
    (await ok(t, dataDir, ['request', 'show', pending.json.changeRequest.id])).status,
    'pending',
    'pending requests stay, to be decided',
  );
});

t.test("the author's next change is made on top of their pending request, even one that needs it", async (t) => {
  await ok(t, dataDir, ['approvals', 'set', ids.multi, '--env', 'production', '--required', '1']);
  const flag = world.run('flagCreate', { projectId: ids.multi, principal: kOperator, body: { name: 'on-top' } });
  const opened = await cli(dataDir, [
    'flag',
    'variants',
    flag.id,
    '--env',
    'production',
    '--variants',
    '{"a":1,"b":2}',
    '--as',
    ids.editor,
  ]);
  t.equal(opened.code, 3);
  // The flag has no variants yet: only on top of the request does a default variant make sense.
  const edited = await cli(dataDir, ['flag', 'variants', flag.id, '--env', 'production', '--default-variant', 'b', '--as', ids.editor]);
  t.equal(edited.code, 3, edited.stdout);
  t.equal(edited.json.changeRequest?.id, opened.json.changeRequest.id, 'the same request, edited');
  t.match(edited.json.changeRequest?.diff, [
    { field: 'environments.production', proposed: { typed: { variants: { a: 1, b: 2 }, defaultVariant: 'b' } } },
  ]);
  // Someone else's such change is refused as before: it is not made on top of another's request.
  await expectRefused(t, dataDir, ['flag', 'variants', flag.id, '--env', 'production', '--default-variant', 'b', '--as', ids.admin], {
    error: 'Invalid request',
    detail: /this flag has no variants/,
  });
  t.equal((await ok(t, dataDir, ['request', 'withdraw', opened.json.changeRequest.id, '--as', ids.editor])).status, 'withdrawn');
});

t.test('an edit made on top of a request that also moves another guarded environment needs that rule too', async (t) => {
  await ok(t, dataDir, ['approvals', 'clear', ids.multi, '--env', 'production']);
  const flag = world.run('flagCreate', {
    projectId: ids.multi,
    principal: kOperator,
    body: { name: 'twice', environments: { production: { enabled: true } } },
  });
  await ok(t, dataDir, ['approvals', 'set', ids.multi, '--env', 'production', '--required', '1']);
  await ok(t, dataDir, ['approvals', 'set', ids.multi, '--env', 'staging', '--required', '2', '--roles', 'owner,admin']);
  const deleted = await cli(dataDir, ['flag', 'delete', flag.id, '--as', ids.editor]);
  t.equal(deleted.code, 3);
  t.match(deleted.json.changeRequest, { environments: ['production'], required: 1 });
  // The name is taken until the request applies: only on top of it can the flag be made again.
  const again = await cli(dataDir, [
    'flag',
    'create',
    ids.multi,
    '--name',
    'twice',
    '--enabled',
    '--env',
    'staging,production',
    '--as',
    ids.editor,
  ]);
  t.equal(again.code, 3, again.stdout);
  t.equal(again.json.changeRequest.id, deleted.json.changeRequest.id, 'the same request, edited');
  t.strictSame([...again.json.changeRequest.environments].sort(), ['production', 'staging']);
  t.equal(again.json.changeRequest.required, 2, "staging's rule counts");
  t.equal((await ok(t, dataDir, ['request', 'withdraw', again.json.changeRequest.id, '--as', ids.editor])).status, 'withdrawn');
  await ok(t, dataDir, ['approvals', 'clear', ids.multi, '--env', 'staging']);
});

t.test('renaming a guarded environment renames its rule; with flags set there it is refused', async (t) => {
  await ok(t, dataDir, ['env', 'add', ids.multi, 'canary']);
  await ok(t, dataDir, ['approvals', 'set', ids.multi, '--env', 'canary', '--required', '1']);
  await ok(t, dataDir, ['approvals', 'set', ids.multi, '--env', 'production', '--required', '1']);
  await expectRefused(t, dataDir, ['env', 'rename', ids.multi, 'production', 'live'], {
    error: 'Approval required',
    detail: /a change request cannot hold.*flagwire approvals clear/,
  });
  await ok(t, dataDir, ['env', 'rename', ids.multi, 'canary', 'early']);
  t.strictSame((await ok(t, dataDir, ['approvals', 'show', ids.multi])).approvals.map((rule: any) => rule.env).sort(), [
    'early',
    'production',
  ]);
  await ok(t, dataDir, ['approvals', 'clear', ids.multi, '--env', 'early']);
});

t.test('a project holds at most 100 pending requests: the next guarded change is refused', async (t) => {
  await ok(t, dataDir, ['approvals', 'set', ids.multi, '--env', 'production', '--required', '1']);
  const pending = (await ok(t, dataDir, ['request', 'list', ids.multi, '--status', 'pending'])).changeRequests.length;
  const made = Array.from({ length: 100 - pending + 1 }, (_, i) =>
    world.run('flagCreate', { projectId: ids.multi, principal: kOperator, body: { name: `many-${i}` } }),
  );
  for (const flag of made.slice(0, -1)) {
    const r = await cli(dataDir, ['flag', 'variants', flag.id, '--env', 'production', '--variants', '{"a":1}', '--as', ids.editor]);
    t.equal(r.code, 3);
  }
  t.equal((await ok(t, dataDir, ['request', 'list', ids.multi, '--status', 'pending'])).changeRequests.length, 100);
  await expectRefused(
    t,
    dataDir,
    ['flag', 'variants', made.at(-1)!.id, '--env', 'production', '--variants', '{"a":1}', '--as', ids.editor],
    {
      error: 'Approval required',
      detail: /has 100 change requests pending already, the most it holds: nothing was changed/,
    },
  );
});

t.test('the help says what exit status 3 means', async (t) => {
  const r = await cli(null, ['--help'], { json: false });
  t.match(
    r.stdout,
    /Exit status: 0 done, 1 the command failed, 2 usage or configuration error, 3 a change request holds the change \(not applied\)\./,
  );
});
