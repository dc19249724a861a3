// The README's CI job ("Flags in Git and CI"), taken from the README itself: each step's `run` script is
// run with bash as the job runs it, against a real server, with the job's environment (URL, TOKEN) and
// a checked-out flags.json, so the copy-paste job cannot drift from the API.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import { tempDir } from '../helpers/scratch-dir.js';
import { call } from '../helpers/http.js';
import { plain } from '../helpers/plain-process.js';
import { startWorldServer } from '../helpers/world-server.js';

const kRepo = fileURLToPath(new URL('../../../', import.meta.url));
const readme = readFileSync(join(kRepo, 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## Flags in Git and CI'));
const job = /^```yaml\n([\s\S]*?)^```$/m.exec(section)?.[1] ?? '';

/** Each step's `run` script, by the step's name: the `run: |` block's lines, its indentation removed. */
function runScripts(yaml: string): Map<string, string> {
  const scripts = new Map<string, string>();
  const lines = yaml.split('\n');
  let name = '';
  for (let i = 0; i < lines.length; i++) {
    const named = /^\s*- name: (.+)$/.exec(lines[i]!);
    if (named) name = named[1]!;
    const inline = /^\s*run: (?!\|)(.+)$/.exec(lines[i]!);
    if (inline) scripts.set(name, inline[1]!);
    if (!/^\s*run: \|$/.test(lines[i]!)) continue;
    const body: string[] = [];
    const indent = /^\s*/.exec(lines[i + 1] ?? '')![0].length;
    while (i + 1 < lines.length && /^\s*$/.test(lines[i + 1]!) === false && /^\s*/.exec(lines[i + 1]!)![0].length >= indent)
      body.push(lines[++i]!.slice(indent));
    scripts.set(name, body.join('\n'));
  }
  return scripts;
}

const scripts = runScripts(job);
const { server, world } = await startWorldServer(t);
const workspace = tempDir(t, 'flagwire-job-');
const jq = await promisify(execFile)(join(kRepo, 'scripts/ensure-jq.sh'), []).catch((err: Error) => err);

async function step(name: string, token: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const script = scripts.get(name);
  if (script === undefined) throw new Error(`the job has no step "${name}"`);
  // GitHub's default shell for run: bash with -e and pipefail.
  return new Promise((resolve) => {
    execFile(
      ...plain('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script]),
      { cwd: workspace, env: { ...process.env, URL: server.baseUrl, TOKEN: token } },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

t.test('the README has the job, with its three steps', async (t) => {
  t.not(job, '', 'a yaml block in "Flags in Git and CI"');
  t.same([...scripts.keys()], ['Plan', 'Fail on drift (nightly)', 'Apply (main)']);
});

t.test(
  'plan, drift and apply run as the job runs them',
  { skip: jq instanceof Error ? 'jq cannot be installed here' : false },
  async (t) => {
    const exported = await call(server.baseUrl, 'GET', '/api/v1/export', { token: world.secrets.read });
    t.equal(exported.status, 200);
    writeFileSync(join(workspace, 'flags.json'), exported.text);

    let plan = await step('Plan', world.secrets.read);
    t.equal(plan.code, 0, plan.stderr);
    t.equal(plan.stdout, '', 'nothing to list');
    t.equal((await step('Fail on drift (nightly)', world.secrets.read)).code, 0, 'no drift: the nightly run passes');

    const file = JSON.parse(exported.text);
    file.flags.checkout.trafficPercentage = 75;
    writeFileSync(join(workspace, 'flags.json'), JSON.stringify(file, null, 2));
    plan = await step('Plan', world.secrets.read);
    t.equal(plan.code, 0, plan.stderr);
    t.equal(plan.stdout, 'update flag checkout\n    trafficPercentage: 50 -> 75\n', 'the plan is listed');
    t.not((await step('Fail on drift (nightly)', world.secrets.read)).code, 0, 'drift fails the nightly run');

    const apply = await step('Apply (main)', world.secrets.write);
    t.equal(apply.code, 0, apply.stderr);
    t.match(JSON.parse(apply.stdout), { changed: true, revision: Number });
    const flag = await call(server.baseUrl, 'GET', `/v1/flags/${world.ids.flag}?targetingKey=u1`);
    t.equal(flag.status, 200);
    const read = await call(server.baseUrl, 'GET', `/api/v1/flags/${world.ids.flag}`, { token: world.secrets.read });
    t.equal(read.json.trafficPercentage, 75, 'applied');

    // The project changed between the plan and the apply: the apply is refused, and the step fails.
    await step('Plan', world.secrets.read);
    const patched = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.flag}`, {
      token: world.secrets.write,
      body: { enabled: false },
    });
    t.equal(patched.status, 200);
    const stale = await step('Apply (main)', world.secrets.write);
    t.not(stale.code, 0, 'a stale plan fails the apply step');
    t.match(stale.stdout + stale.stderr, /Revision conflict/, `${stale.stdout}\n${stale.stderr}`);
  },
);
