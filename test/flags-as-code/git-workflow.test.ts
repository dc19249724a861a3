// Flags as code in a Git repository, as a team would run it (issue 26): export the project into
// flags.json and commit it; change the file in a commit; plan shows the change (exit 2), apply makes
// it, plan is then clean (exit 0) and a fresh export is the committed file byte for byte. A change made
// in the console since is drift: plan names the field, and `git diff` of a fresh export shows it.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { fileText } from '../../src/flags-as-code/flag-file.js';
import { cli, ok } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';

const dataDir = tempDir(t);
const repo = tempDir(t, 'flagwire-git-');
const flagsFile = join(repo, 'flags.json');

// The user's Git, with no global or system configuration of this machine: the repository sets its own.
const kGitEnv = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' };
function git(...args: string[]): string {
  return execFileSync('/usr/bin/git', args, { cwd: repo, env: kGitEnv, encoding: 'utf8' });
}

/** `flagwire export PROJECT > flags.json`. */
async function exportToFile(project: string): Promise<void> {
  const r = await cli(dataDir, ['export', project], { json: false });
  t.equal(r.code, 0, `export: exit 0 ${r.stderr}`);
  writeFileSync(flagsFile, r.stdout);
}

const plan = (project: string) => cli(dataDir, ['plan', project, '--file', flagsFile], { json: false });

t.test('export, commit, edit, plan, apply; then a console edit is drift that plan and git diff show', async (t) => {
  // The project, made in the console.
  const org = (await ok(t, dataDir, ['org', 'create', '--name', 'Acme', '--plan', 'teams', '--json'])).id;
  const project = (
    await ok(t, dataDir, [
      'project',
      'create',
      '--name',
      'Web',
      '--org',
      org,
      '--kind',
      'multi',
      '--env',
      'staging',
      '--env',
      'production',
      '--json',
    ])
  ).id;
  await ok(t, dataDir, ['audience', 'create', project, '--name', 'beta-testers', '--rule', 'plan=beta', '--json']);
  const checkout = (
    await ok(t, dataDir, ['flag', 'create', project, '--name', 'checkout', '--enabled', '--percentage', '20', '--env', 'staging', '--json'])
  ).id;
  await ok(t, dataDir, ['flag', 'create', project, '--name', 'search', '--json']);

  git('init', '--quiet', '--initial-branch=main');
  git('config', 'user.name', 'Flag Keeper');
  git('config', 'user.email', 'keeper@example.test');
  git('config', 'commit.gpgsign', 'false');
  await exportToFile(project);
  git('add', 'flags.json');
  git('commit', '--quiet', '-m', 'Flags as they are');
  const committed = readFileSync(flagsFile, 'utf8');
  t.equal((await plan(project)).code, 0, 'the export plans no change');

  // A change in review: checkout to 50% in staging, a new flag on in production.
  const edited = JSON.parse(committed);
  edited.flags.checkout.environments.staging.trafficPercentage = 50;
  edited.flags['dark-mode'] = {
    description: 'Dark theme',
    tags: ['ui'],
    environments: { production: { enabled: true, trafficPercentage: 100, audience: 'beta-testers' } },
  };
  writeFileSync(flagsFile, `${JSON.stringify(edited, null, 2)}\n`);
  git('commit', '--quiet', '-am', 'checkout to 50%, dark mode for beta testers');
  const review = git('diff', 'HEAD~1', '--', 'flags.json');
  t.match(review, /^-\s+"trafficPercentage": 20,$/m, 'the commit: the old percentage');
  t.match(review, /^\+\s+"trafficPercentage": 50,$/m, 'the commit: the new one');
  t.match(review, /^\+\s+"dark-mode": \{$/m, 'the commit: the new flag');

  const planned = await plan(project);
  t.equal(planned.code, 2, 'plan: a change (exit 2)');
  t.match(planned.stdout, /^\+ flag dark-mode$/m);
  t.match(planned.stdout, /^ {4}environments\.production\.audience: "beta-testers"$/m);
  t.match(planned.stdout, /^~ flag checkout$/m);
  t.match(planned.stdout, /^ {4}environments\.staging\.trafficPercentage: 20 -> 50$/m);
  t.match(planned.stdout, /^1 to create, 1 to change, 0 to delete\.$/m);

  const applied = await cli(dataDir, ['apply', project, '--file', flagsFile], { json: false });
  t.equal(applied.code, 0, `apply: exit 0 ${applied.stderr}`);
  t.match(applied.stdout, /^Applied to project \S+, now at revision \d+: 1 created, 1 changed, 0 deleted\.$/m);
  const clean = await plan(project);
  t.equal(clean.code, 0, 'then plan: no change (exit 0)');
  t.match(clean.stdout, /^No changes: /);
  const shown = await ok(t, dataDir, ['flag', 'show', checkout, '--json']);
  t.match(shown.environments.staging, { enabled: true, trafficPercentage: 50 });

  // The project is now what the commit says; export writes it in its own form (every key, by name).
  await exportToFile(project);
  const canonical = readFileSync(flagsFile, 'utf8');
  t.equal(canonical, fileText(JSON.parse(canonical)));
  git('commit', '--quiet', '-am', 'flags.json as flagwire export writes it');
  await exportToFile(project);
  t.equal(git('status', '--porcelain'), '', 'a fresh export is the committed file, byte for byte');

  // Someone changes the flag in the console.
  await ok(t, dataDir, ['flag', 'tags', checkout, 'pricing,q3', '--json']);
  await ok(t, dataDir, ['flag', 'create', project, '--name', 'console-only', '--json']);
  const drift = await plan(project);
  t.equal(drift.code, 2, 'drift: plan exit 2');
  t.match(drift.stdout, /^~ flag checkout {2}\(console only\)\n {4}tags: \["pricing","q3"\] -> \[\]$/m, 'naming the field, stored -> file');
  t.match(drift.stdout, /^Not in the file, kept \(--prune deletes them\): console-only$/m);

  await exportToFile(project);
  t.equal(git('status', '--porcelain'), ' M flags.json\n');
  const diff = git('diff', '--', 'flags.json');
  t.match(diff, /^-\s+"tags": \[\],$/m, 'git diff: the committed tags');
  t.match(diff, /^\+\s+"tags": \[$/m, "git diff: the console's tags");
  t.match(diff, /^\+\s+"pricing",$/m);
  t.match(diff, /^\+\s+"console-only": \{$/m, "git diff: the console's new flag");
  t.strictSame(
    diff.split('\n').filter((line) => line.startsWith('-') && !line.startsWith('---')),
    ['-      "tags": [],'],
    'and nothing else of the committed file changed',
  );

  // Either keep the console's change (commit the export) or put the file back: here, back to the commit.
  git('checkout', '--quiet', '--', 'flags.json');
  const undone = await cli(dataDir, ['apply', project, '--file', flagsFile, '--prune', '--json']);
  t.equal(undone.code, 0);
  t.strictSame(
    undone.json.changes.map((c: { op: string; name: string }) => [c.op, c.name]),
    [
      ['update', 'checkout'],
      ['delete', 'console-only'],
    ],
  );
  t.equal((await plan(project)).code, 0);
  await exportToFile(project);
  t.equal(git('status', '--porcelain'), '', 'the project is the committed file again');
  t.equal(git('log', '--format=%s').trim().split('\n').length, 3, 'three commits, no more');
});
