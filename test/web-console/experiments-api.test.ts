// The console's experiments endpoints over HTTP against the real server (docs/web-console.md:
// Experiments): a multi-environment project lists its first environment when none is named, and each
// one named; a viewer reads the list but is refused a make or a start in the writer's words, nothing
// written; a user outside the organisation gets the 404 of an unknown project; a bad plan is the API's
// 400, naming the field; the results of an experiment nobody sent events for say so.
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { experimentPlan } from '../helpers/experiment-plan.js';
import { demoWithViewer } from '../helpers/demo-viewer.js';
import { consoleCall, setPassword, signIn, type WebSession } from '../helpers/web-console.js';

const kPlatform = 'prj_DemoPlatform';
/** A console call as `session`, its JSON also as text for the messages. */
async function api(session: WebSession, method: string, path: string, body?: unknown) {
  const r = await consoleCall(base, session, method, path, body === undefined ? {} : { body });
  return { ...r, text: JSON.stringify(r.json) };
}
const { base, dir, owner, viewer } = await demoWithViewer(t);
/** A user with a password, a member of no organisation. */
async function outsider(email: string) {
  const id = (await cli(dir, ['user', 'create', '--email', email, '--name', email])).json.id as string;
  // A throw, not an assertion: this runs before the first test, after which tap would end on its own.
  if ((await setPassword(dir, id, 'a password of 12+\n')).code !== 0) throw new Error(`no password set for ${email}`);
  return signIn(base, email, 'a password of 12+');
}
const stranger = await outsider('stranger@example.test');

const list = await api(owner, 'GET', `projects/${kPlatform}`);
const flagId = (list.json.flags as { id: string; name: string }[]).find((f) => f.name === 'search-v2')!.id;
const plan = { ...experimentPlan(flagId, 1000), key: 'search-ranking' };

t.test('the first environment when none is named; each one named; a viewer reads, a stranger finds nothing', async (t) => {
  const first = await api(owner, 'GET', `projects/${kPlatform}/experiments`);
  t.equal(first.status, 200, first.text);
  t.match(first.json, { env: 'staging', experiments: [], can: { editFlags: true } });
  t.same(
    first.json.flags.map((f: { name: string; variants: string[] }) => [f.name, f.variants]),
    [['search-v2', ['on', 'off']]],
  );
  const made = await api(owner, 'POST', `projects/${kPlatform}/experiments?env=production`, plan);
  t.equal(made.status, 200, made.text);
  t.match(made.json, { key: 'search-ranking', environment: 'production', status: 'draft' });
  const production = await api(viewer, 'GET', `projects/${kPlatform}/experiments?env=production`);
  t.match(production.json, { env: 'production', can: { editFlags: false } });
  t.same(
    production.json.experiments.map((e: { key: string }) => e.key),
    ['search-ranking'],
  );
  t.same((await api(owner, 'GET', `projects/${kPlatform}/experiments`)).json.experiments, [], 'staging has none');
  const unknownEnv = await api(owner, 'GET', `projects/${kPlatform}/experiments?env=nowhere`);
  t.equal(unknownEnv.status, 400, unknownEnv.text);
  for (const path of [`projects/${kPlatform}/experiments`, `projects/${kPlatform}/experiments/search-ranking/results?env=production`]) {
    const r = await api(stranger, 'GET', path);
    t.equal(r.status, 404, `${path}: ${r.text}`);
  }
});

t.test('a viewer is refused a make and a start, in the writer words; a bad plan names the field; nothing written', async (t) => {
  const make = await api(viewer, 'POST', `projects/${kPlatform}/experiments?env=staging`, { ...plan, key: 'by-viewer' });
  t.equal(make.status, 403, make.text);
  const start = await api(viewer, 'POST', `projects/${kPlatform}/experiments/search-ranking/start?env=production`);
  t.equal(start.status, 403, start.text);
  const bad = await api(owner, 'POST', `projects/${kPlatform}/experiments?env=staging`, { ...plan, control: 'both' });
  t.equal(bad.status, 400, bad.text);
  t.match(bad.json.detail, /control: "both" must be one of variants/);
  t.same((await api(owner, 'GET', `projects/${kPlatform}/experiments?env=staging`)).json.experiments, []);
  const shown = await api(owner, 'GET', `projects/${kPlatform}/experiments?env=production`);
  t.equal(shown.json.experiments[0].status, 'draft', 'not started');
});

t.test('started and stopped by the owner; results before any event say there is not enough yet', async (t) => {
  const started = await api(owner, 'POST', `projects/${kPlatform}/experiments/search-ranking/start?env=production`);
  t.equal(started.status, 200, started.text);
  t.equal(started.json.status, 'running');
  const results = await api(viewer, 'GET', `projects/${kPlatform}/experiments/search-ranking/results?env=production`);
  t.equal(results.status, 200, results.text);
  t.match(results.json.results, { srm: { verdict: 'not-enough-data' }, history: [] });
  t.match(
    results.json.results.primary[0].verdict,
    /^Not enough subjects yet to compare on with the control on purchase; keep it running\.$/,
  );
  const stopped = await api(owner, 'POST', `projects/${kPlatform}/experiments/search-ranking/stop?env=production`);
  t.equal(stopped.json.status, 'stopped', stopped.text);
});
