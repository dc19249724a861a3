// The Prometheus text writer (src/metrics/registry.ts) and Flagwire's metric set (metrics.ts), in-process.
import t from 'tap';
import { Metrics, kRouteHealth } from '../../src/metrics/metrics.js';
import { routeNumbers } from '../../src/all-routes.js';
import { kEvaluationApiRoutes } from '../../src/evaluation/engine/evaluation-api-routes.js';
import { kOfrepRoutes } from '../../src/ofrep/routes.js';
import { Histogram, labelValue } from '../../src/metrics/registry.js';
import { matchManagementRoute } from '../../src/all-routes.js';

t.test('histogram: cumulative buckets, +Inf, sum and count; weighted observations', async (t) => {
  const h = new Histogram([0.1, 1]);
  h.observe(0.05);
  h.observe(0.5, 3);
  h.observe(7);
  const out: string[] = [];
  h.render(out, 'x', 'a="b"');
  t.same(out, [
    'x_bucket{a="b",le="0.1"} 1',
    'x_bucket{a="b",le="1"} 4',
    'x_bucket{a="b",le="+Inf"} 5',
    'x_sum{a="b"} 8.55',
    'x_count{a="b"} 5',
  ]);
  t.equal(labelValue('a"b\\c\nd'), 'a\\"b\\\\c\\nd');
});

t.test('metrics: requests by route and status, API paths to route labels, counters, gauges', async (t) => {
  const m = new Metrics();
  m.request(routeNumbers(kEvaluationApiRoutes).evaluateFlag, 200);
  m.request(routeNumbers(kEvaluationApiRoutes).evaluateFlag, 200);
  m.request(kRouteHealth, 200);
  m.request(routeNumbers(kOfrepRoutes).ofrepBulk, 304);
  m.request(matchManagementRoute('DELETE', '/api/v1/flags/flg_1').metric, 404);
  m.request(matchManagementRoute('POST', '/api/v1/flags').metric, 201);
  m.request(matchManagementRoute('GET', '/api/v1/nope').metric, 404);
  m.request(routeNumbers(kEvaluationApiRoutes).evaluateFlag, 999);
  m.batch(4, 0.002);
  m.rateLimited = 2;
  m.gauge('flagwire_test_depth', 'A test gauge.', () => 7);
  const text = m.render();
  t.match(text, 'flagwire_http_requests_total{route="/v1/flags/{flag_id}",status="200"} 2\n');
  t.match(text, 'flagwire_http_requests_total{route="/health",status="200"} 1\n');
  t.match(text, 'flagwire_http_requests_total{route="/ofrep/v1/evaluate/flags",status="304"} 1\n');
  t.match(text, 'flagwire_http_requests_total{route="/api/v1/flags/{flag_id}",status="404"} 1\n');
  t.match(text, 'flagwire_http_requests_total{route="/api/v1/flags",status="201"} 1\n');
  t.match(text, 'flagwire_http_requests_total{route="/api/v1/*",status="404"} 1\n');
  t.match(text, 'flagwire_http_requests_total{route="/v1/flags/{flag_id}",status="other"} 1\n');
  t.match(text, 'flagwire_eval_batch_size_count 1\n');
  t.match(text, 'flagwire_eval_duration_seconds_count 4\n', 'a batch counts once per request');
  t.match(text, 'flagwire_rate_limited_total 2\n');
  t.match(text, '# TYPE flagwire_test_depth gauge\nflagwire_test_depth 7\n');
  // Every sample line is `name{labels} value` or `name value`: the exposition format's grammar.
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    t.match(line, /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\.)*",?)*\})? -?[0-9.e+-]+$/, line);
  }
});
