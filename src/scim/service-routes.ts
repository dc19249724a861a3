// The SCIM 2.0 API (RFC 7644; docs/scim.md) under /scim/v2: Users and Groups (create, read, replace,
// PATCH, DELETE, list with filter and paging, ETags), /ServiceProviderConfig, /Schemas and
// /ResourceTypes. One route outside /api/v1, dispatched here by path, with the organisation's secret;
// every answer is application/scim+json and every refusal SCIM's own envelope (errors.ts), never the
// Management API's. Reads come from this node's copy; writes go to the writer (scim-commands.ts).
import type { HttpRequest } from 'uWebSockets.js';
import type { ServiceRouteDeps, ServiceRouteSpec } from '../capability/capability.js';
import { answerableError } from '../errors.js';
import { bodyRefusal } from '../http/body.js';
import { jsonBoundsProblem } from '../http/json-bounds.js';
import { type PendingResponse, send, trackAbort } from '../http/http.js';
import { clientAddresses } from '../routes/service-route-parts.js';
import type { WriterClient } from '../writer/client.js';
import { ScimAccess } from './access.js';
import { discoveryDocuments, kMaxResults } from './discovery.js';
import { scimErrorOf, scimRefusal } from './errors.js';
import { type Filter, matches, parseFilter } from './filter.js';
import { kScimGroupRecords, kScimUserRecords, orgUsersBy, type ScimGroup, type ScimSettings, type ScimUser } from './records.js';
import { groupResource, kGroupAttributes, kListSchema, kScimBasePath, kUserAttributes, userResource } from './resources.js';
import type { ScimWrite } from './scim-commands.js';
import { kScimCommands } from './command-table.js';

declare module '../routes/handler.js' {
  interface RouteServices {
    /** SCIM's writes (src/scim): the node's writer client, as the Management API's. */
    writer: WriterClient;
  }
}

const kContentType = 'application/scim+json';
/** No id this service makes is longer; a longer one is not looked up. */
const kMaxIdLength = 64;

export const kScimRoutes = {
  scim: {
    method: 'any',
    pattern: `${kScimBasePath}/*`,
    auth: 'scim',
    label: kScimBasePath,
    handler: scimHandler,
  },
} satisfies Record<string, ServiceRouteSpec>;

interface ScimRequest {
  method: string;
  segments: string[];
  query: URLSearchParams;
  authorization: string;
  ifMatch: string;
  ip: string;
}

interface Answer {
  status: number;
  body: unknown;
  headers: [string, string][];
}

function scimHandler(deps: ServiceRouteDeps, route: number): (res: PendingResponse, req: HttpRequest) => void {
  const access = new ScimAccess(deps.store, deps.authFailures);
  const addressOf = clientAddresses(deps.config);
  const base = `${deps.config.baseUrl.replace(/\/+$/, '')}${kScimBasePath}`;
  const documents = discoveryDocuments(base);
  /** `closes`: the connection is closed after the answer (a refused body not drained: src/http/body.ts). */
  const reply = (res: PendingResponse, answer: Answer, closes = false) => {
    const body = answer.body === null ? '' : JSON.stringify(answer.body);
    send(res, answer.status, body, kContentType, answer.headers, closes);
    deps.metrics?.request(route, answer.status);
  };
  const refusal = (err: unknown): Answer => {
    const error = answerableError(err, (e) => deps.log.error({ err: e }, 'unexpected error on the SCIM API'));
    const { status, body } = scimErrorOf(error);
    return { status, body, headers: status === 401 ? [['WWW-Authenticate', 'Bearer realm="scim"']] : [] };
  };
  const run = async (request: ScimRequest, body: Buffer | null): Promise<Answer> => {
    try {
      const now = deps.clock.now();
      deps.store.resetReadTxn();
      const settings = access.grant(request.authorization, request.ip, now);
      return await dispatch(deps, { settings, base, documents }, request, body === null ? undefined : parseBody(body));
    } catch (err) {
      return refusal(err);
    }
  };
  return (res, req) => {
    const path = req.getUrl();
    const request: ScimRequest = {
      method: req.getMethod().toUpperCase(),
      segments: path
        .slice(kScimBasePath.length)
        .split('/')
        .filter((s) => s !== ''),
      query: new URLSearchParams(req.getQuery() ?? ''),
      authorization: req.getHeader('authorization'),
      ifMatch: req.getHeader('if-match'),
      ip: addressOf(res, req),
    };
    if (request.method === 'POST' || request.method === 'PUT' || request.method === 'PATCH') {
      deps.bodies.read(res, req.getHeader('content-length'), (result) => {
        if (!result.ok) {
          const refused = bodyRefusal(result.reason);
          reply(res, refusal(refused.status === 413 ? scimRefusal('payloadTooLarge', refused.detail) : refused), result.closes);
          return;
        }
        void run(request, result.body).then((answer) => {
          result.release();
          reply(res, answer);
        });
      });
      return;
    }
    trackAbort(res);
    void run(request, null).then((answer) => reply(res, answer));
  };
}

