// The console's public contract (design §3), black-box: exit status 0/1/2, exactly one JSON object on
// stdout with --json, {error, detail} on failure, help and usage errors, data dir selection, and the
// human output. Commands themselves: cli-commands.test.ts; token rules: cli-tokens.test.ts.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import t from 'tap';
import { cli, expectRefused, inStore, ok, parseOneObject } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { exportStore } from '../helpers/store-export.js';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { putActivity } from '../../src/model/records/token-records.js';
import { appendMail } from '../../src/model/records/mail-records.js';

t.test('--json success: exactly one JSON object on one line, exit 0, nothing on stderr', async (t) => {
  const dir = tempDir(t);
  const r = await cli(dir, ['org', 'create', '--name', 'Acme']);
  t.equal(r.code, 0);
  t.equal(r.stderr, '');
  t.doesNotThrow(() => parseOneObject(r.stdout));
  t.match(r.json, { id: String, name: 'Acme', plan: 'free', trialEndsAt: null, standing: 'good' });
});

t.test('--json failure: {error, detail} on stdout, exit 1', async (t) => {
  const dir = tempDir(t);
  await ok(t, dir, ['org', 'create', '--name', 'Acme']);
  const r = await expectRefused(t, dir, ['org', 'update', 'org_nope', '--plan', 'teams'], { error: 'Not found', detail: /org_nope/ });
  t.equal(r.stderr, '');
});

t.test('global options may come before the command words', async (t) => {
  const dir = tempDir(t);
  const r = await cli(null, ['--json', '--data', dir, 'user', 'create', '--email', 'a@b.test'], { json: false });
  t.equal(r.code, 0);
  t.match(parseOneObject(r.stdout), { email: 'a@b.test', name: 'a' });
  const r2 = await cli(null, [`--data=${dir}`, 'mail', 'list', '--json'], { json: false });
  t.strictSame(parseOneObject(r2.stdout), { messages: [] });
});

t.test('usage errors exit 2 with help on stderr (and one JSON error object with --json); nothing is written', async (t) => {
  const dir = tempDir(t);
  await ok(t, dir, ['org', 'create', '--name', 'Acme']);
  const before = await exportStore(dir);
  const cases: [string[], RegExp][] = [
    [[], /no command given/],
    [['frobnicate'], /unknown command "frobnicate"/],
    [['org'], /"org" needs a subcommand: create, update, add-member, list/],
    [['org', 'delete'], /unknown command "org delete"/],
    [['org', 'create'], /missing --name/],
    [['org', 'create', '--name'], /Option '--name' argument (missing|is ambiguous)/],
    [['org', 'create', '--name', 'A', '--bogus'], /Unknown option '--bogus'/],
    [['org', 'create', '--name', 'A', 'extra'], /unexpected argument "extra"/],
    [['org', 'update'], /missing ORG_ID/],
    [['org', 'add-member', 'o1'], /missing USER_ID/],
    [['org', 'add-member', 'o1', 'u1'], /missing --role/],
    [['org', 'create', '--name', 'A', '--trial-ends', 'tomorrow'], /--trial-ends must be an ISO-8601 date/],
    [['org', 'create', '--name', 'A', '--trial-ends', '2030-01-01T10:00'], /with a zone/],
    [['env', 'rename', 'p1', 'old'], /missing NEW/],
    [['project', 'create', '--name', 'P'], /exactly one of --org/],
    [['project', 'create', '--name', 'P', '--org', 'o', '--owner', 'u'], /exactly one of --org/],
    [['audience', 'create', 'p1', '--name', 'A'], /missing --rule/],
    [['audience', 'create', 'p1', '--name', 'A', '--rule', 'no-equals-sign'], /--rule must look like ATTR=V1/],
    [['token', 'create', 'p1', '--name', 'n', '--permission', 'read'], /missing --as/],
    [['token', 'revoke', 't1'], /missing --as/],
    [['token', 'list'], /missing PROJECT_ID/],
    [['audit', 'p1', '--limit', '0'], /--limit must be a whole number from 1 to 1000/],
    [['audit', 'p1', '--limit', 'ten'], /--limit must be a whole number/],
    [['audit', 'p1', '--before', '-3'], /--before/],
    [['mail', 'list', '--json=yes'], /--json/],
    [['project', 'show'], /missing PROJECT_ID/],
    [['project', 'list', '--org', 'o', '--owner', 'u'], /at most one of --org and --owner/],
    [['flag', 'list'], /missing PROJECT_ID/],
    [['flag', 'show'], /missing FLAG_ID/],
    [['flag', 'create', 'p1'], /missing --name/],
    [['flag', 'create', 'p1', '--name', 'f', '--percentage', 'half'], /--percentage must be a number/],
    [['flag', 'create', 'p1', '--name', 'f', '--enabled=yes'], /--enabled/],
    [['flag', 'rename', 'f1', 'n', '--as'], /--as/],
    [['org', 'list', 'extra'], /unexpected argument "extra"/],
    [['--version', '--bogus'], /--version takes no other argument \("--bogus"\)/],
  ];
  // Usage errors never open the store, so they can all run at once.
  const results = await Promise.all(cases.map(([args]) => cli(dir, args)));
  for (const [i, [args, message]] of cases.entries()) {
    const r = results[i]!;
    const what = `flagwire ${args.join(' ')}`;
    t.equal(r.code, 2, `${what}: exit 2`);
    t.match(r.stderr, message, `${what}: says what is wrong`);
    t.match(r.stderr, /Usage:/, `${what}: help on stderr`);
    t.match(r.json, { error: 'Invalid request', detail: message }, `${what}: one JSON error object`);
    t.strictSame(Object.keys(r.json).sort(), ['detail', 'error']);
  }
  // Without --json, stdout stays empty.
  const plain = await cli(dir, ['org', 'create'], { json: false });
  t.equal(plain.code, 2);
  t.equal(plain.stdout, '');
  t.match(plain.stderr, /^flagwire: missing --name\n\nUsage: flagwire org create --name NAME/);
  t.strictSame(await exportStore(dir), before, 'no usage error wrote anything');
});

