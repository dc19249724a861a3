// A capability of Flagwire (flags, tokens, webhooks, release plans, ...) declared in one value, in its
// own folder: the databases and kinds of record it stores, the writer commands it adds, its Management
// API routes and their handlers, its web console routes, its command-line commands and its audit actions. The
// parts only a front end or the command line uses (its routes, console routes and command-line commands)
// are declared as functions that import them (OnUse), so a thread that never serves or runs them (the
// writer thread, a command) never loads their modules. src/capabilities.ts lists every capability
// once; every table another part needs (the writer's commands by name, the route table, the console's
// JSON API, the command line's index and help, the audit actions and the webhook event of each) is
// derived from that list, never kept beside it; so are the store's (the databases it opens, what a full
// copy clears and copies, what migrate-to-postgres exports, the change kinds: src/store/store-layout.ts;
// the side files and PostgreSQL migrations: src/store/side-storage.ts). docs/architecture.md ("Adding a capability") says how to
// add one.
import type { ManagementHandler, RouteErrorBody, RouteServices } from '../routes/handler.js';
import type { BackgroundWork } from './background-work.js';
import type { GrpcServiceSpec } from './grpc-service.js';
import type { EnvironmentBearing, StoreReader } from '../store/interfaces.js';
import type { CliCommand } from '../cli/command/cli-command.js';
import type { FlagwireError } from '../errors.js';
import type { WebhookEvent } from './webhook-events.js';
import type { RouteCounts, RouteDeclaration, RouteDeclarations, RouteHandler } from '../routes/route-table.js';
import type { ApiRoute } from '../console-route/call.js';
import type { RecordKind } from '../store/record-kinds.js';
import type { SideFile } from '../store/side-storage.js';
import type { Migration } from '../store/pg/migrations.js';
import type { Logger } from 'pino';
import type { AuthFailures } from '../http/auth-failures.js';
import type { SignInLimits } from '../http/sign-in-limits.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { BodyBudget } from '../http/body.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { SnapshotReader } from '../store/interfaces.js';
import type { AnyCommand } from '../writer/command.js';
import type { TSchema } from '../typebox.js';

/**
 * A Management API route: its declaration (method, pattern, auth, metrics label, OpenAPI) and its
 * handler. Every Management API request is counted, under the number src/all-routes.ts derives.
 */
export interface ManagementRouteSpec extends RouteDeclaration {
  readonly via: 'management';
  readonly handler: ManagementHandler;
  /**
   * The body of every refusal of the route once it is matched (auth, limits, validation, its handler's):
   * a route set that speaks another standard answers in that standard's error shape, and its docs
   * declare the same shape (src/routes/openapi-parts.ts: errorResponses). Absent: the envelope.
   */
  readonly errorBody?: RouteErrorBody;
}

/**
 * A route of a capability outside the Management API's /api/v1 (GET /v1/flag-sets/...): registered on
 * uWS as the service's own routes are, its handler made once per front end from the front end's parts
 * and its route number (derived from the declarations by src/all-routes.ts: what it counts under).
 */
export interface ServiceRouteSpec extends RouteDeclaration {
  readonly via?: 'uws';
  readonly handler: (deps: ServiceRouteDeps, route: number) => RouteHandler;
}

/**
 * What a service route's handler is made from: the front end's parts it shares with the Management API
 * (the token checks' lockout and activity, the store, the clock). Declared here, not taken from the
 * Management API's own deps, which stand above the capabilities.
 */
export interface ServiceRouteDeps extends RouteServices {
  store: SnapshotReader;
  clock: Clock;
  config: Readonly<Config>;
  log: Logger;
  authFailures: AuthFailures;
  /** The console's sign-in limits, per process: single sign-on's starts count per address there. */
  signInLimits: SignInLimits;
  /** Unleash SDK reports per project, per process (src/unleash/report-rate.ts): shared by every front-end thread. */
  reportRate: RateLimiter;
  /** The Management API's per-address rate limit, the process's; null only in the bench's twin without it. */
  rateLimiter: RateLimiter | null;
  /** A random key made at start, the same on every front-end thread of this process: what a route signs ids the node alone issues with (MCP session ids). */
  nodeKey: Uint8Array;
  activity: TokenUseLog;
  /** The request-body budget a route with a body reads it from (src/http/body.ts). */
  bodies: BodyBudget;
  /** Request counts by route number; null or absent when metrics are off. */
  metrics?: RouteCounts | null;
}

/** What a service route tells of a token's use: its requests and denials (src/tokens/activity.ts ActivityRecorder keeps them). */
export interface TokenUseLog {
  used(tokenId: string, method: string, path: string, status: number, at: number): void;
  denied(tokenId: string, reason: string, method: string, path: string, at: number): void;
  refused(tokenId: string, error: FlagwireError, method: string, path: string, at: number): void;
}

/**
 * A part of a capability that only some threads use, loaded on first use: declared as a function that
 * imports its module, `async () => (await import('./routes.js')).kFlagApiRoutes`, never imported
 * statically by capability.ts. Every thread loads the declarations (the writer thread needs the records
 * and commands, a command its commands); only a front end loads the routes, only the command line its
 * commands: the writer thread loaded many modules of routes, console routes and commands it never ran
 * (issue 57 item 2). A dynamic import is loaded once per thread, so each call gives the same value.
 */
