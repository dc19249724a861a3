// GET /metrics (Prometheus text format). Unauthenticated, like most exporters: expose it only to the
// scraper (bind the service to an internal address, or filter /metrics at the proxy).
import type { TemplatedApp } from 'uWebSockets.js';
import { send, trackAbort } from '../http/http.js';
import { kRoutes, registerRoutes } from '../routes/route-table.js';
import { kMetricsContentType, kRouteMetrics, type Metrics } from './metrics.js';

/** `render` gives the process's metrics: this thread's own, or every front-end thread's summed. */
export function registerMetricsRoute(app: TemplatedApp, metrics: Metrics, render: () => Promise<string>): void {
  registerRoutes(app, kRoutes, {
    metrics: (res) => {
      trackAbort(res);
      metrics.request(kRouteMetrics, 200);
      void render().then((text) => send(res, 200, text, kMetricsContentType));
    },
  });
}
