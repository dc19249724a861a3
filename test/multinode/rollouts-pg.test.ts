// A progressive rollout on two nodes of one PostgreSQL (issue 27, item 4): both nodes' schedulers ask
// for each due step, and each step is taken once (the writer's transaction holds the revision lock and
// checks the step is still due), so PostgreSQL's change log holds exactly one flag.patch by plan:<id>
// per step, in order, and both nodes serve the completed rollout. A guard read by both nodes from one
// Prometheus breaches once: one audit entry, one rollback. Nodes run on real time, so the holds are
// short; the bounds below only catch a hang.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { call } from '../helpers/http.js';
import { sharedPostgres } from '../helpers/postgres.js';
import { prometheusPort, startExporter, startPrometheus } from '../helpers/prometheus.js';
import { kUnlimited } from '../reliability/support.js';
import { changeLog, seedInProcess, startReadyNodes } from './support.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());
const kHangMs = 60_000;

t.test('two nodes: every step of a rollout taken once, in order, and both serve the end', async (t) => {
  const url = await pg.newDatabase();
  const database = new URL(url).pathname.slice(1);
  const seeded = await seedInProcess(t, url);
  const nodes = await startReadyNodes(t, url, 2, kUnlimited);
  const api = (i: number, method: string, path: string, body?: unknown) =>
    call(nodes[i]!.baseUrl, method, path, { token: seeded.secret, body });
  t.equal((await api(0, 'PATCH', `/api/v1/flags/${seeded.flagId}`, { enabled: true })).status, 200);

  const steps = [
    { trafficPercentage: 10, holdMs: 1500 },
    { trafficPercentage: 40, holdMs: 1500 },
    { trafficPercentage: 70, holdMs: 1500 },
    { trafficPercentage: 100 },
  ];
  const started = await api(1, 'POST', `/api/v1/flags/${seeded.flagId}/rollouts`, { steps });
  t.equal(started.status, 201, started.text);
  const id = started.json.id as string;

  const deadline = Date.now() + kHangMs;
  // A node's copy may not have the rollout yet (it was started on node 1): absent reads as not completed.
  const status = async (i: number) =>
    (await api(i, 'GET', '/api/v1/rollouts')).json.rollouts.find((r: { id: string }) => r.id === id)?.status as string | undefined;
  for (const i of [0, 1]) {
    while ((await status(i)) !== 'completed') {
      if (Date.now() > deadline) throw new Error(`the rollout never completed on node ${i}`);
      await sleep(100);
    }
    t.match(
      (await api(i, 'GET', `/api/v1/flags/${seeded.flagId}`)).json,
      { enabled: true, trafficPercentage: 100 },
      `node ${i} serves the end`,
    );
  }

  // PostgreSQL's change log: one flag.patch by plan:<id> per step, in order, each in its own revision.
  const patches: { revision: number; after: unknown }[] = [];
  for (const { revision, change } of await changeLog(pg, database)) {
    if (change.kind === 'audit' && change.value.actor === `plan:${id}` && change.value.action === 'flag.patch')
      patches.push({ revision, after: change.value.changes.trafficPercentage?.after });
  }
  t.same(
    patches.map((p) => p.after),
    [10, 40, 70, 100],
    'each step patched once, in order',
  );
  t.equal(new Set(patches.map((p) => p.revision)).size, 4, 'each in its own revision');
});

t.test('two nodes read one guard from one Prometheus: the breach is acted on once', async (t) => {
  const url = await pg.newDatabase();
  const database = new URL(url).pathname.slice(1);
  const seeded = await seedInProcess(t, url);
  const exporter = await startExporter('errors_ratio', 0);
  t.teardown(() => exporter.close());
  const promPort = await prometheusPort();
  const env = { ...kUnlimited, FLAGWIRE_PROMETHEUS_URL: `http://127.0.0.1:${promPort}`, FLAGWIRE_PROMETHEUS_METRICS: 'errors_ratio' };
  const nodes = await startReadyNodes(t, url, 2, env);
  const prometheus = await startPrometheus(promPort, { exporter: exporter.target });
  t.teardown(() => prometheus.stop());
  const api = (i: number, method: string, path: string, body?: unknown) =>
    call(nodes[i]!.baseUrl, method, path, { token: seeded.secret, body });
  const steps = [{ trafficPercentage: 20, holdMs: 3_600_000 }, { trafficPercentage: 100 }];
  const guard = { prometheus: 'max(errors_ratio)', max: 0.5, intervalMs: 1000, onBreach: 'rollback' };
  const started = await api(0, 'POST', `/api/v1/flags/${seeded.flagId}/rollouts`, { steps, guard });
  t.equal(started.status, 201, started.text);
  const id = started.json.id as string;
  const rollout = async (i: number) =>
    (await api(i, 'GET', '/api/v1/rollouts')).json.rollouts.find((r: { id: string }) => r.id === id) as Record<string, unknown> | undefined;

  const deadline = Date.now() + kHangMs;
  // Healthy readings first (Prometheus has scraped the exporter), taken by either node.
  const readValue = async () => ((await rollout(1))?.guardReading as { value?: unknown } | null | undefined)?.value;
  while ((await readValue()) !== 0) {
    if (Date.now() > deadline) throw new Error(`no healthy reading: ${JSON.stringify(await rollout(1))}`);
    await sleep(100);
  }
  exporter.set(0.9);
  for (const i of [0, 1]) {
    while ((await rollout(i))?.status !== 'rolled-back') {
      if (Date.now() > deadline) throw new Error(`never rolled back on node ${i}: ${JSON.stringify(await rollout(i))}`);
      await sleep(100);
    }
    t.match((await api(i, 'GET', `/api/v1/flags/${seeded.flagId}`)).json, { trafficPercentage: 0 }, `node ${i} serves the rollback`);
  }
  // A few more intervals: no node acts on the breach again.
  await sleep(2500);
  const breaches = (await changeLog(pg, database)).filter(
    ({ change }) => change.kind === 'audit' && change.value.actor === `plan:${id}` && change.value.action === 'rollout.guard-breach',
  );
  t.equal(breaches.length, 1, 'one breach recorded, by one node');
  t.match(breaches[0]!.change, { value: { changes: { guard: { after: { value: 0.9, breached: true } } } } });
});
