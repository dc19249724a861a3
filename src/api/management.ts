// The Management API under /api/v1: routing, the request pipeline and the five handlers.
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { errorEnvelope, FlagwireError } from '../errors.js';
import { environmentNotPermitted, isEnvironmentAllowed, resolveEnvParam } from '../model/environments.js';
import { FlagCreate, FlagPatch } from '../model/schemas.js';
import { compileValidator } from '../model/validation.js';
import type { Flag } from '../store/records.js';
import type { StoreReader } from '../store/store.js';
import { readBody, kMaxBodyBytes } from '../http/body.js';
import { send, sendJson, trackAbort, type PendingResponse } from '../http/http.js';
import type { InFlight } from '../http/in-flight.js';
import { flagNotFound } from '../writer/flag-commands.js';
import type { WriterClient } from '../writer/client.js';
import { authenticate, requireWrite, type AuthContext } from './auth.js';
import { representFlag, flatFlag, tokenDescription } from './representation.js';
import { parseJsonObject, type BodyKind } from './request-body.js';

export interface ManagementDeps {
  store: StoreReader & { resetReadTxn(): void };
  writer: WriterClient;
  clock: Clock;
  /** Replaced once the listen port is known (see withListenPort). */
  config: Readonly<Config>;
  log: Logger;
  inFlight: InFlight;
}

/** What a handler gets: everything read off the request before the handler may go async. */
interface ApiRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string;
  contentType: string;
  flagId: string | null;
}

type Route = 'token' | 'flags' | 'flag';

const kPatchValidator = compileValidator(FlagPatch, { quoteKeys: true });
const kCreateValidator = compileValidator(FlagCreate, { quoteKeys: false });
// Query parameters that would carry a secret in a URL: refused so the secret is never used from there.
const kUrlTokenParams = ['token', 'access_token', 'api_key', 'apikey', 'authorization'];

export function registerManagementRoutes(app: TemplatedApp, deps: ManagementDeps): void {
  const fail = (res: PendingResponse, err: unknown, closeConnection = false) => {
    let error: FlagwireError;
    if (err instanceof FlagwireError) {
      error = err;
    } else {
      deps.log.error({ err }, 'unexpected error in the Management API');
      error = new FlagwireError('INTERNAL', 'An unexpected error occurred; it has been logged. Retry, and report it if it persists.');
    }
    send(res, error.status, JSON.stringify(errorEnvelope(error, deps.config.docsUrl)), 'application/json', undefined, closeConnection);
  };

  app.any('/api/v1/*', (res: HttpResponse, req: HttpRequest) => {
    const request: ApiRequest = {
      method: req.getMethod().toUpperCase(),
      path: req.getUrl(),
      query: new URLSearchParams(req.getQuery() ?? ''),
      authorization: req.getHeader('authorization'),
      contentType: req.getHeader('content-type'),
      flagId: null,
    };
    const contentLength = req.getHeader('content-length');
    try {
      const route = matchRoute(request);
      if (request.method === 'OPTIONS') return; // answered by the CORS preflight route
      for (const name of kUrlTokenParams) {
        if (request.query.has(name)) {
          throw new FlagwireError('INVALID_REQUEST', `Tokens are never accepted in the URL: remove "${name}" from the query and send "Authorization: Bearer <token>".`);
        }
      }
      deps.store.resetReadTxn();
      const auth = authenticate(deps.store, request.authorization, deps.clock.now());
      if (request.method === 'GET') {
        sendJson(res, 200, read(route, request, auth, deps));
        return;
      }
      requireWrite(auth);
      if (route === 'flag') {
        // 404 and env problems before reading a body for a flag that cannot be patched.
        patchTarget(request, auth, deps.store);
      }
      if (Number(contentLength) > kMaxBodyBytes) throw tooLarge();
      trackAbort(res);
      const done = deps.inFlight.start();
      readBody(res, kMaxBodyBytes, (body) => {
        if (!body.ok) {
          fail(res, tooLarge(), true);
          done();
          return;
        }
        write(route, request, auth, body.body, deps).then(
          ({ status, value }) => sendJson(res, status, value),
          (err: unknown) => fail(res, err),
        ).finally(done);
      });
    } catch (err) {
      fail(res, err, err instanceof FlagwireError && err.code === 'PAYLOAD_TOO_LARGE');
    }
  });
}

