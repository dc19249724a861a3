// Remembers every (method, pattern) registered on the uWS app, so the OpenAPI test can check that each
// route is documented (uWS has no way to list its routes). Wraps the app's registration methods once.
import type { TemplatedApp } from 'uWebSockets.js';

export interface RegisteredRoute {
  method: string;
  pattern: string;
}

const kMethods = ['get', 'post', 'patch', 'put', 'del', 'options', 'head', 'any'] as const;
const kRoutes = new WeakMap<TemplatedApp, RegisteredRoute[]>();

export function recordRoutes(app: TemplatedApp): TemplatedApp {
  const routes: RegisteredRoute[] = [];
  const methods = app as unknown as Record<string, (pattern: string, handler: unknown) => TemplatedApp>;
  for (const method of kMethods) {
    const register = methods[method]!.bind(app);
    methods[method] = (pattern: string, handler: unknown) => {
      routes.push({ method: method === 'del' ? 'delete' : method, pattern });
      return register(pattern, handler);
    };
  }
  kRoutes.set(app, routes);
  return app;
}

export function registeredRoutes(app: TemplatedApp): readonly RegisteredRoute[] {
  return kRoutes.get(app) ?? [];
}
