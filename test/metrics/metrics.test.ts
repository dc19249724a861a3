// Black-box: GET /metrics on the real server counts what happened; FLAGWIRE_METRICS=off removes it.
import { rmSync } from 'node:fs';
import t from 'tap';
import { call, scrapeMetrics } from '../helpers/http.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';

const dataDir = tempDataDir();
const world = buildWorld(dataDir);
const server = await startTestServer({ dataDir, env: { FLAGWIRE_RATE_LIMIT: '5', FLAGWIRE_AUTH_FAIL_LIMIT: '2' } });
t.teardown(async () => {
  await server.stop();
  await world.store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

t.test('text format, and every family the issue asks for', async (t) => {
  const r = await fetch(`${server.baseUrl}/metrics`);
  t.equal(r.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  const text = await r.text();
  for (const name of [
    'flagwire_http_requests_total',
    'flagwire_eval_duration_seconds',
    'flagwire_eval_batch_size',
    'flagwire_eval_pool_queue_depth',
    'flagwire_eval_pending_requests',
    'flagwire_writer_queue_depth',
    'flagwire_writer_commit_duration_seconds',
    'flagwire_rate_limited_total',
    'flagwire_auth_failures_total',
    'flagwire_auth_lockouts_total',
    'flagwire_stream_connections',
    'flagwire_http_body_buffered_bytes',
    'flagwire_http_body_refused_total',
  ])
    t.match(text, `# TYPE ${name} `, name);
});

t.test('counts move: eval requests by status, batches, writer commits, rate limit, auth failures', async (t) => {
  const { ids, secrets } = world;
  const before = await scrapeMetrics(server.baseUrl);
  await Promise.all(Array.from({ length: 20 }, (_, i) => call(server.baseUrl, 'GET', `/v1/flags/${ids.flag}?targetingKey=u${i}`)));
  await call(server.baseUrl, 'GET', '/v1/flags/flg_nope');
  await call(server.baseUrl, 'POST', `/ofrep/v1/evaluate/flags/${ids.flag}`, { body: { context: { targetingKey: 'u' } } });
  await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.flag}`, { token: secrets.write, body: { trafficPercentage: 30 } });
  await call(server.baseUrl, 'GET', '/api/v1/flags', { token: 'fw_unknownunknownunknownunknownunknown1234' });
  await call(server.baseUrl, 'GET', '/api/v1/flags', { token: 'fw_unknownunknownunknownunknownunknown1234' });
  await call(server.baseUrl, 'GET', '/api/v1/flags', { token: secrets.read });
  for (let i = 0; i < 3; i++) await call(server.baseUrl, 'GET', '/api/v1/token', { token: secrets.read });
  const after = await scrapeMetrics(server.baseUrl);
  const delta = (key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0);
  t.equal(delta('flagwire_http_requests_total{route="/v1/flags/{flag_id}",status="200"}'), 20);
  t.equal(delta('flagwire_http_requests_total{route="/v1/flags/{flag_id}",status="404"}'), 1);
  t.equal(delta('flagwire_http_requests_total{route="/ofrep/v1/evaluate/flags/{key}",status="200"}'), 1);
  t.equal(delta('flagwire_http_requests_total{route="/api/v1/flags/{flag_id}",status="200"}'), 1);
  t.equal(delta('flagwire_eval_duration_seconds_count'), 22);
  t.ok(delta('flagwire_eval_batch_size_count') >= 1 && delta('flagwire_eval_batch_size_count') <= 22);
  t.equal(delta('flagwire_eval_batch_size_sum'), 22);
  t.ok(delta('flagwire_writer_commit_duration_seconds_count') >= 1, 'the PATCH went through the writer');
  t.equal(delta('flagwire_auth_failures_total'), 2);
  // Requests 4 and 5 of the address are locked out (2 failures is the limit), 6 and 7 are over 5 a minute.
  t.equal(delta('flagwire_auth_lockouts_total'), 2, 'locked out after two failed authentications');
  t.equal(delta('flagwire_rate_limited_total'), 2, 'over 5 a minute');
  t.ok(delta('flagwire_http_requests_total{route="/api/v1/token",status="429"}') >= 1);
  t.equal(after.get('flagwire_eval_workers'), 1);
  t.equal(after.get('flagwire_eval_pending_requests'), 0);
  t.equal(after.get('flagwire_writer_queue_depth'), 0);
});

t.test('FLAGWIRE_METRICS=off: no /metrics, evaluation unchanged; a bad value stops start-up', async (t) => {
  const offDir = tempDataDir();
  const off = await startTestServer({ dataDir: offDir, env: { FLAGWIRE_METRICS: 'off' } });
  t.teardown(async () => {
    await off.stop();
    rmSync(offDir, { recursive: true, force: true });
  });
  t.equal((await fetch(`${off.baseUrl}/metrics`)).status, 404);
  t.equal((await fetch(`${off.baseUrl}/health`)).status, 200);
  await t.rejects(startTestServer({ dataDir: tempDataDir(), env: { FLAGWIRE_METRICS: 'maybe' } }), /FLAGWIRE_METRICS/);
});
