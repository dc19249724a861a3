// Flag usage per flag, environment and hour on two nodes sharing PostgreSQL (docs/operations.md: Flag
// usage): evaluations through both nodes' Evaluation API in two environments, Flagwire's provider's
// reports (one per environment, each to a node of its own) and a relay's report (sent to both nodes under
// one batch id, one entry in an earlier hour) add up exactly per environment and hour, and to the flag's
// totals, as the Management API shows them.
import { OpenFeature } from '@openfeature/server-sdk';
import t from 'tap';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { flagCreate } from '../../src/flags/flag-commands.js';
import { projectCreate } from '../../src/projects/project-commands.js';
import { relayKeyCreate } from '../../src/relay/relay-key-commands.js';
import { tokenCreate } from '../../src/tokens/token-commands.js';
import { call } from '../helpers/http.js';
import { sharedPostgres } from '../helpers/postgres.js';
import { providerClient } from '../helpers/provider-client.js';
import type { TestServer } from '../helpers/server.js';
import { flushActivity } from '../helpers/test-hooks.js';
import { seededDatabase, startReadyNodes, until, writeInProcess } from './support.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());
t.teardown(() => OpenFeature.close());
t.setTimeout(300_000);

const kHourMs = 3600 * 1000;
const hourOf = (at: number) => Math.floor(at / kHourMs) * kHourMs;

