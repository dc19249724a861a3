// GET /metrics (Prometheus text format). Unauthenticated, like most exporters: expose it only to the
// scraper (bind the service to an internal address, or filter /metrics at the proxy).
import type { TemplatedApp } from 'uWebSockets.js';
import { send } from '../http/http.js';
import { kMetricsContentType, kRouteMetrics, type Metrics } from './metrics.js';

export function registerMetricsRoute(app: TemplatedApp, metrics: Metrics): void {
  app.get('/metrics', (res) => {
    metrics.request(kRouteMetrics, 200);
    send(res, 200, metrics.render(), kMetricsContentType);
  });
}
