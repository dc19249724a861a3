// The OpenAPI 3.1 document of every route, served at GET /api/v1/openapi.json. Built once: its paths
// from the route declarations (src/all-routes.ts), each operation with the TypeBox values the code
// validates with or builds its responses to (the components: the service's, src/routes/openapi-parts.ts,
// and each capability's `schemas`). Nothing here is a second, hand-written copy of a route or a schema.
import { kAllRoutes } from '../all-routes.js';
import { kCapabilityList } from '../capabilities.js';
import { openApiMethod, openApiPath, type RouteDeclaration, type RouteDocs } from '../routes/route-table.js';
import {
  apiErrors,
  kBearer,
  kClientKeyAuth,
  kMinRevisionParam,
  kRevisionResponseHeader,
  kServiceComponents,
  ref,
  SchemaRef,
} from '../routes/openapi-parts.js';
import type { TSchema } from '../typebox.js';
import type { Capability } from '../capability/capability.js';

/** Every component by name: the service's, then each capability's in their order; a name or schema declared twice is an error. */
export function openApiComponents(capabilities: readonly Capability[] = kCapabilityList): Map<string, TSchema> {
  const components = new Map<string, TSchema>();
  const declared = new Map<TSchema, string>();
  const declare = (owner: string, schemas: Readonly<Record<string, TSchema>>) => {
    for (const [name, schema] of Object.entries(schemas)) {
      if (components.has(name)) throw new Error(`OpenAPI component ${name} is declared twice (the second time by ${owner})`);
      const other = declared.get(schema);
      if (other !== undefined) throw new Error(`OpenAPI component ${name} (${owner}) is the schema ${other} already names`);
      components.set(name, schema);
      declared.set(schema, name);
    }
  };
  declare('the service', kServiceComponents);
  for (const capability of capabilities) declare(`capability ${capability.name}`, capability.schemas ?? {});
  return components;
}

/** A route's documentation names a schema no capability declares; openApiPaths adds which route. */
class UndeclaredSchema extends Error {
  /** Where in the documentation, outermost key first (filled in as the walk unwinds). */
  readonly at: string[] = [];
}

/** resolved(item), with `key` added to where an undeclared schema was found in it. */
function resolvedAt(key: string, item: unknown, names: ReadonlyMap<TSchema | string, string>): unknown {
  try {
    return resolved(item, names);
  } catch (err) {
    if (err instanceof UndeclaredSchema) err.at.unshift(key);
    throw err;
  }
}

/** A schema as a person finds it in the code: its description or title, else the start of its JSON. */
function schemaLabel(schema: TSchema | string): string {
  if (typeof schema === 'string') return schema;
  const text = schema.description ?? schema.title;
  return text ?? `${JSON.stringify(schema).slice(0, 80)}…`;
}

/**
 * `value` (the routes' documentation) with each component reference (SchemaRef) written as a `$ref` to
 * its name; a schema no one declares is an error. A walk that copies only what it rewrites, not a JSON
 * round trip: every front end builds the document at start-up.
 */
export function resolved(value: unknown, names: ReadonlyMap<TSchema | string, string>): unknown {
  if (value instanceof SchemaRef) {
    const name = typeof value.schema === 'string' ? (names.has(value.schema) ? value.schema : undefined) : names.get(value.schema);
    if (name === undefined) {
      throw new UndeclaredSchema(
        `names an OpenAPI schema no one declares (${JSON.stringify(schemaLabel(value.schema))}): add it to its capability's schemas`,
      );
    }
    return { $ref: `#/components/schemas/${name}` };
  }
  if (value === null || typeof value !== 'object') return value;
  // Copied only where a reference is written: the rest of the declarations is shared as it is.
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (const [i, item] of value.entries()) {
      const written = resolvedAt(String(i), item, names);
      if (written === item) continue;
      out ??= [...value];
      out[i] = written;
    }
    return out ?? value;
  }
  let out: Record<string, unknown> | null = null;
  for (const [key, item] of Object.entries(value)) {
    const written = resolvedAt(key, item, names);
    if (written === item) continue;
    out ??= { ...value };
    out[key] = written;
  }
  return out ?? value;
}

/**
 * Whether an operation answers with Flagwire-Revision and takes Flagwire-Min-Revision (src/http/revisions.ts):
 * every one of the Management API, the Evaluation API and OFREP but their event streams, whose event ids
 * are the revisions.
 */
function namesRevisions(docs: RouteDocs): boolean {
  const ok = docs.responses['200'] as { content?: Record<string, unknown> } | undefined;
  return docs.tag !== 'Service' && ok?.content?.['text/event-stream'] === undefined;
}

/** The operation's responses with Flagwire-Revision on each; a Management API read gains the 503 of a revision not reached. */
function withRevisions(docs: RouteDocs): Record<string, object> {
  const responses: Record<string, object> = { ...docs.responses };
  if (docs.tag === 'Management API' && responses['503'] === undefined)
    Object.assign(responses, apiErrors([503], ['REVISION_NOT_REACHED', 'SERVER_BUSY']));
  for (const [status, response] of Object.entries(responses)) {
    const { headers } = response as { headers?: object };
    responses[status] = { ...response, headers: { ...headers, ...kRevisionResponseHeader } };
  }
  return responses;
}