t.test('--help prints help on stdout and exits 0 without touching the data dir', async (t) => {
  const dir = tempDir(t);
  const missing = join(dir, 'never-created');
  const general = await cli(missing, ['--help'], { json: false });
  t.equal(general.code, 0);
  for (const name of [
    'serve',
    'org create',
    'org update',
    'org add-member',
    'org list',
    'user create',
    'user list',
    'project create',
    'project list',
    'project show',
    'env add',
    'env rename',
    'audience create',
    'audience update',
    'audience list',
    'flag create',
    'flag list',
    'flag show',
    'flag stale',
    'flag rename',
    'flag describe',
    'flag tags',
    'flag cohorts',
    'flag delete',
    'token create',
    'token rotate',
    'token revoke',
    'token list',
    'token activity',
    'audit',
    'mail list',
  ]) {
    t.match(general.stdout, new RegExp(`\\n  ${name} `), `lists ${name}`);
  }
  t.match((await cli(missing, ['help'], { json: false })).stdout, /Usage: flagwire <command>/);
  const group = await cli(missing, ['token', '--help'], { json: false });
  t.equal(group.code, 0);
  t.match(group.stdout, /flagwire token rotate TOKEN_ID --as USER_ID/);
  const one = await cli(missing, ['token', 'create', '-h'], { json: false });
  t.equal(one.code, 0);
  t.match(one.stdout, /^Usage: flagwire token create PROJECT_ID --as USER_ID --name NAME --permission read\|write/);
  const { existsSync } = await import('node:fs');
  t.notOk(existsSync(missing), 'help did not create the data dir');
});

t.test('data dir: --data, else FLAGWIRE_DATA, else ./data', async (t) => {
  const root = tempDir(t);
  const fromEnv = join(root, 'env-dir');
  const fromFlag = join(root, 'flag-dir');
  const cwd = join(root, 'cwd');
  mkdirSync(cwd);
  // org create may create the data dir; the commands after it use the directory it made.
  t.equal((await cli(null, ['org', 'create', '--name', 'Env'], { env: { FLAGWIRE_DATA: fromEnv } })).code, 0);
  t.equal((await cli(fromFlag, ['org', 'create', '--name', 'Flag'], { env: { FLAGWIRE_DATA: fromEnv } })).code, 0);
  t.equal((await cli(null, ['org', 'create', '--name', 'Cwd'], { cwd })).code, 0);
  t.equal((await cli(null, ['user', 'create', '--email', 'cwd@x.test'], { cwd })).code, 0);
  const names = async (dir: string) => (await exportStore(dir)).orgs!.map(([, o]) => (o as { name: string }).name);
  t.strictSame(await names(fromEnv), ['Env']);
  t.strictSame(await names(fromFlag), ['Flag'], '--data wins over FLAGWIRE_DATA');
  t.strictSame(await names(join(cwd, 'data')), ['Cwd']);
  t.strictSame(
    (await exportStore(join(cwd, 'data'))).users!.map(([, u]) => (u as { email: string }).email),
    ['cwd@x.test'],
  );
});

