// What a guard may cost and ask (issue 42, item 6), against the real server and a stand-in Prometheus
// whose answers the test chooses: a guard may read only the metrics the operator lists
// (FLAGWIRE_PROMETHEUS_METRICS); an answer past 4 MiB is refused after reading no more than that; +Inf,
// -Inf and NaN readings are breaches, not "no data"; and a Prometheus that never answers holds neither
// the scheduled changes nor other rollouts' steps.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { advanceClock } from '../helpers/test-hooks.js';
import { startWorldServer } from '../helpers/world-server.js';

const kHourMs = 3_600_000;
const kBigAnswerBytes = 64 * 1024 * 1024;

/** The stand-in's answers by expression; it counts the bytes it sent and the requests it holds. */
const sent = { big: 0 };
const held = new Set<ServerResponse>();
const answers: Record<string, (res: ServerResponse) => void> = {
  inf_metric: (res) => vector(res, '+Inf'),
  neg_inf_metric: (res) => vector(res, '-Inf'),
  nan_metric: (res) => vector(res, 'NaN'),
  ok_metric: (res) => vector(res, '0.01'),
  hang_metric: (res) => held.add(res),
  big_metric: (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const write = () => {
      while (sent.big < kBigAnswerBytes) {
        sent.big += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', write);
      }
      res.end();
    };
    res.on('error', () => undefined);
    write();
  },
};
function vector(res: ServerResponse, value: string): void {
  const body = { status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [1, value] }] } };
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
const prometheus = createServer((req, res) => {
  const expression = new URL(req.url!, 'http://x').searchParams.get('query') ?? '';
  const answer = answers[expression.replace(/^max\((.*)\)$/, '$1')];
  if (answer === undefined) res.writeHead(400).end(JSON.stringify({ status: 'error', error: `unknown ${expression}` }));
  else answer(res);
});
await new Promise<void>((r) => prometheus.listen(0, '127.0.0.1', r));
t.teardown(async () => {
  for (const res of held) res.destroy();
  await new Promise<void>((r) => prometheus.close(() => r()));
});

const { server, world } = await startWorldServer(t, {
  FLAGWIRE_TEST_HOOKS: '1',
  FLAGWIRE_PROMETHEUS_URL: `http://127.0.0.1:${(prometheus.address() as AddressInfo).port}`,
  FLAGWIRE_PROMETHEUS_METRICS: 'ok_metric,inf_metric,neg_inf_metric,nan_metric,hang_metric,big_*',
  // Far past anything the test waits for: a hanging reading stays under way while the test watches.
  FLAGWIRE_GUARD_TIMEOUT_MS: '600000',
});
const { ids, secrets } = world;
const base = server.baseUrl;
const steps = [{ trafficPercentage: 10, holdMs: kHourMs }, { trafficPercentage: 100 }];

let flags = 0;
async function newFlag(): Promise<string> {
  const r = await call(base, 'POST', '/api/v1/flags', { token: secrets.write, body: { name: `bounded-${flags++}`, enabled: true } });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
  return r.json.id as string;
}
const startRollout = async (flagId: string, guard: unknown) =>
  call(base, 'POST', `/api/v1/flags/${flagId}/rollouts`, { token: secrets.write, body: { steps, guard } });
async function rollout(id: string): Promise<Record<string, any>> {
  const r = await call(base, 'GET', '/api/v1/rollouts', { token: secrets.read });
  return (r.json.rollouts as Record<string, any>[]).find((p) => p.id === id)!;
}
const ended = (id: string) =>
  pollUntil(
    `rollout ${id} stops`,
    () => rollout(id),
    (r) => r.status !== 'running',
  );

