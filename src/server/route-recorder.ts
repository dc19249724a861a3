// Remembers every (method, pattern) registered on the uWS app, so the OpenAPI test can check that each
// route is documented (uWS has no way to list its routes).
import type { TemplatedApp } from 'uWebSockets.js';
import { interceptRoutes } from '../http/intercept-routes.js';

export interface RegisteredRoute {
  method: string;
  pattern: string;
}

const kRoutes = new WeakMap<TemplatedApp, RegisteredRoute[]>();

export function recordRoutes(app: TemplatedApp): TemplatedApp {
  const routes: RegisteredRoute[] = [];
  kRoutes.set(app, routes);
  return interceptRoutes(app, (method, pattern, handler) => {
    routes.push({ method: method === 'del' ? 'delete' : method, pattern });
    return handler;
  });
}

export function registeredRoutes(app: TemplatedApp): readonly RegisteredRoute[] {
  return kRoutes.get(app) ?? [];
}