t.test(
  'a missing data dir: only serve and org create make one; every other command is refused, naming --data, FLAGWIRE_DATA and the path',
  async (t) => {
    const root = tempDir(t);
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere);
    const expected = join(elsewhere, 'data');
    const commands = [
      ['user', 'create', '--email', 'a@b.test'],
      ['user', 'list'],
      ['org', 'list'],
      ['project', 'list'],
      ['project', 'show', 'prj_x'],
      ['flag', 'list', 'prj_x'],
      ['flag', 'create', 'prj_x', '--name', 'f'],
      ['mail', 'list'],
      ['audit', 'prj_x'],
      ['token', 'list', 'prj_x'],
    ];
    const results = await Promise.all(commands.map((args) => cli(null, args, { cwd: elsewhere })));
    for (const [i, args] of commands.entries()) {
      const r = results[i]!;
      const what = `flagwire ${args.join(' ')} run from another directory`;
      t.equal(r.code, 2, `${what}: exit 2 (configuration)`);
      t.match(r.json, { error: 'Invalid request', detail: /FLAGWIRE_DATA/ }, `${what}: one JSON error object`);
      t.match(r.json.detail, /--data DIR/, `${what}: names --data`);
      t.ok(r.json.detail.includes(`${expected} does not exist`), `${what}: names the path it tried`);
      t.match(r.stderr, /^flagwire: invalid FLAGWIRE_DATA: data directory .* does not exist; pass --data DIR or set FLAGWIRE_DATA/);
    }
    t.notOk(existsSync(expected), 'no data dir was created');
    const viaEnv = await cli(null, ['user', 'list'], { env: { FLAGWIRE_DATA: join(root, 'typo') } });
    t.equal(viaEnv.code, 2);
    t.ok(viaEnv.json.detail.includes(join(root, 'typo')), 'FLAGWIRE_DATA names the path too');
    t.notOk(existsSync(join(root, 'typo')));
    // An existing (even empty) directory is used: it was made on purpose.
    const made = join(root, 'made');
    mkdirSync(made);
    t.equal((await cli(made, ['user', 'create', '--email', 'a@b.test'])).code, 0);
  },
);

t.test('a data dir that cannot be used is a configuration error: one line on stderr, exit 2', async (t) => {
  const root = tempDir(t);
  writeFileSync(join(root, 'a-file'), 'x');
  const bad = join(root, 'a-file', 'sub');
  const plain = await cli(bad, ['org', 'create', '--name', 'A'], { json: false });
  t.equal(plain.code, 2);
  t.equal(plain.stdout, '');
  t.match(plain.stderr, /^flagwire: invalid FLAGWIRE_DATA: data directory .* is not writable \(ENOTDIR\)\n$/);
  t.equal(plain.stderr.split('\n').length, 2, 'one line');
  const json = await cli(bad, ['org', 'create', '--name', 'A']);
  t.equal(json.code, 2);
  t.match(json.json, { error: 'Invalid request', detail: /FLAGWIRE_DATA/ });
  const viaEnv = await cli(null, ['org', 'create', '--name', 'A'], { env: { FLAGWIRE_DATA: bad } });
  t.equal(viaEnv.code, 2);
  const file = await cli(join(root, 'a-file'), ['mail', 'list'], { json: false });
  t.match(
    file.stderr,
    /^flagwire: invalid FLAGWIRE_DATA: data directory .*a-file is not writable \(ENOTDIR\)\n$/,
    'a file is not a data dir',
  );
  // Node's own recursive mkdir never returns here; ours must refuse at once.
  const proc = await cli('/proc/flagwire-test/data', ['org', 'create', '--name', 'A'], { json: false });
  t.equal(proc.code, 2, 'a data dir under /proc is refused');
  t.match(proc.stderr, /^flagwire: invalid FLAGWIRE_DATA: data directory \/proc\/flagwire-test\/data is not writable \(ENOENT\)\n$/);
});

t.test('missing parent directories of the data dir are created', async (t) => {
  const nested = join(tempDir(t), 'a', 'b', 'data');
  const r = await cli(nested, ['org', 'create', '--name', 'Nested']);
  t.equal(r.code, 0);
  t.ok(existsSync(join(nested, 'flagwire.mdb')), 'the data file is in the new directory');
});