t.test('a guard may read only the metrics the operator lists; a refusal starts nothing', async (t) => {
  const flag = await newFlag();
  const refusals: [string, RegExp][] = [
    ['up', /guard\.prometheus: up is not among the metrics this server's guards may read/],
    ['sum(rate(secret_total[5m])) / sum(rate(ok_metric[5m]))', /secret_total is not among/],
    ['{job="billing"}', /every selector must name its metric/],
    ['ok_metric or {__name__=~"secret.*"}', /every selector must name its metric/],
    ['ok_metric{__name__="secret_total"}', /must not match on __name__/],
  ];
  for (const [expression, why] of refusals) {
    const r = await startRollout(flag, { prometheus: expression, max: 1 });
    t.equal(r.status, 400, expression);
    t.match(r.json, { error: 'Invalid request', detail: why }, expression);
  }
  t.same((await call(base, 'GET', '/api/v1/rollouts', { token: secrets.read })).json.rollouts, [], 'no rollout started');
  const flagNow = await call(base, 'GET', `/api/v1/flags/${flag}`, { token: secrets.read });
  t.equal(flagNow.json.trafficPercentage, 0, 'no step taken');
  const allowed = await startRollout(flag, {
    prometheus: 'sum by (job) (rate(big_requests_total{code=~"5.."}[5m])) / on(job) sum(rate(ok_metric[5m]) offset 1m)',
    max: 1,
  });
  t.equal(allowed.status, 201, `listed metrics, a prefix among them: ${allowed.text}`);
  t.equal((await call(base, 'POST', `/api/v1/rollouts/${allowed.json.id}/rollback`, { token: secrets.write })).status, 200);
});

t.test('+Inf, -Inf and NaN are breaches, not "no data"', async (t) => {
  for (const [metric, text] of [
    ['inf_metric', '+Inf'],
    ['neg_inf_metric', '-Inf'],
    ['nan_metric', 'NaN'],
  ]) {
    const started = await startRollout(await newFlag(), { prometheus: `max(${metric})`, max: 0.05, intervalMs: 1000 });
    t.equal(started.status, 201, started.text);
    const stopped = await ended(started.json.id);
    t.match(stopped, {
      status: 'paused',
      pausedReason: `guard breached: read ${text}, which no bound admits`,
      guardReading: { value: null, breached: true },
    });
  }
  const healthy = await startRollout(await newFlag(), { prometheus: 'ok_metric', max: 0.05, intervalMs: 1000 });
  const read = await pollUntil(
    'a healthy reading',
    () => rollout(healthy.json.id),
    (r) => r.guardReading !== null,
  );
  t.match(read, { status: 'running', guardReading: { value: 0.01, breached: false } }, 'a finite reading within bounds is healthy');
});

t.test('an answer past 4 MiB is refused after reading no more than about that', async (t) => {
  const started = await startRollout(await newFlag(), { prometheus: 'big_metric', max: 1, intervalMs: 1000 });
  t.equal(started.status, 201, started.text);
  const stopped = await ended(started.json.id);
  t.match(stopped, { status: 'paused', pausedReason: /Prometheus answered more than 4194304 bytes/ });
  // Read whole, the answer would have been sent whole; what was sent past the limit sat in socket buffers.
  t.ok(sent.big < kBigAnswerBytes / 2, `the stand-in sent ${sent.big} of ${kBigAnswerBytes} bytes`);
});

t.test('a Prometheus that never answers holds neither scheduled changes nor other rollouts', async (t) => {
  const hanging = await startRollout(await newFlag(), { prometheus: 'hang_metric', max: 1, intervalMs: 1000 });
  t.equal(hanging.status, 201, hanging.text);
  await pollUntil(
    'the hanging reading is under way',
    async () => held.size,
    (n) => n > 0,
  );
  const heldBefore = [...held];

  // A change due in a minute, and another rollout whose step falls due then: the clock moves past both.
  const flag = await newFlag();
  const now = await advanceClock(server, 0);
  const scheduled = await call(base, 'POST', `/api/v1/flags/${flag}/schedules`, {
    token: secrets.write,
    body: { at: now + 60_000, patch: { trafficPercentage: 40 } },
  });
  t.equal(scheduled.status, 201, scheduled.text);
  const other = await call(base, 'POST', `/api/v1/flags/${await newFlag()}/rollouts`, {
    token: secrets.write,
    body: { steps: [{ trafficPercentage: 10, holdMs: 30_000 }, { trafficPercentage: 100 }] },
  });
  t.equal(other.status, 201, other.text);
  await advanceClock(server, 61_000);

  const applied = await pollUntil(
    'the scheduled change applied',
    async () => (await call(base, 'GET', `/api/v1/flags/${flag}`, { token: secrets.read })).json.trafficPercentage,
    (p) => p === 40,
  );
  t.equal(applied, 40, 'the scheduled change applied');
  const stepped = await pollUntil(
    "the other rollout's next step",
    () => rollout(other.json.id),
    (r) => r.status === 'completed',
  );
  t.match(stepped, { current: 1, status: 'completed' });
  t.ok(
    heldBefore.every((res) => !res.writableEnded && !res.destroyed),
    'all while the first reading was still unanswered',
  );
  t.match(await rollout(hanging.json.id), { status: 'running', guardReading: null }, 'that reading is still under way');
});

t.test('the server still answers', async (t) => {
  t.equal((await call(base, 'GET', `/v1/flags/${ids.flag}`)).status, 200);
});
