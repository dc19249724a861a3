// Wraps a uWS app's route registration methods, so every route registered afterwards passes through
// `intercept` (uWS has no middleware and no way to list its routes).
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';

export type RouteHandler = (res: HttpResponse, req: HttpRequest) => void | Promise<void>;

const kMethods = ['get', 'post', 'patch', 'put', 'del', 'options', 'head', 'any'] as const;
export type RouteMethod = (typeof kMethods)[number];

/** `intercept` gets each registration and returns the handler to register in its place. */
export function interceptRoutes(
  app: TemplatedApp,
  intercept: (method: RouteMethod, pattern: string, handler: RouteHandler) => RouteHandler,
): TemplatedApp {
  const methods = app as unknown as Record<RouteMethod, (pattern: string, handler: RouteHandler) => TemplatedApp>;
  for (const method of kMethods) {
    const register = methods[method].bind(app);
    methods[method] = (pattern: string, handler: RouteHandler) => register(pattern, intercept(method, pattern, handler));
  }
  return app;
}