t.test('a data dir the store refuses is a failure (exit 1), not written over', async (t) => {
  const foreign = tempDir(t);
  writeFileSync(join(foreign, 'notes.txt'), 'mine');
  const r = await cli(foreign, ['org', 'create', '--name', 'A']);
  t.equal(r.code, 1);
  t.match(r.json, { error: 'Storage unavailable', detail: /holds files Flagwire did not write \(notes\.txt\)/ });
  const plain = await cli(foreign, ['mail', 'list'], { json: false });
  t.equal(plain.code, 1);
  t.match(plain.stderr, /^error: Storage unavailable: data directory/);

  const newer = tempDir(t);
  await ok(t, newer, ['org', 'create', '--name', 'A']);
  const env = open({ path: join(newer, 'flagwire.mdb'), maxDbs: 16 });
  env.openDB({ name: 'meta' }).putSync('schemaVersion', 99);
  await env.close();
  const before = await exportStore(newer);
  const n = await cli(newer, ['org', 'create', '--name', 'B']);
  t.equal(n.code, 1);
  t.match(n.json, { error: 'Storage unavailable', detail: /written by a newer Flagwire \(schema 99/ });
  t.strictSame(await exportStore(newer), before);
});

t.test('without --json: fields for records, aligned tables for lists, errors on stderr', async (t) => {
  const dir = tempDir(t);
  const org = await ok(t, dir, ['org', 'create', '--name', 'Acme', '--plan', 'teams-trial', '--trial-ends', '2031-02-03']);
  const r = await cli(dir, ['org', 'update', org.id, '--standing', 'good'], { json: false });
  t.equal(r.code, 0);
  t.match(
    r.stdout,
    new RegExp(
      `^id          ${org.id}\\nname        Acme\\nplan        teams-trial\\ntrial ends  2031-02-03T00:00:00.000Z\\nstanding    good\\n`,
    ),
  );

  const user = await ok(t, dir, ['user', 'create', '--email', 'owner@acme.test', '--name', 'Olive']);
  await ok(t, dir, ['org', 'add-member', org.id, user.id, '--role', 'owner']);
  const project = await ok(t, dir, [
    'project',
    'create',
    '--name',
    'Shop',
    '--org',
    org.id,
    '--kind',
    'multi',
    '--env',
    'staging,production',
  ]);
  const created = await cli(
    dir,
    ['token', 'create', project.id, '--as', user.id, '--name', 'deploy-bot', '--permission', 'write', '--env', 'staging'],
    { json: false },
  );
  t.equal(created.code, 0);
  const secret = /^ {2}(fw_\S+)$/m.exec(created.stdout)?.[1];
  t.ok(secret, 'the secret is printed on its own line');
  t.match(created.stdout, /shown only now/);
  await ok(t, dir, ['token', 'create', project.id, '--as', user.id, '--name', 'ro', '--permission', 'read', '--expires', '90d']);

  const list = await cli(dir, ['token', 'list', project.id], { json: false });
  t.equal(list.code, 0);
  t.notMatch(list.stdout, secret!, 'the list never shows a secret');
  const lines = list.stdout.trimEnd().split('\n');
  t.equal(lines.length, 3, 'header and two rows');
  t.match(lines[0], /^ID {20}NAME {8}PERMISSION {2}ENVIRONMENTS {2}EXPIRES {19}STATUS {2}CREATED BY {8}CREATED$/);
  for (const column of ['NAME', 'PERMISSION', 'ENVIRONMENTS', 'EXPIRES', 'STATUS']) {
    const at = lines[0]!.indexOf(column);
    for (const line of lines.slice(1)) t.match(line.slice(at - 2, at), /^ {2}$/, `${column} column aligned`);
    for (const line of lines.slice(1)) t.notMatch(line[at], ' ', `${column} value starts at the column`);
  }
  t.match(lines[1], /deploy-bot +write +staging +never +active/);
  t.match(lines[2], /ro +read +all +\d{4}-\d\d-\d\dT.*Z +active/);
  for (const line of lines) t.equal(line, line.trimEnd(), 'no trailing blanks');

  const audit = await cli(dir, ['audit', project.id], { json: false });
  t.match(audit.stdout, /^SEQ {2}AT +ACTOR +ACTION +FLAG +ENV +CHANGES\n/);
  t.match(audit.stdout, /user:\S+ \(Olive\) +token\.create +- +- +token: null -> \{"id":"\w+","name":"deploy-bot"\}/);

  const empty = await cli(dir, ['mail', 'list'], { json: false });
  t.equal(empty.stdout, 'No mail.\n');

  const missing = await cli(dir, ['token', 'activity', 'nope'], { json: false });
  t.equal(missing.code, 1);
  t.equal(missing.stdout, '');
  t.equal(missing.stderr, 'error: Not found: No token with id "nope" exists.\n');
});

t.test('human output of activity, mail and audit changes', async (t) => {
  const dir = tempDir(t);
  const at = Date.UTC(2030, 0, 2, 3, 4, 5);
  const { tokenId, projectId, multiId, groupFlagId } = await inStore(dir, (run, w) => {
    const org = run('orgCreate', { principal: kOperator, name: 'A', plan: 'teams' });
    const user = run('userCreate', { email: 'o@a.test' });
    run('orgAddMember', { principal: kOperator, orgId: org.id, userId: user.id, role: 'owner' });
    const project = run('projectCreate', { principal: kOperator, name: 'P', orgId: org.id });
    const multi = run('projectCreate', { principal: kOperator, name: 'M', orgId: org.id, kind: 'multi', environments: ['staging'] });
    const groupFlag = run('flagCreate', {
      projectId: multi.id,
      principal: kOperator,
      body: { name: 'search', environments: { staging: { enabled: true, trafficPercentage: 30, cohorts: ['qa'] } } },
    });
    const token = run('tokenCreate', { projectId: project.id, principal: principalOf(user.id), name: 'n', permission: 'read' });
    putActivity(w, {
      tokenId: token.id,
      lastUsedAt: at,
      lastDenialMailAt: null,
      recent: [{ at, method: 'GET', path: '/api/v1/flags', status: 200 }],
      denials: [{ at, reason: 'read token on a write route', method: 'PATCH', path: '/api/v1/flags/f1' }],
    });
    appendMail(w, {
      at,
      to: 'o@a.test',
      subject: 'Token n was refused',
      text: 'Line one\nLine two',
      sentAt: null,
      attempts: 0,
      nextAttemptAt: at,
      lastError: null,
      failedAt: null,
    });
    appendMail(w, {
      at,
      to: 'x@a.test',
      subject: 'Other',
      text: 'Body',
      sentAt: null,
      attempts: 3,
      nextAttemptAt: at,
      lastError: 'connection refused',
      failedAt: at + 1000,
    });
    return { tokenId: token.id, projectId: project.id, multiId: multi.id, groupFlagId: groupFlag.id };
  });
  const activity = await cli(dir, ['token', 'activity', tokenId], { json: false });
  t.match(activity.stdout, /last used {2}2030-01-02T03:04:05\.000Z/);
  t.match(
    activity.stdout,
    /Recent activity \(1\):\n {2}AT +METHOD +PATH +STATUS\n {2}2030-01-02T03:04:05\.000Z +GET +\/api\/v1\/flags +200/,
  );
  t.match(
    activity.stdout,
    /Recent denials \(1\):\n {2}AT +REASON +METHOD +PATH\n {2}2030-01-02T03:04:05\.000Z +read token on a write route +PATCH/,
  );
  const mail = await cli(dir, ['mail', 'list'], { json: false });
  t.match(
    mail.stdout,
    /^SEQ {2}AT +TO +SUBJECT +SENT\n1 +2030-01-02T03:04:05\.000Z +o@a\.test +Token n was refused +pending \(0 attempts\)\n/,
  );
  t.match(mail.stdout, /\n2 +2030-01-02T03:04:05\.000Z +x@a\.test +Other +failed 2030-01-02T03:04:06\.000Z \(3 attempts\)\n/);
  t.match(mail.stdout, /--- #2 to x@a\.test: Other\n {2}Body\n {2}\(last delivery error: connection refused\)/);
  t.match(mail.stdout, /--- #1 to o@a\.test: Token n was refused\n {2}Line one\n {2}Line two/);

  const project = await cli(dir, ['env', 'add', multiId, 'production'], { json: false });
  t.match(
    project.stdout,
    new RegExp(
      `^id            ${multiId}\nname          M\nkind          multi \\(environments\\)\norganisation  \\S+\nenvironments  staging, production\n`,
    ),
  );
  const audience = await cli(dir, ['audience', 'create', projectId, '--name', 'Beta', '--rule', 'plan=beta,pro', '--rule', 'country=DE'], {
    json: false,
  });
  t.match(audience.stdout, /^id {7}\S+\nproject {2}\S+\nname {5}Beta\nrules {4}plan=beta,pro; country=DE\n/);
  const flag = await cli(dir, ['flag', 'cohorts', groupFlagId, 'alice,bob'], { json: false });
  t.match(flag.stdout, /\nkind +groupflag\n/);
  t.match(flag.stdout, /\ncohorts +alice, bob \(flag-wide\)\nenv staging +on, 30%, cohorts: qa\n/);
});
