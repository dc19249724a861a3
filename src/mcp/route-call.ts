// A Management API route run for an MCP tool, in this process, as the Management API runs it
// (src/api/management.ts): the same handler, the same write permission and precheck, the same writer
// commands through the approvals gate, and every refusal in the same envelope. A change the gate holds
// answers 202 with the change request, as the API does; nothing here decides what a token may do.
import type { ManagementRouteSpec } from '../capability/capability.js';
import { changeRequestedBody, type ChangeRequestedBody } from '../approvals/change-requested.js';
import { answerableError, errorEnvelope } from '../errors.js';
import type { ErrorEnvelope } from '../error-schemas.js';
import { type AuthContext, requireWrite } from '../model/records/token-access.js';
import { type ApiRequest, type HandlerDeps, JsonText, TaggedJson } from '../routes/handler.js';
import { ChangeRequested } from '../writer/change-requested.js';

/** What a tool asks of a route: its path parameters, its query and its JSON body (undefined: none). */
export interface RouteInput {
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
  readonly body: unknown;
}

/** A route's answer: applied (2xx but 202), held as a change request (202), or refused (the envelope). */
export type RouteAnswer =
  | { readonly kind: 'done'; readonly status: number; readonly value: unknown }
  | { readonly kind: 'requested'; readonly value: ChangeRequestedBody }
  | { readonly kind: 'refused'; readonly status: number; readonly value: ErrorEnvelope };

/** What a route call needs of the node beyond the handler's own parts: the docs link of an envelope, where unexpected errors go. */
export interface RouteCallDeps extends HandlerDeps {
  readonly config: HandlerDeps['config'] & { readonly docsUrl: string };
  readonly log: { error(fields: object, message: string): void };
}

const kNoBody = new Uint8Array(0);
const kMethods: Readonly<Record<string, string>> = { get: 'GET', post: 'POST', put: 'PUT', patch: 'PATCH', del: 'DELETE' };

export async function callRoute(
  route: ManagementRouteSpec,
  input: RouteInput,
  auth: AuthContext,
  deps: RouteCallDeps,
): Promise<RouteAnswer> {
  const request: ApiRequest = {
    method: kMethods[route.method] ?? route.method.toUpperCase(),
    path: route.pattern.replace(/:([a-z_]+)/g, (_, name: string) => encodeURIComponent(input.params[name] ?? '')),
    query: new URLSearchParams(input.query),
    authorization: '',
    contentType: 'application/json',
    ifNoneMatch: '',
    ifMatch: '',
    flagId: input.params.flag_id ?? null,
    params: input.params,
    metric: 0,
    errorBody: null,
  };
  const { handler } = route;
  try {
    if (handler.kind === 'read') {
      deps.store.resetReadTxn();
      return { kind: 'done', status: 200, value: plain(await handler.run(request, auth, deps)) };
    }
    if (handler.permission !== 'read') requireWrite(auth);
    deps.store.resetReadTxn();
    handler.precheck?.(request, auth, deps);
    const bytes = input.body === undefined ? kNoBody : new TextEncoder().encode(JSON.stringify(input.body));
    const { status, value } = await handler.run(request, auth, { bytes, contentType: 'application/json' }, () => {}, deps);
    return { kind: 'done', status, value: plain(value) };
  } catch (err) {
    return refusedAnswer(err, deps);
  }
}

/** A thrown change request or refusal as a tool's answer: the 202 body, or the envelope (an unexpected error logged, as INTERNAL). */
export function refusedAnswer(err: unknown, deps: Pick<RouteCallDeps, 'config' | 'log'>): RouteAnswer {
  if (err instanceof ChangeRequested) return { kind: 'requested', value: changeRequestedBody(err) };
  const error = answerableError(err, (e) => deps.log.error({ err: e }, 'unexpected error in an MCP tool'));
  return { kind: 'refused', status: error.status, value: errorEnvelope(error, deps.config.docsUrl) };
}

/** An answer written as JSON text (a flag with its ETag) as the value it holds. */
function plain(value: unknown): unknown {
  if (value instanceof JsonText || value instanceof TaggedJson) return JSON.parse(value.text);
  return value;
}