function tooLarge(): FlagwireError {
  return new FlagwireError('PAYLOAD_TOO_LARGE', `The request body is larger than ${kMaxBodyBytes} bytes (1 MiB); send a smaller body.`);
}

/** Route and method, or 404 (spec: any nonexistent path under /api/v1). */
function matchRoute(request: ApiRequest): Route {
  const { method, path } = request;
  let route: Route | null = null;
  let methods: readonly string[] = [];
  if (path === '/api/v1/token') {
    route = 'token';
    methods = ['GET'];
  } else if (path === '/api/v1/flags') {
    route = 'flags';
    methods = ['GET', 'POST'];
  } else if (path.startsWith('/api/v1/flags/') && path.indexOf('/', 14) === -1 && path.length > 14) {
    try {
      request.flagId = decodeURIComponent(path.slice(14));
      route = 'flag';
      methods = ['GET', 'PATCH'];
    } catch {
      route = null;
    }
  }
  if (route === null) throw new FlagwireError('NOT_FOUND', `There is no ${path} in the Management API; see the docs for its routes.`);
  if (method !== 'OPTIONS' && !methods.includes(method)) {
    throw new FlagwireError('NOT_FOUND', `${method} is not a route of ${path}; it accepts ${methods.join(', ')}.`);
  }
  return route;
}

function queryParam(query: URLSearchParams, name: string): string | null {
  return query.get(name);
}

/** Checks `env` against the project and the token; returns the environment to read or write. */
function checkEnv(auth: AuthContext, env: string | null, required: boolean): string | null {
  const resolved = resolveEnvParam(auth.project, env, required);
  if (resolved !== null && !isEnvironmentAllowed(auth.token.environments, resolved)) {
    throw environmentNotPermitted(auth.token.environments, resolved);
  }
  return resolved;
}

function projectFlag(store: StoreReader, auth: AuthContext, flagId: string): Flag {
  const flag = store.getFlag(flagId);
  if (!flag || flag.projectId !== auth.project.id) throw flagNotFound();
  return flag;
}

function read(route: Route, request: ApiRequest, auth: AuthContext, deps: ManagementDeps): unknown {
  const { store } = deps;
  if (route === 'token') return tokenDescription(auth.token, auth.project);
  const env = queryParam(request.query, 'env');
  if (route === 'flags') {
    // An environment-restricted token still lists every flag; naming an environment is checked.
    const resolved = checkEnv(auth, env, false);
    const name = queryParam(request.query, 'name');
    const flags = store.listFlags(auth.project.id).filter((f) => name === null || f.name === name);
    return { flags: flags.map((f) => representFlag(f, auth.project, resolved)) };
  }
  const flag = projectFlag(store, auth, request.flagId!);
  return representFlag(flag, auth.project, checkEnv(auth, env, false));
}

function patchTarget(request: ApiRequest, auth: AuthContext, store: StoreReader): string | null {
  projectFlag(store, auth, request.flagId!);
  return checkEnv(auth, queryParam(request.query, 'env'), true);
}

async function write(route: Route, request: ApiRequest, auth: AuthContext, raw: Buffer, deps: ManagementDeps): Promise<{ status: number; value: unknown }> {
  const kind: BodyKind = route === 'flag' ? 'patch' : 'create';
  const body = parseJsonObject(raw, request.contentType, kind);
  const validator = kind === 'patch' ? kPatchValidator : kCreateValidator;
  const problems = validator.problems(body);
  if (problems.length > 0) throw new FlagwireError('INVALID_REQUEST', problems.join('; '));
  const actor = { id: `token:${auth.token.id}`, name: auth.token.name, environments: auth.token.environments };
  if (route === 'flags') {
    const flag = await deps.writer.call('flagCreate', { projectId: auth.project.id, body: body as FlagCreate, actor });
    return { status: 201, value: representFlag(flag, auth.project, null) };
  }
  const env = queryParam(request.query, 'env');
  const result = await deps.writer.call('flagPatch', {
    projectId: auth.project.id, flagId: request.flagId!, env, patch: body as FlagPatch, actor,
  });
  return { status: 200, value: { changed: result.changed, flag: flatFlag(result.flag, env) } };
}