function parseBody(body: Buffer): unknown {
  // Scanned before it is parsed: a value nested too deep or too large is never built (nor cloned to the writer).
  const outOfBounds = jsonBoundsProblem(body);
  if (outOfBounds !== null) throw scimRefusal('invalidSyntax', outOfBounds);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw scimRefusal('invalidSyntax', 'The body is not JSON.');
  }
}

interface Scope {
  settings: ScimSettings;
  base: string;
  documents: ReturnType<typeof discoveryDocuments>;
}

async function dispatch(deps: ServiceRouteDeps, scope: Scope, request: ScimRequest, body: unknown): Promise<Answer> {
  const [collection, rawId, ...rest] = request.segments.map((s) => decodeURIComponent(s));
  const { documents } = scope;
  const only = (method: string) => {
    if (request.method !== method) throw scimRefusal('methodNotAllowed', `${request.method} is not allowed here; ${method} is.`);
  };
  if (rest.length > 0 || collection === undefined) throw scimRefusal('notFound', 'No such SCIM endpoint.');
  switch (collection) {
    case 'ServiceProviderConfig':
      only('GET');
      if (rawId !== undefined) break;
      return ok(200, documents.serviceProviderConfig);
    case 'Schemas':
    case 'ResourceTypes': {
      only('GET');
      const list = collection === 'Schemas' ? documents.schemaList : documents.resourceTypeList;
      if (rawId === undefined) return ok(200, list);
      const found = (list.Resources as { id: string }[]).find((r) => r.id === rawId);
      if (found !== undefined) return ok(200, found);
      break;
    }
    case 'Users':
    case 'Groups': {
      const kind = collection === 'Users' ? 'user' : 'group';
      if (rawId === undefined) {
        if (request.method === 'GET') return ok(200, listResources(deps, scope, kind, request.query));
        only('POST');
        // A create always answers its resource (only a delete answers none).
        return written((await write(deps, scope, kind, { verb: 'create', body }))!, 201);
      }
      if (rawId.length > kMaxIdLength) break;
      if (request.method === 'GET') {
        const found = readResource(deps, scope, kind, rawId);
        if (found === null) break;
        return written(selected(found, request.query), 200);
      }
      const verb = ({ PUT: 'replace', PATCH: 'patch', DELETE: 'delete' } as const)[request.method];
      if (verb === undefined)
        throw scimRefusal('methodNotAllowed', `${request.method} is not allowed on a ${kind}; GET, PUT, PATCH and DELETE are.`);
      const resource = await write(deps, scope, kind, { verb, id: rawId, body, ifMatch: request.ifMatch });
      return resource === null ? { status: 204, body: null, headers: [] } : written(resource, 200);
    }
  }
  throw scimRefusal('notFound', `No such resource: ${request.segments.join('/')}.`);
}

function ok(status: number, body: unknown): Answer {
  return { status, body, headers: [] };
}

/** A resource's answer, with its ETag (and, when just made, its Location). */
function written(resource: { meta: { version: string; location: string } }, status: number): Answer {
  const headers: [string, string][] = [['ETag', resource.meta.version]];
  if (status === 201) headers.push(['Location', resource.meta.location]);
  return { status, body: resource, headers };
}

type Kind = 'user' | 'group';

function write(deps: ServiceRouteDeps, scope: Scope, kind: Kind, write: Pick<ScimWrite, 'verb' | 'id' | 'body' | 'ifMatch'>) {
  const input: ScimWrite = { orgId: scope.settings.orgId, secretHash: scope.settings.secretHash, base: scope.base, ...write };
  return kind === 'user' ? deps.writer.call(kScimCommands.scimUserWrite, input) : deps.writer.call(kScimCommands.scimGroupWrite, input);
}

/**
 * The organisation's users or groups as the API shows them, oldest first; `asked`: only the users under
 * that key of a lookup (the filter `userName eq "…"` or `externalId eq "…"`, which an identity provider
 * sends before each user it syncs), found through it instead of every user's resource being made.
 */