export type OnUse<T> = () => Promise<T>;

/** The parts of a capability loaded on use (OnUse). */
export type OnUsePart = 'routes' | 'serviceRoutes' | 'hostedRoutes' | 'consoleRoutes' | 'cli';

/** What a capability's `part` holds, loaded. */
export type LoadedPart<K extends OnUsePart> = Awaited<ReturnType<NonNullable<Capability[K]>>>;

/** Each capability's `part`, loaded (in parallel), in their order: undefined for one that declares none. */
export function loadPart<K extends OnUsePart>(capabilities: readonly Capability[], part: K): Promise<(LoadedPart<K> | undefined)[]> {
  return Promise.all(capabilities.map((c) => c[part]?.() as Promise<LoadedPart<K>> | undefined));
}

export interface Capability {
  /** Its folder's name under src/. */
  readonly name: string;
  /** The LMDB databases it owns (src/store/layout.ts says what each holds); each has exactly one owner. */
  readonly databases?: readonly string[];
  /**
   * The kinds of record it stores: the store's values for them (src/store/record-kinds.ts, where the
   * keys are laid out), each kept in a database some capability owns.
   */
  readonly records?: readonly RecordKind[];
  /**
   * The LMDB files it keeps in the data dir beside the data file (src/store/side-storage.ts): the store
   * opens one for it (src/store/side-file.ts) and counts its name among the data dir's own; its code
   * keeps their key layouts.
   */
  readonly sideFiles?: readonly SideFile[];
  /**
   * The migrations that make its PostgreSQL tables: applied by the store's migrator with the store's own,
   * in one sequence of versions (src/store/pg/migrate.ts); a version, once shipped, is never renumbered.
   */
  readonly pgMigrations?: readonly Migration[];
  /** Its writer commands by name (commandTable in src/writer/command.ts). */
  readonly commands?: Readonly<Record<string, AnyCommand>>;
  /**
   * The OpenAPI components its routes name (`ref`, src/routes/openapi-parts.ts), by component name: the
   * TypeBox values it validates with or answers with. The document lists the service's and every
   * capability's (src/openapi/document.ts); a name declared twice fails its build.
   */
  readonly schemas?: Readonly<Record<string, TSchema>>;
  /** Its Management API routes by route name (the name the metrics and tests know it by), loaded on use. */
  readonly routes?: OnUse<Readonly<Record<string, ManagementRouteSpec>>>;
  /** Its routes outside the Management API, by route name, loaded on use. */
  readonly serviceRoutes?: OnUse<Readonly<Record<string, ServiceRouteSpec>>>;
  /**
   * Its routes that a part the front end builds at start-up registers and serves (evaluation's route
   * sets on the evaluation service's batches, the change streams on the change feed), by route name:
   * declared here for the route table, the OpenAPI document and the metrics like every other route; the
   * part is given their numbers (src/all-routes.ts, routeNumbers) when the front end builds it. Loaded on use.
   */
  readonly hostedRoutes?: OnUse<RouteDeclarations>;
  /** Its web console JSON API routes (/console/api/...), loaded on use. */
  readonly consoleRoutes?: OnUse<readonly ApiRoute[]>;
  /** Its command-line commands, in the order the index lists them, loaded on use. */
  readonly cli?: OnUse<readonly CliCommand[]>;
  /** Every audit action its commands write (a closed list: `as const` in the capability). */
  readonly auditActions?: readonly string[];
  /** The webhook event its audit actions are sent as (docs/webhooks.md); absent: no webhook hears of them. */
  readonly webhookEvent?: WebhookEvent;
  /** What it runs beside the request path on every node, from start-up to shutdown (src/server/start.ts). */
  readonly background?: readonly BackgroundWork[];
  /** Its gRPC services, hosted on the sync service's port (src/capability/grpc-service.ts). */
  readonly grpcServices?: readonly GrpcServiceSpec[];
  /**
   * How its kinds of record bear on an environment's state (src/store/interfaces.ts: EnvironmentBearing): what the approvals
   * gate compares in a guarded environment. A kind not listed never needs an approval.
   */
  // biome-ignore lint/suspicious/noExplicitAny: each bearing is typed by its own kind; the list holds every kind's.
  readonly environmentState?: readonly EnvironmentBearing<any>[];
  /**
   * What every change must leave true, whatever made it (WriteCheck): checked in the writer's transaction
   * after each command, an approved change request's apply included.
   */
  readonly writeChecks?: readonly WriteCheck[];
}

/**
 * A rule on what the store may hold, checked after every writer command in its transaction (the approvals
 * gate runs each: src/approvals/gate.ts), given what the command wrote and reading the store as it left it.
 * It throws a FlagwireError to refuse the whole command, and nothing of it is written; so no surface (the
 * API, the console, the command line, flags as code, an approved change request) goes around it.
 */
export type WriteCheck = (r: StoreReader, changes: readonly WrittenChange[]) => void;

/**
 * A change as a write check reads it: its kind's name and the record (src/store/changes.ts Change, which
 * is typed from the capabilities' declarations, so a declaration cannot name it).
 */
export interface WrittenChange {
  readonly kind: string;
  readonly value: unknown;
}

/** Declares a capability; the value keeps its literal types (its command names, its audit actions). */
export function defineCapability<const C extends Capability>(capability: C): C {
  return capability;
}
