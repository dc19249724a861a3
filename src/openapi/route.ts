// GET /api/v1/openapi.json: public (no token, no rate limit), registered before the Management API's
// /api/v1/* so uWS routes it here (a static route wins over a wildcard). The body is built once, on the
// first request: building it at start was a visible share of a node's main-thread CPU before /health
// answered, in
// every front-end thread, for a document most nodes are never asked for.
import { readFileSync } from 'node:fs';
import type { TemplatedApp } from 'uWebSockets.js';
import { send } from '../http/http.js';
import { kRoutes, registerRoutes } from '../routes/route-table.js';
import { kRouteOpenApi, type Metrics } from '../metrics/metrics.js';
import { buildOpenApiDocument } from './document.js';

/** The package's version and license (package.json), which the document's info states. */
function packageInfo(): { version: string; license: string } {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      version?: string;
      license?: string;
    };
    return { version: pkg.version ?? '0.0.0', license: pkg.license ?? 'UNLICENSED' };
  } catch {
    return { version: '0.0.0', license: 'UNLICENSED' };
  }
}

export function registerOpenApiRoute(app: TemplatedApp, metrics: Metrics | null): void {
  let body: Buffer | null = null;
  registerRoutes(app, kRoutes, {
    openApi: (res) => {
      metrics?.request(kRouteOpenApi, 200);
      body ??= Buffer.from(JSON.stringify(buildOpenApiDocument(packageInfo())));
      send(res, 200, body);
    },
  });
}