/** One documented route's operation: its security follows from its auth. */
function operation(route: RouteDeclaration, docs: RouteDocs): object {
  const revisions = namesRevisions(docs);
  const parameters = [...(docs.parameters ?? []), ...(revisions && docs.waitsForRevision !== false ? [kMinRevisionParam] : [])];
  return {
    operationId: docs.operationId,
    tags: [docs.tag],
    summary: docs.summary,
    security: route.auth === 'token' ? kBearer : route.auth === 'clientKey' ? kClientKeyAuth : [],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(docs.request ? { requestBody: requestBody(docs.request) } : {}),
    responses: revisions ? withRevisions(docs) : docs.responses,
  };
}

function requestBody(request: NonNullable<RouteDocs['request']>): object {
  const media = { schema: ref(request.schema) };
  return {
    required: request.required,
    content: request.alsoTextPlain ? { 'application/json': media, 'text/plain': media } : { 'application/json': media },
  };
}

/**
 * Every documented route, by path then method, in declaration order; with `names`, each operation's
 * component references written as `$ref`s (a schema no one declares is an error naming its route).
 */
export function openApiPaths(
  routes: Readonly<Record<string, RouteDeclaration>> = kAllRoutes,
  names?: ReadonlyMap<TSchema | string, string>,
): Record<string, Record<string, object>> {
  const paths: Record<string, Record<string, object>> = {};
  for (const [name, route] of Object.entries(routes)) {
    if (route.docs === undefined) continue;
    const path = openApiPath(route.pattern);
    const method = openApiMethod(route.method);
    let written = operation(route, route.docs);
    try {
      if (names !== undefined) written = resolved(written, names) as object;
    } catch (err) {
      if (err instanceof UndeclaredSchema)
        throw new Error(`route ${name} (${method.toUpperCase()} ${path}): its ${err.at.join('.')} ${err.message}`);
      throw err;
    }
    paths[path] = { ...paths[path], [method]: written };
  }
  return paths;
}

function info(version: string, license: string): object {
  return {
    title: 'Flagwire',
    version,
    description:
      'Self-hosted feature flags: the token-authenticated Management API, the credential-free Evaluation API, ' +
      'OpenFeature Remote Evaluation (OFREP), the change stream, and service endpoints.',
    // package.json's license. UNLICENSED (no licence granted) has no SPDX identifier; LicenseRef- is
    // SPDX's form for a licence not on its list.
    license: { name: license, identifier: license === 'UNLICENSED' ? 'LicenseRef-UNLICENSED' : license },
  };
}

const kTags = [
  { name: 'Management API', description: "Flags of the token's project, with a bearer token (Teams and Enterprise plans)" },
  { name: 'Evaluation API', description: 'Credential-free evaluation of one flag or a whole project, and the change stream' },
  { name: 'OFREP', description: "OpenFeature Remote Evaluation Protocol, for the OpenFeature SDKs' OFREP providers" },
  { name: 'Events', description: 'Exposures and outcomes sent by browsers and apps, with a client key (docs/events.md)' },
  { name: 'Sync', description: "A project environment's flagd flag set, with a token: the sync service's (gRPC, docs/api.md) over HTTP" },
  {
    name: 'Unleash',
    description:
      "Unleash's client API, for Unleash's stock server SDKs, with a token; its front-end API, for its front-end SDKs, with a client key (docs/api.md: Unleash's SDKs)",
  },
  { name: 'Service', description: 'Liveness, readiness, metrics, this document and the error documentation' },
];

/**
 * The document of `routes` with the components of `capabilities` (src/capabilities.ts's and every route;
 * a test gives its own). The build builds it (scripts/check-openapi.mjs), so a route naming a schema no
 * capability declares fails the build, naming both, never a server's start.
 */
export function buildOpenApiDocument(
  { version, license }: { version: string; license: string },
  capabilities: readonly Capability[] = kCapabilityList,
  routes: Readonly<Record<string, RouteDeclaration>> = kAllRoutes,
): object {
  const components = openApiComponents(capabilities);
  // By schema, and by the name it is declared under (SchemaRef may name one).
  const names = new Map<TSchema | string, string>(
    [...components].flatMap(([name, schema]) => [[schema, name] as const, [name, name] as const]),
  );
  return {
    openapi: '3.1.0',
    info: info(version, license),
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    // Relative: the server that serves this document (each node of a deployment serves its own).
    servers: [{ url: '/', description: 'The Flagwire server that serves this document' }],
    tags: kTags,
    paths: openApiPaths(routes, names),
    components: {
      schemas: JSON.parse(JSON.stringify(Object.fromEntries(components))) as object,
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'A project token: fw_ followed by 40 characters' },
        clientKeyAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            "A client key of the project: fwc_ followed by 40 characters (Unleash's front-end API also takes it as the whole Authorization header, as its SDKs send it)",
        },
      },
    },
  };
}
