// The CLI tests run most commands in the test process (test/helpers/cli.ts: src/cli/main.ts, from the
// build's bundle of it that the binary runs). This file proves that is the same run: for a representative command of
// every family, and for each kind of outcome (exit 0, 1 and 2; --json and text; help, version, usage
// and configuration errors), the real binary `node dist/src/cli/flagwire.cjs` gives the same exit status and
// the same bytes on stdout and stderr; and the binary's writes, made after in-process runs on the same
// data dir, land (an in-process run leaves no store handle open).
import t from 'tap';
import { type CliArg, cli, inStore, ok, type TestContext } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { kOperator } from '../../src/actor/audit-actor.js';

const dir = tempDir(t);
const ids: Record<string, string> = {};

t.before(async () => {
  await inStore(dir, (run) => {
    const org = run('orgCreate', { principal: kOperator, name: 'Acme', plan: 'teams' });
    const owner = run('userCreate', { email: 'o@acme.test', name: 'Olive' });
    const viewer = run('userCreate', { email: 'v@acme.test', name: 'Vera' });
    run('orgAddMember', { principal: kOperator, orgId: org.id, userId: owner.id, role: 'owner' });
    run('orgAddMember', { principal: kOperator, orgId: org.id, userId: viewer.id, role: 'viewer' });
    Object.assign(ids, { org: org.id, owner: owner.id, viewer: viewer.id });
  });
  const project = await ok(t, dir, ['project', 'create', '--name', 'Shop', '--org', ids.org!]);
  ids.project = project.id;
  ids.flag = (await ok(t, dir, ['flag', 'create', project.id, '--name', 'checkout', '--enabled', '--as', ids.owner!])).id;
  await ok(t, dir, ['token', 'create', project.id, '--as', ids.owner!, '--name', 'ci', '--permission', 'read']);
  await ok(t, dir, ['audience', 'create', project.id, '--name', 'beta', '--rule', 'plan=pro,enterprise']);
});

/** The same command in this process and as the real binary: same exit status, same stdout and stderr bytes. */
async function same(t: TestContext, data: string | null, args: readonly CliArg[], json: boolean, code: number) {
  const what = `flagwire ${args.join(' ')}${json ? ' --json' : ''}`;
  const inProcess = await cli(data, args, { json });
  const binary = await cli(data, args, { json, process: true });
  t.equal(binary.code, code, `${what}: the binary exits ${code}`);
  t.strictSame(
    { code: inProcess.code, stdout: inProcess.stdout, stderr: inProcess.stderr },
    { code: binary.code, stdout: binary.stdout, stderr: binary.stderr },
    `${what}: same exit status and output in process`,
  );
  t.equal(process.exitCode, undefined, `${what}: the in-process run leaves the test process's exit status alone`);
}

t.test('--version, --help, per-command help, usage errors: the same exit status and bytes', async (t) => {
  for (const json of [true, false]) {
    await same(t, null, ['--version'], json, 0);
    await same(t, null, ['nope'], json, 2);
    await same(t, null, ['flag', 'create'], json, 2);
  }
  await same(t, null, ['--help'], false, 0);
  await same(t, null, ['token', 'create', '--help'], false, 0);
});

t.test('reads of every family, --json and text: the same exit status and bytes', async (t) => {
  const reads: CliArg[][] = [
    ['org', 'list'],
    ['user', 'list'],
    ['project', 'list'],
    ['project', 'show', ids.project!],
    ['audience', 'list', ids.project!],
    ['flag', 'list', ids.project!],
    ['flag', 'show', ids.flag!],
    ['token', 'list', ids.project!],
    ['audit', ids.project!],
    ['mail', 'list'],
  ];
  for (const args of reads) for (const json of [true, false]) await same(t, dir, args, json, 0);
});

t.test('refusals (exit 1) and a missing data dir (exit 2): the same exit status and bytes', async (t) => {
  for (const json of [true, false]) {
    await same(t, dir, ['flag', 'rename', ids.flag!, 'other', '--as', ids.viewer!], json, 1);
    await same(t, dir, ['project', 'show', 'prj_doesnotexist'], json, 1);
    await same(t, `${dir}/missing`, ['user', 'list'], json, 2);
  }
});

t.test('writes by the binary after in-process runs land, and read back the same in process', async (t) => {
  const created = await cli(dir, ['flag', 'create', ids.project!, '--name', 'search', '--as', ids.owner!], { process: true });
  t.equal(created.code, 0, 'flag create: exit 0 from the binary');
  t.strictSame(await ok(t, dir, ['flag', 'show', created.json.id]), created.json, 'the flag it created, read in process');
  const renamed = await cli(dir, ['flag', 'rename', ids.flag!, 'checkout-v2', '--as', ids.owner!], { process: true });
  t.equal(renamed.code, 0, 'flag rename: exit 0 from the binary');
  t.equal((await ok(t, dir, ['flag', 'show', ids.flag!])).name, 'checkout-v2', 'the rename, read in process');
});