t.test('evaluations, provider and relay reports on two nodes: exact per environment and hour', async (t) => {
  const { url, seeded } = await seededDatabase(t, pg);
  const made = await writeInProcess(t, url, (w) => {
    const now = Date.now();
    const project = projectCreate(
      w,
      { name: 'Platform', orgId: seeded.orgId, principal: kOperator, kind: 'multi', environments: ['staging', 'production'] },
      now,
    );
    const body = {
      name: 'checkout',
      environments: { staging: { enabled: true, trafficPercentage: 100 }, production: { enabled: true, trafficPercentage: 100 } },
    };
    const flag = flagCreate(w, { projectId: project.id, body, principal: principalOf(undefined) }, now);
    const token = tokenCreate(w, { projectId: project.id, principal: principalOf(seeded.ownerId), name: 'ci', permission: 'write' }, now);
    const relayKey = relayKeyCreate(w, { name: 'edge' }, now);
    return { projectId: project.id, flagId: flag.id, secret: token.secret, relaySecret: relayKey.secret };
  });
  const [a, b] = (await startReadyNodes(t, url, 2, { FLAGWIRE_TEST_HOOKS: '1' })) as [TestServer, TestServer];
  const startHour = hourOf(Date.now());

  const evaluate = async (node: TestServer, env: string, n: number) => {
    const statuses = new Set<number>();
    for (let i = 0; i < n; i++)
      statuses.add((await call(node.baseUrl, 'GET', `/v1/flags/${made.flagId}?env=${env}&targetingKey=u-${i}`)).status);
    t.same([...statuses], [200], `${n} evaluated in ${env}`);
  };
  await evaluate(a, 'staging', 30);
  await evaluate(a, 'production', 20);
  await evaluate(b, 'staging', 10);
  await evaluate(b, 'production', 40);
  // Refused for its environment: evaluated nowhere, counted nowhere.
  t.equal((await call(a.baseUrl, 'GET', `/v1/flags/${made.flagId}?env=nowhere`)).status, 404);

  const inProcess = async (node: TestServer, environment: string, n: number) => {
    const { provider, client } = await providerClient(`usage-${environment}`, {
      url: node.baseUrl,
      token: made.secret,
      project: made.projectId,
      environment,
      usage: { flushIntervalMs: 3_600_000 },
    });
    for (let i = 0; i < n; i++) await client.getBooleanValue(made.flagId, false, { targetingKey: `p-${i}` });
    t.ok(await provider.flushUsage(), `the provider's ${environment} report answered`);
    t.equal(provider.usageDropped, 0);
  };
  await inProcess(a, 'production', 25);
  await inProcess(b, 'staging', 15);

  const earlier = Date.now() - 2 * kHourMs;
  const relayReport = {
    batchId: 'relay-batch-0001',
    counts: [
      { flag: made.flagId, env: 'staging', evaluations: 7, lastEvaluatedAt: earlier },
      { flag: made.flagId, env: 'production', evaluations: 9, lastEvaluatedAt: Date.now() },
    ],
  };
  for (const node of [a, b]) {
    const r = await call(node.baseUrl, 'POST', '/v1/relay/usage', { token: made.relaySecret, body: relayReport });
    t.equal(r.status, 200, r.text);
    t.equal(r.json.counted, node === a, node === a ? 'counted on A' : 'the same batch on B: counted once');
  }
  // The provider's route names the environment with ?env=: an entry naming its own is refused, nothing counted.
  const perEntry = await call(a.baseUrl, 'POST', `/v1/usage/${made.projectId}?env=staging`, {
    token: made.secret,
    body: { batchId: 'provider-batch-0001', counts: [{ flag: made.flagId, env: 'production', evaluations: 1000 }] },
  });
  t.equal(perEntry.status, 400, perEntry.text);
  await Promise.all([flushActivity(a), flushActivity(b)]);
  const endHour = hourOf(Date.now());

  const staging = 30 + 10 + 15 + 7;
  const production = 20 + 40 + 25 + 9;
  // B reads its own copy, which follows PostgreSQL: A's last flush reaches it a moment later. Read once
  // the total is there; every figure is then held exact (a count made twice would show as more).
  let lifecycle = await call(b.baseUrl, 'GET', `/api/v1/flags/${made.flagId}/lifecycle`, { token: made.secret });
  await until(
    async () => {
      lifecycle = await call(b.baseUrl, 'GET', `/api/v1/flags/${made.flagId}/lifecycle`, { token: made.secret });
      return lifecycle.status !== 200 || (lifecycle.json.evaluations as number) >= staging + production;
    },
    60_000,
    "A's counts on B",
  );
  t.equal(lifecycle.status, 200, lifecycle.text);
  const view = lifecycle.json as {
    evaluations: number;
    hours: { hour: number; evaluations: number }[];
    environments: { environment: string | null; evaluations: number; hours: { hour: number; evaluations: number }[] }[];
  };
  t.same(
    view.environments.map((e) => [e.environment, e.evaluations]),
    [
      ['production', production],
      ['staging', staging],
    ],
    'every path in its environment, each evaluation once',
  );
  t.equal(view.evaluations, staging + production, 'the totals: the sum of the environments');
  const sum = (hours: { evaluations: number }[]) => hours.reduce((n, h) => n + h.evaluations, 0);
  t.equal(sum(view.hours), staging + production, "the totals' hours hold every evaluation");
  for (const env of view.environments) t.equal(sum(env.hours), env.evaluations, `${env.environment}: its hours hold every evaluation`);
  const stagingHours = view.environments.find((e) => e.environment === 'staging')!.hours;
  t.same(stagingHours[0], { hour: hourOf(earlier), evaluations: 7 }, "the relay's earlier hour is its own");
  if (startHour === endHour) {
    t.same(stagingHours.slice(1), [{ hour: startHour, evaluations: staging - 7 }], 'the rest in this hour');
    t.same(view.environments.find((e) => e.environment === 'production')!.hours, [{ hour: startHour, evaluations: production }]);
    t.same(view.hours, [
      { hour: hourOf(earlier), evaluations: 7 },
      { hour: startHour, evaluations: staging + production - 7 },
    ]);
  } else {
    // An hour ended during the run: which of the two each count fell in is the clock's, but nothing else.
    const thisRun = (hours: { hour: number }[]) => hours.every((h) => h.hour === startHour || h.hour === endHour);
    t.ok(thisRun(stagingHours.slice(1)), "staging's other counts in the run's two hours");
    t.ok(thisRun(view.environments.find((e) => e.environment === 'production')!.hours), "production's in the run's two hours");
  }

  const flag = await call(a.baseUrl, 'GET', `/api/v1/flags/${made.flagId}`, { token: made.secret });
  t.equal(flag.json.evaluations, staging + production, 'the flag representation shows the same total');
  const list = await call(a.baseUrl, 'GET', '/api/v1/lifecycle', { token: made.secret });
  const listed = list.json.flags.find((f: { id: string }) => f.id === made.flagId);
  t.same(
    listed.environments,
    view.environments.map(({ hours: _hours, ...rest }) => rest),
    'the list shows each environment, without its hours',
  );
});
