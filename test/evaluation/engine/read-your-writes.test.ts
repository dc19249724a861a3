// Read-your-writes (design §1, issue: "visible to the very next evaluation"): a Management API PATCH
// that returned 200, and a console change that finished (in another process), are seen by the next
// evaluation request. Zero stale answers allowed.
import { kOperator } from '../../../src/actor/audit-actor.js';
import { rmSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import { kCli, startTestServer } from '../../helpers/server.js';
import { buildEvalWorld } from './eval-world.js';
import { plainNode } from '../../helpers/plain-process.js';
import { keptAliveCall } from '../../helpers/http.js';

const world = buildEvalWorld();
const { ids } = world;
const server = await startTestServer({
  dataDir: world.dataDir,
  // 1,000 PATCHes in a few seconds: above the default Management rate limit of 600 per minute.
  env: { FLAGWIRE_RATE_LIMIT: '1000000', FLAGWIRE_EVAL_WORKERS: '2' },
});
t.teardown(async () => {
  await server.stop();
  await world.store.close();
  rmSync(world.dataDir, { recursive: true, force: true });
});

// Over kept-alive node:http: 2,400 requests, each far cheaper for this process than a fetch.
async function evaluate(path: string): Promise<{ status: number; json: any }> {
  const res = await keptAliveCall(server.baseUrl, 'GET', path);
  if (res.json === undefined) throw new Error(`GET ${path} ${res.status}: not JSON: ${res.text}`);
  return res;
}

async function patch(flagId: string, body: unknown, query = '', token = world.writeToken): Promise<void> {
  const res = await keptAliveCall(server.baseUrl, 'PATCH', `/api/v1/flags/${flagId}${query}`, { token, body });
  if (res.status !== 200) throw new Error(`PATCH ${res.status}: ${res.text}`);
}

t.test('1,000 Management PATCH -> evaluate pairs, zero stale', async (t) => {
  // Every PATCH flips the answer, so any evaluation served from the state before it is caught: a
  // four-step cycle over both fields (enabled off, on; percentage 0, 100) from enabled at 100%.
  // No targetingKey and a cohort not listed: at 0% and 100% the answer is deterministic.
  const steps = [{ enabled: false }, { enabled: true }, { trafficPercentage: 0 }, { trafficPercentage: 100 }] as const;
  await patch(ids.half, { enabled: true, trafficPercentage: 100 });
  let expected = true;
  let stale = 0;
  let checks = 0;
  for (let i = 0; i < 1000; i++) {
    await patch(ids.half, steps[i % 4]);
    expected = !expected;
    const single = await evaluate(`/v1/flags/${ids.half}?cohort=nobody`);
    checks++;
    if (single.json.enabled !== expected) stale++;
    if (i % 10 === 0) {
      const list = await evaluate(`/v1/flags/project/${ids.single}?cohort=nobody`);
      const entry = list.json.find((f: { id: string }) => f.id === ids.half);
      checks++;
      if (entry.enabled !== expected) stale++;
    }
  }
  t.equal(checks, 1100);
  t.equal(stale, 0, 'no evaluation answered from a state older than an acknowledged PATCH');
});

t.test('cohorts on a group flag environment: PATCH with ?env= then evaluate, 100 pairs', async (t) => {
  let stale = 0;
  for (let i = 0; i < 100; i++) {
    const cohort = `c-${i}`;
    await patch(ids.group, { cohorts: [cohort] }, '?env=production', world.multiWriteToken);
    const r = await evaluate(`/v1/flags/${ids.group}?env=production&cohort=${cohort}`);
    if (r.json.enabled !== true) stale++;
  }
  t.equal(stale, 0);
});

t.test('console changes from another process, 100 pairs: flag-wide cohorts, audience rules, plan', async (t) => {
  // world.run writes from this test process, outside the server: the same path as the console CLI.
  let stale = 0;
  for (let i = 0; i < 50; i++) {
    const cohort = `wide-${i}`;
    world.run('flagCohorts', { principal: kOperator, flagId: ids.group, cohorts: [cohort] });
    const r = await evaluate(`/v1/flags/${ids.group}?env=staging&cohort=${cohort}`);
    if (r.json.enabled !== true) stale++;
    const value = `v${i}`;
    world.run('audienceUpdate', { principal: kOperator, audienceId: ids.audience, rules: [{ attribute: 'plan', values: [value] }] });
    const a = await evaluate(`/v1/flags/${ids.aud}?plan=${value}`);
    if (a.json.enabled !== true) stale++;
  }
  t.equal(stale, 0);
  world.run('orgUpdate', { orgId: ids.orgTeams, plan: 'free' });
  t.equal((await evaluate(`/v1/flags/${ids.aud}?plan=v49`)).status, 403, 'plan change: at once');
  world.run('orgUpdate', { orgId: ids.orgTeams, plan: 'teams' });
  t.equal((await evaluate(`/v1/flags/${ids.aud}?plan=v49`)).status, 200);
});

t.test('the console CLI: a command that exited 0 is visible to the next evaluation', async (t) => {
  const cli = (...args: string[]) => promisify(execFile)(...plainNode([kCli, ...args, '--json', '--data', world.dataDir]));
  await cli('flag', 'cohorts', ids.group, 'from-cli');
  t.equal((await evaluate(`/v1/flags/${ids.group}?env=staging&cohort=from-cli`)).json.enabled, true);
  await cli('audience', 'update', ids.audience, '--rule', 'plan=cli');
  t.equal((await evaluate(`/v1/flags/${ids.aud}?plan=cli`)).json.enabled, true);
  await cli('flag', 'delete', ids.zero);
  t.equal((await evaluate(`/v1/flags/${ids.zero}`)).status, 404);
  t.notOk((await evaluate(`/v1/flags/project/${ids.single}`)).json.some((f: { id: string }) => f.id === ids.zero));
});
