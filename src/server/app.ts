// The uWebSockets.js app: every route of the service, wired to its handlers.
import * as uWS from 'uWebSockets.js';
import { registerManagementRoutes, type ManagementDeps } from '../api/management.js';
import { errorBody, FlagwireError } from '../errors.js';
import { answerPreflight } from '../http/cors.js';
import { renderDocsPage } from './docs-page.js';
import { send, type RouteGroup } from '../http/http.js';

export interface AppDeps extends ManagementDeps {
  evaluation: RouteGroup;
}

export function createApp(deps: AppDeps): uWS.TemplatedApp {
  const app = uWS.App();
  const docsPage = Buffer.from(renderDocsPage());
  const health = () => Buffer.from(JSON.stringify({ status: 'ok', storeVersion: deps.store.schemaVersion() }));
  let healthBody = health();

  app.options('/*', (res) => answerPreflight(res));
  app.get('/health', (res) => send(res, 200, healthBody));
  app.get('/docs', (res) => send(res, 200, docsPage, 'text/html; charset=utf-8'));
  registerManagementRoutes(app, deps);
  deps.evaluation.register(app);
  const notFound = Buffer.from(JSON.stringify(errorBody(new FlagwireError('NOT_FOUND', 'No such route.'))));
  app.any('/*', (res) => send(res, 404, notFound));
  healthBody = health();
  return app;
}
