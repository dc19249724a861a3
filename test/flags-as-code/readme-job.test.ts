// The README's CI job ("Flags in Git and CI"), taken from the README itself and run as GitHub would run
// it, over a Git repository, against a real server (issue 41): a pull request's run on its commit, the
// merge's run on main, a nightly run. Each step runs when its `if` holds for the event; a `run` step
// that speaks to Flagwire runs with bash as the job runs it, with the step's `env` (secrets filled in)
// in a checkout of the commit. What only GitHub does, the test does in its place: the checkout is a
// clone at the commit, an uploaded artifact is kept by name, and the step that asks GitHub for the pull
// request's saved plan (gh) finds the artifact that pull request's run saved, in the directory it names.
//
// The point of the job: the merge applies the plan the reviewers saw. A change made by hand between the
// pull request's plan and the merge stops the merge's run, nothing applied; the hand change stays.
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import { parse } from 'yaml';
import { tempDir } from '../helpers/scratch-dir.js';
import { call } from '../helpers/http.js';
import { plain } from '../helpers/plain-process.js';
import { startWorldServer } from '../helpers/world-server.js';

const kRepo = fileURLToPath(new URL('../../../', import.meta.url));
const readme = readFileSync(join(kRepo, 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## Flags in Git and CI'));
const jobText = /^```yaml\n([\s\S]*?)^```$/m.exec(section)?.[1] ?? '';

type GitHubEvent = 'pull_request' | 'push' | 'schedule';
interface Step {
  name?: string;
  if?: string;
  uses?: string;
  with?: Record<string, string | boolean>;
  env?: Record<string, string>;
  run?: string;
}
const workflow = parse(jobText) as { on: Record<string, unknown>; jobs: { flags: { steps: Step[] } } };
const steps = workflow.jobs.flags.steps;

const { server, world } = await startWorldServer(t);
const scratch = tempDir(t, 'flagwire-job-');
const jq = await promisify(execFile)(join(kRepo, 'scripts/ensure.sh'), ['jq']).catch((err: Error) => err);

// The team's repository, with no global or system Git configuration of this machine.
const origin = join(scratch, 'origin');
const kGitEnv = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' };
function git(cwd: string, ...args: string[]): string {
  return execFileSync('/usr/bin/git', args, { cwd, env: kGitEnv, encoding: 'utf8' });
}

const secrets: Record<string, string> = {
  FLAGWIRE_URL: server.baseUrl,
  FLAGWIRE_READ_TOKEN: world.secrets.read,
  FLAGWIRE_WRITE_TOKEN: world.secrets.write,
};

/** `github.event_name == 'x'` and `!=`: the only conditions the job uses (anything else fails the test). */
function holds(condition: string | undefined, event: GitHubEvent): boolean {
  if (condition === undefined) return true;
  const m = /^github\.event_name (==|!=) '(\w+)'$/.exec(condition);
  if (m === null) throw new Error(`the test does not know the condition "${condition}"`);
  return (m[2] === event) === (m[1] === '==');
}

/** A step's env with its `${{ secrets.NAME }}` filled in. */
function stepEnv(step: Step): Record<string, string> {
  return Object.fromEntries(
    Object.entries(step.env ?? {}).map(([k, v]) => [k, v.replace(/\$\{\{ secrets\.(\w+) \}\}/g, (_, name: string) => secrets[name] ?? '')]),
  );
}

/** Artifacts kept by the runs, by the run (its event and commit) and the artifact's name. */
const artifacts = new Map<string, string>();

interface JobRun {
  /** Exit status of the first failing step (0: every step passed), as the job's check shows. */
  code: number;
  /** Each step's output, by the step's name. */
  out: Map<string, string>;
}

let runs = 0;

/** Runs the job for `event` on `commit` of the repository; `merged`: a push's pull request head, for gh's look-up. */
async function runJob(event: GitHubEvent, commit: string, merged?: string): Promise<JobRun> {
  const workspace = join(scratch, `run-${++runs}`);
  const out = new Map<string, string>();
  for (const step of steps) {
    if (!holds(step.if, event)) continue;
    const name = step.name ?? step.uses ?? '';
    if (step.uses?.startsWith('actions/checkout@')) {
      git(scratch, 'clone', '--quiet', origin, workspace);
      git(workspace, 'checkout', '--quiet', '--detach', commit);
    } else if (step.uses?.startsWith('actions/upload-artifact@')) {
      const dir = join(scratch, `artifact-${event}-${commit}-${step.with!.name}`);
      mkdirSync(dir, { recursive: true }); // a run again on the commit: overwrite, as the job asks
      cpSync(join(workspace, String(step.with!.path)), join(dir, String(step.with!.path)));
      artifacts.set(`${event}:${commit}:${step.with!.name}`, dir);
    } else if (step.uses !== undefined) {
      throw new Error(`the test does not know the action ${step.uses}`);
    } else if (stepEnv(step).GH_TOKEN !== undefined) {
      // GitHub's part: the newest saved plan of the merged pull request's commit, downloaded where gh puts it.
      const m = /gh run download "\$run" --name (\S+) --dir (\S+)/.exec(step.run!);
      if (m === null) throw new Error(`the test does not know what "${name}" asks of GitHub`);
      const saved = merged === undefined ? undefined : artifacts.get(`pull_request:${merged}:${m[1]}`);
      if (saved === undefined) return { code: 1, out };
      cpSync(saved, join(workspace, m[2]!), { recursive: true });
    } else {
      const r = await bash(step.run!, workspace, stepEnv(step));
      out.set(name, r.stdout + r.stderr);
      if (r.code !== 0) return { code: r.code, out };
    }
  }
  return { code: 0, out };
}

function bash(script: string, cwd: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  // GitHub's default shell for run: bash with -e and pipefail.
  return new Promise((resolve) => {
    execFile(
      ...plain('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script]),
      { cwd, env: { ...process.env, ...env } },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A pull request: a branch from main whose commit sets checkout's percentage; its head commit. */
function pullRequest(branch: string, percentage: number): string {
  git(origin, 'checkout', '--quiet', '-b', branch, 'main');
  const file = JSON.parse(readFileSync(join(origin, 'flags.json'), 'utf8'));
  file.flags.checkout.trafficPercentage = percentage;
  writeFileSync(join(origin, 'flags.json'), `${JSON.stringify(file, null, 2)}\n`);
  git(origin, 'commit', '--quiet', '-am', `checkout to ${percentage}%`);
  const head = git(origin, 'rev-parse', 'HEAD').trim();
  git(origin, 'checkout', '--quiet', 'main');
  return head;
}

/** Merges the pull request into main, as its merge button does (a merge commit); the merge commit. */
function merge(branch: string): string {
  git(origin, 'merge', '--quiet', '--no-ff', '-m', `Merge ${branch}`, branch);
  return git(origin, 'rev-parse', 'HEAD').trim();
}

async function checkout(): Promise<{ enabled: boolean; trafficPercentage: number }> {
  const read = await call(server.baseUrl, 'GET', `/api/v1/flags/${world.ids.flag}`, { token: world.secrets.read });
  return { enabled: read.json.enabled, trafficPercentage: read.json.trafficPercentage };
}

const kPlanStep = 'Plan';

t.test('the README has the job: plan and save on a pull request, apply the saved plan on main, drift nightly', async (t) => {
  t.not(jobText, '', 'a yaml block in "Flags in Git and CI"');
  t.strictSame(Object.keys(workflow.on), ['pull_request', 'push', 'schedule']);
  t.ok(steps.some((s) => s.name === kPlanStep));
});

t.test(
  'the Git workflow: the merge applies the reviewed plan; a hand change after the plan stops it and stays',
  { skip: jq instanceof Error ? 'jq cannot be installed here' : false },
  async (t) => {
    // The project's flags, exported and committed on main.
    mkdirSync(origin);
    git(origin, 'init', '--quiet', '--initial-branch=main');
    git(origin, 'config', 'user.name', 'Flag Keeper');
    git(origin, 'config', 'user.email', 'keeper@example.test');
    git(origin, 'config', 'commit.gpgsign', 'false');
    const exported = await call(server.baseUrl, 'GET', '/api/v1/export', { token: world.secrets.read });
    t.equal(exported.status, 200);
    writeFileSync(join(origin, 'flags.json'), exported.text);
    git(origin, 'add', 'flags.json');
    git(origin, 'commit', '--quiet', '-m', 'Flags as they are');
    t.equal((await runJob('schedule', 'main')).code, 0, 'no drift: the nightly run passes');

    // A pull request, reviewed, merged: the merge applies what the reviewers saw.
    const first = pullRequest('checkout-75', 75);
    const review = await runJob('pull_request', first);
    t.equal(review.code, 0, review.out.get(kPlanStep) ?? '');
    t.match(review.out.get(kPlanStep), /^update flag checkout\n {4}trafficPercentage: 50 -> 75\n$/m, 'the plan is shown');
    const saved = artifacts.get(`pull_request:${first}:flags-plan`);
    t.ok(saved, 'the pull request run saves its plan');
    const reviewed = saved === undefined ? {} : JSON.parse(readFileSync(join(saved, 'plan.json'), 'utf8'));
    t.match(reviewed, { changed: true, digest: /^[0-9a-f]{64}$/ }, 'the saved plan');
    t.strictSame(await checkout(), { enabled: true, trafficPercentage: 50 }, 'a pull request changes nothing');
    const applied = await runJob('push', merge('checkout-75'), first);
    t.equal(applied.code, 0, [...applied.out.values()].join('\n'));
    const answer = JSON.parse([...applied.out.values()].at(-1)!);
    t.match(answer, { changed: true, digest: reviewed.digest }, 'the changes applied are the reviewed plan');
    t.strictSame(await checkout(), { enabled: true, trafficPercentage: 75 });
    t.equal((await runJob('schedule', 'main')).code, 0, 'the project is main, the nightly run passes');

    // A second pull request is planned; then someone turns the flag off by hand; then it is merged.
    const second = pullRequest('checkout-90', 90);
    t.equal((await runJob('pull_request', second)).code, 0);
    const handChange = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.flag}`, {
      token: world.secrets.write,
      body: { enabled: false },
    });
    t.equal(handChange.status, 200);
    const stopped = await runJob('push', merge('checkout-90'), second);
    t.not(stopped.code, 0, 'the merge run stops');
    t.match([...stopped.out.values()].join('\n'), /"error":"Revision conflict"/, 'with the clear error');
    t.strictSame(await checkout(), { enabled: false, trafficPercentage: 75 }, 'the hand change stays and nothing was applied');
    t.not((await runJob('schedule', 'main')).code, 0, 'main and the project differ: the nightly run reports it');
  },
);
