// Rollout guards against a real Prometheus (Debian's package, started by the test) scraping a real
// Flagwire and a test exporter whose value the test moves: a healthy reading lets the rollout run, a
// breach rolls it back (or pauses it), and the reading that tripped it is in the audit entry. Also a
// guard on Flagwire's own metrics, read by the server from its own GET /metrics.
import t from 'tap';
import { call } from '../helpers/http.js';
import { prometheusPort, startExporter, startPrometheus } from '../helpers/prometheus.js';
import { startWorldServer } from '../helpers/world-server.js';

const promPort = await prometheusPort();
const exporter = await startExporter('checkout_error_ratio', 0.01);
t.teardown(() => exporter.close());
const { server, world } = await startWorldServer(t, {
  FLAGWIRE_PROMETHEUS_URL: `http://127.0.0.1:${promPort}`,
  FLAGWIRE_PROMETHEUS_METRICS: 'checkout_*',
});
const prometheus = await startPrometheus(promPort, { flagwire: `127.0.0.1:${server.port}`, exporter: exporter.target });
t.teardown(() => prometheus.stop());
const { ids, secrets } = world;
const base = server.baseUrl;
const kHourMs = 3_600_000;
const steps = [{ trafficPercentage: 60, holdMs: kHourMs }, { trafficPercentage: 80, holdMs: kHourMs }, { trafficPercentage: 100 }];

const rollout = async (id: string) =>
  ((await call(base, 'GET', '/api/v1/rollouts', { token: secrets.read })).json.rollouts as Record<string, unknown>[]).find(
    (r) => r.id === id,
  )!;
const served = async (flagId: string) =>
  (await call(base, 'GET', `/api/v1/flags/${flagId}`, { token: secrets.read })).json.trafficPercentage as number;
const audit = () => {
  world.store.resetReadTxn();
  return world.store.listAudit(ids.single, { limit: 100, before: null });
};

/** Polls until `ok`; the bound only catches a hang (Prometheus scrapes every second). */
async function until<T>(what: string, get: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const value = await get();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`never: ${what} (last: ${JSON.stringify(value)})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

t.test('a PromQL guard: healthy readings, then a breach rolls the rollout back, the reading audited', async (t) => {
  await until(
    'Prometheus has scraped the exporter',
    () => prometheus.query('checkout_error_ratio'),
    (a) => (a.data?.result.length ?? 0) > 0,
  );
  const guard = { prometheus: 'max(checkout_error_ratio)', max: 0.05, intervalMs: 1000, onBreach: 'rollback' };
  const started = await call(base, 'POST', `/api/v1/flags/${ids.flag}/rollouts`, { token: secrets.write, body: { steps, guard } });
  t.equal(started.status, 201, started.text);
  t.match(started.json, { guard: { ...guard, min: null }, guardReading: null });
  const id = started.json.id as string;
  t.equal(await served(ids.flag), 60, 'the first step at once');

  const healthy = await until(
    'a healthy reading',
    () => rollout(id),
    (r) => (r.guardReading as { value?: number } | null)?.value === 0.01,
  );
  t.match(healthy, { status: 'running', guardReading: { breached: false, note: null, failures: 0 } });

  exporter.set(0.2);
  const ended = await until(
    'the breach',
    () => rollout(id),
    (r) => r.status !== 'running',
  );
  t.match(ended, {
    status: 'rolled-back',
    pausedReason: 'guard breached: read 0.2, above max 0.05',
    guardReading: { value: 0.2, breached: true },
  });
  t.equal(await served(ids.flag), 50, 'back to the percentage before the first step');
  const breach = audit().find((e) => e.action === 'rollout.guard-breach' && e.flagId === ids.flag);
  t.match(breach, {
    actor: `plan:${id}`,
    changes: {
      guard: { before: 'prometheus: max(checkout_error_ratio) (max 0.05; on breach: rollback)', after: { value: 0.2, breached: true } },
      rollout: { before: 'running', after: 'rolled-back' },
    },
  });
  exporter.set(0.01);
});

t.test("Prometheus's refusal of the expression pauses at once, saying why", async (t) => {
  const guard = { prometheus: 'sum(rate(checkout_error_ratio[1m]', max: 1, intervalMs: 1000 };
  const started = await call(base, 'POST', `/api/v1/flags/${ids.flag2}/rollouts`, { token: secrets.write, body: { steps, guard } });
  t.equal(started.status, 201, started.text);
  const id = started.json.id as string;
  const paused = await until(
    'the pause',
    () => rollout(id),
    (r) => r.status !== 'running',
  );
  t.match(paused, {
    status: 'paused',
    pausedReason: /^guard breached: the guard cannot be read: Prometheus refused the expression: .*parse error/,
  });
  t.equal((await call(base, 'POST', `/api/v1/rollouts/${id}/rollback`, { token: secrets.write })).status, 200);
});

t.test("a guard on Flagwire's own metrics, also scraped by Prometheus: answers that fail push it past its bound", async (t) => {
  // Each unknown flag's evaluation is a 404 of the Evaluation API: its count is the guard's reading.
  const selector = 'flagwire_http_requests_total{route="/v1/flags/{flag_id}",status="404"}';
  const guard = { flagwire: selector, max: 5, intervalMs: 1000 };
  t.equal((await call(base, 'GET', '/v1/flags/nope', { token: secrets.read })).status, 404, 'the series exists');
  const started = await call(base, 'POST', `/api/v1/flags/${ids.flag2}/rollouts`, { token: secrets.write, body: { steps, guard } });
  t.equal(started.status, 201, started.text);
  const id = started.json.id as string;
  const first = await until(
    'a first reading',
    () => rollout(id),
    (r) => r.guardReading !== null,
  );
  t.match(first, { status: 'running', guardReading: { value: null, note: /second reading/ } }, 'a counter needs two readings');
  const quiet = await until(
    'a rate',
    () => rollout(id),
    (r) => typeof (r.guardReading as { value?: unknown }).value === 'number',
  );
  t.match(quiet, { status: 'running', guardReading: { breached: false } });

  // 404s at well over 5 a second until the guard trips.
  const noisy = (async () => {
    while ((await rollout(id)).status === 'running')
      await Promise.all(Array.from({ length: 20 }, () => call(base, 'GET', '/v1/flags/nope', { token: secrets.read })));
  })();
  await noisy;
  const paused = await rollout(id);
  t.match(paused, { status: 'paused', pausedReason: /^guard breached: read [\d.]+, above max 5$/ });
  const promCount = await until(
    'Prometheus sees the same counter',
    () => prometheus.query(`sum(${selector})`),
    (a) => Number((a.data?.result[0] as { value?: string[] } | undefined)?.value?.[1] ?? 0) > 5,
  );
  t.ok(promCount.data!.result.length > 0, 'Prometheus scraped Flagwire, the series the guard read');
});