function resources(deps: ServiceRouteDeps, scope: Scope, kind: Kind, asked: UserLookup | null) {
  const orgId = scope.settings.orgId;
  const groups: ScimGroup[] = deps.store.listKeyedBy(kScimGroupRecords, 'org', orgId);
  const byCreation = <T extends { created: number; id: string }>(a: T, b: T) => a.created - b.created || (a.id < b.id ? -1 : 1);
  if (kind === 'group') {
    const users = new Map<string, ScimUser>(deps.store.listKeyedBy(kScimUserRecords, 'org', orgId).map((u: ScimUser) => [u.id, u]));
    return groups.sort(byCreation).map((g) => groupResource(g, (id) => users.get(id)?.userName ?? id, scope.base));
  }
  const users: ScimUser[] =
    asked === null ? deps.store.listKeyedBy(kScimUserRecords, 'org', orgId) : orgUsersBy(deps.store, orgId, asked.index, asked.key);
  // Each user's groups from one pass over the groups' members, not one pass per user.
  const groupsOf = new Map<string, ScimGroup[]>();
  for (const group of groups)
    for (const member of group.members) {
      const of = groupsOf.get(member);
      if (of === undefined) groupsOf.set(member, [group]);
      else of.push(group);
    }
  return users.sort(byCreation).map((u) => userResource(u, groupsOf.get(u.id) ?? [], scope.base));
}

/** A user lookup a filter names (records.ts orgUsersBy). */
interface UserLookup {
  index: 'userName' | 'externalId';
  key: string;
}

/** The filter attributes a user lookup answers equality on, by their filter paths. */
const kLookupByPath: ReadonlyMap<string, UserLookup['index']> = new Map([
  ['username', 'userName'],
  ['externalid', 'externalId'],
]);

/** The lookup a filter asks by equality alone (`userName eq "…"`, `externalId eq "…"`, with or without their schema), else null. */
function lookupAsked(filter: Filter | null): UserLookup | null {
  if (filter === null || filter.op !== 'eq' || filter.path.length !== 1 || typeof filter.value !== 'string') return null;
  const index = kLookupByPath.get(filter.path[0]!);
  return index === undefined ? null : { index, key: filter.value };
}

function readResource(deps: ServiceRouteDeps, scope: Scope, kind: Kind, id: string) {
  const key = `${scope.settings.orgId}/${id}`;
  if (kind === 'user') {
    const user = deps.store.getKeyed(kScimUserRecords, key);
    if (user === undefined) return null;
    const groups: ScimGroup[] = deps.store.listKeyedBy(kScimGroupRecords, 'org', user.orgId);
    return userResource(
      user,
      groups.filter((g) => g.members.includes(user.id)),
      scope.base,
    );
  }
  const group = deps.store.getKeyed(kScimGroupRecords, key);
  if (group === undefined) return null;
  return groupResource(
    group,
    (userId) => deps.store.getKeyed(kScimUserRecords, `${group.orgId}/${userId}`)?.userName ?? userId,
    scope.base,
  );
}

/** A list (RFC 7644 §3.4.2): filtered, then paged by startIndex (1-based) and count (at most kMaxResults). */
function listResources(deps: ServiceRouteDeps, scope: Scope, kind: Kind, query: URLSearchParams) {
  const filterText = query.get('filter');
  const filter: Filter | null = filterText === null ? null : parseFilter(filterText, kind === 'user' ? kUserAttributes : kGroupAttributes);
  const startIndex = Math.max(1, integer(query, 'startIndex') ?? 1);
  const count = Math.min(kMaxResults, Math.max(0, integer(query, 'count') ?? kMaxResults));
  const asked = kind === 'user' ? lookupAsked(filter) : null;
  // The filter is still applied to what the lookup found: its answer is the full list's, filtered.
  const all = (resources(deps, scope, kind, asked) as { meta: { version: string; location: string } }[]).filter(
    (r) => filter === null || matches(filter, r),
  );
  const page = all.slice(startIndex - 1, startIndex - 1 + count);
  return {
    schemas: [kListSchema],
    totalResults: all.length,
    itemsPerPage: page.length,
    startIndex,
    Resources: page.map((r) => selected(r, query)),
  };
}

function integer(query: URLSearchParams, name: string): number | null {
  const raw = query.get(name);
  if (raw === null) return null;
  if (!/^-?\d{1,9}$/.test(raw)) throw scimRefusal('invalidValue', `${name} must be an integer.`);
  return Number(raw);
}

/** RFC 7644 §3.9's attributes and excludedAttributes, on top-level attributes; schemas, id and meta always stay. */
function selected<T extends object>(resource: T, query: URLSearchParams): T {
  const names = (param: string) =>
    (query.get(param) ?? '')
      .split(',')
      .map(
        (a) =>
          a
            .trim()
            .toLowerCase()
            .replace(/^urn:ietf:params:scim:schemas:core:2\.0:(user|group):/, '')
            .split('.')[0]!,
      )
      .filter((a) => a !== '');
  const wanted = names('attributes');
  const excluded = names('excludedAttributes');
  if (wanted.length === 0 && excluded.length === 0) return resource;
  const kept = Object.entries(resource).filter(([key]) => {
    const name = key.toLowerCase();
    if (name === 'schemas' || name === 'id' || name === 'meta') return true;
    return wanted.length > 0 ? wanted.includes(name) : !excluded.includes(name);
  });
  return Object.fromEntries(kept) as T;
}
