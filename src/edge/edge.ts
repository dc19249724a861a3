// FlagwireEdge: one project environment's flags evaluated in a Cloudflare Worker or a Vercel Edge
// Function, from a snapshot that it polls for with its ETag (snapshot-loader.ts), answering OFREP's
// evaluation routes as the server does (ofrep-edge.ts). A runtime that allows I/O only while it serves a
// request drives it: each request that finds the snapshot older than `pollMs` starts one refresh, kept
// alive past the answer with the runtime's waitUntil, and is answered from the snapshot held.
import type { SnapshotSource } from '../provider/snapshot-client.js';
import { kProjectHeader } from '../ofrep/answer-text.js';
import { compileEdgeProject, type EdgeProject, holdProject } from './edge-project.js';
import { type EdgeAnswer, OfrepEdge } from './ofrep-edge.js';
import { httpLoader, type SnapshotLoader, storeLoader } from './snapshot-loader.js';

/** What a runtime gives a request to keep work going after its answer (Workers' ctx, Vercel's context). */
export interface WaitUntil {
  waitUntil(promise: Promise<unknown>): void;
}

/** What a binding answers for a key (KV's get, Edge Config's get): the text, an object already parsed, or nothing. */
export interface SnapshotStore {
  get(key: string): Promise<unknown>;
}

export interface FlagwireEdgeOptions {
  /** The project whose flags are served. */
  project: string;
  /** Of a multi-environment project, the one served; absent or null for a single-environment project. */
  environment?: string | null;
  /** A Flagwire node or relay (https://flags.example.com) and a read token of the project: the snapshot comes from there. */
  url?: string;
  token?: string;
  /** Or a binding (KV namespace, Edge Config) holding the snapshot under `storeKey` (docs/edge.md). */
  store?: SnapshotStore;
  /** Default: `flagwire-snapshot-<project>[-<environment>]`. */
  storeKey?: string;
  /** How old the snapshot may get before a request asks for a newer one (default 5,000 ms, at least 100). */
  pollMs?: number;
  /** The time limit of one snapshot request (default 10,000 ms). */
  timeoutMs?: number;
  /** The clock (default Date.now). */
  now?: () => number;
}

const kDefaultPollMs = 5_000;
const kDefaultTimeoutMs = 10_000;
/** OFREP's routes, as the server's route table spells them. */
const kBulkPath = '/ofrep/v1/evaluate/flags';
const kFlagPrefix = '/ofrep/v1/evaluate/flags/';
const kStreamPrefix = '/ofrep/v1/stream/';
/** What every answer carries, as the server's (src/evaluation/engine/answer-writer.ts). */
const kCors = { 'Access-Control-Allow-Origin': '*', 'X-Content-Type-Options': 'nosniff' };

export class FlagwireEdge {
  private readonly loader: SnapshotLoader;
  private readonly pollMs: number;
  private readonly now: () => number;
  private readonly ofrep = new OfrepEdge();
  private readonly origin: string | null;
  private held: EdgeProject | null = null;
  private etag: string | null = null;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private refreshing = false;
  /** The last refresh's failure ('' after a success): what a request finds when there is no snapshot at all. */
  lastError = '';

  constructor(options: FlagwireEdgeOptions) {
    this.pollMs = Math.max(100, options.pollMs ?? kDefaultPollMs);
    this.now = options.now ?? Date.now;
    const environment = options.environment ?? null;
    if (options.url !== undefined && options.token !== undefined) {
      const source: SnapshotSource = { url: options.url, token: options.token, project: options.project, environment };
      this.loader = httpLoader(source, options.timeoutMs ?? kDefaultTimeoutMs);
      this.origin = options.url.replace(/\/+$/, '');
    } else if (options.store !== undefined) {
      const key = options.storeKey ?? `flagwire-snapshot-${options.project}${environment === null ? '' : `-${environment}`}`;
      this.loader = storeLoader(options.store, key);
      this.origin = null;
    } else {
      throw new Error('FlagwireEdge needs `url` and `token` (a Flagwire node or relay), or `store` (a bound snapshot): docs/edge.md.');
    }
  }

  /**
   * The snapshot to answer from: the first request waits for it; later ones start a refresh when it is
   * older than `pollMs` (kept alive with `ctx.waitUntil`) and go on with the one held.
   */
  async ready(ctx?: WaitUntil): Promise<void> {
    if (this.held === null) {
      await this.refresh();
      return;
    }
    if (!this.refreshing && this.now() - this.checkedAt >= this.pollMs) {
      const refresh = this.refresh();
      if (ctx === undefined) await refresh;
      else ctx.waitUntil(refresh);
    }
  }

  /** Asks for the snapshot now (If-None-Match with the one held); a failure keeps the one held and is kept in `lastError`. */
  async refresh(): Promise<void> {
    this.refreshing = true;
    try {
      const loaded = await this.loader.load(this.held === null ? null : this.etag);
      if (loaded.modified) {
        this.hold(compileEdgeProject(loaded.stored.snapshot, loaded.stored.configTag));
        this.etag = loaded.stored.etag;
      } else if (this.held !== null && loaded.configTag !== '' && loaded.configTag !== this.held.configTag) {
        this.hold({ ...this.held, configTag: loaded.configTag });
      }
      this.lastError = '';
    } catch (err) {
      this.lastError = (err as Error).message;
    } finally {
      this.checkedAt = this.now();
      this.refreshing = false;
    }
  }

  private hold(project: EdgeProject): void {
    this.held = project;
    holdProject(this, project);
  }

  /** Answers OFREP's evaluation routes (and proxies its change stream to the node); null for any other request. */
  async handle(request: Request, ctx?: WaitUntil): Promise<Response | null> {
    const url = new URL(request.url);
    const path = url.pathname;
    if (request.method === 'OPTIONS' && path.startsWith('/ofrep/')) return preflight();
    if (path.startsWith(kStreamPrefix) && request.method === 'GET') return this.stream(url, request);
    const bulk = path === kBulkPath;
    if (request.method !== 'POST' || !(bulk || path.startsWith(kFlagPrefix))) return null;
    await this.ready(ctx);
    const project = this.held;
    if (project === null) return unavailable(this.lastError);
    const body = await request.text();
    const projectHeader = request.headers.get(kProjectHeader) ?? '';
    const nowMs = this.now();
    const answer = bulk
      ? this.ofrep.evaluateBulk(project, projectHeader, body, request.headers.get('if-none-match') ?? '', nowMs)
      : this.ofrep.evaluateFlag(project, path.slice(kFlagPrefix.length), body, projectHeader, nowMs);
    return respond(answer);
  }

  /** handle(), with a 404 for what it does not answer: a whole Worker's fetch handler. */
  async fetch(request: Request, ctx?: WaitUntil): Promise<Response> {
    return (
      (await this.handle(request, ctx)) ??
      new Response(JSON.stringify({ error: 'NOT_FOUND', detail: 'Not an OFREP route.' }), {
        status: 404,
        headers: { ...kCors, 'Content-Type': 'application/json' },
      })
    );
  }

  /** The change stream the bulk answers name (eventStreams): the node's, passed through where the runtime allows a long request. */
  private stream(url: URL, request: Request): Response | Promise<Response> {
    if (this.origin === null) return new Response(null, { status: 404, headers: kCors });
    // What a stream's client says of itself, not the headers that name this edge (Host, its own credentials).
    const headers: Record<string, string> = {};
    for (const name of ['accept', 'last-event-id']) {
      const value = request.headers.get(name);
      if (value !== null) headers[name] = value;
    }
    return fetch(`${this.origin}${url.pathname}${url.search}`, { headers, signal: request.signal });
  }
}

function respond(answer: EdgeAnswer): Response {
  const headers: Record<string, string> = { ...kCors };
  if (answer.etag !== '') {
    headers.ETag = answer.etag;
    headers['Access-Control-Expose-Headers'] = 'ETag';
  }
  if (answer.status === 304) return new Response(null, { status: 304, headers });
  headers['Content-Type'] = 'application/json';
  return new Response(answer.body, { status: answer.status, headers });
}

function preflight(): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...kCors,
      'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
      'Access-Control-Allow-Headers': `Content-Type, If-None-Match, ${kProjectHeader}, Authorization`,
      'Access-Control-Max-Age': '86400',
    },
  });
}

/** No snapshot yet: OFREP's 503 with the reason, as the server answers while it cannot evaluate. */
function unavailable(reason: string): Response {
  const details = `This edge has no snapshot of its project yet${reason === '' ? '' : `: ${reason}`}. Retry after a second.`;
  return new Response(JSON.stringify({ errorCode: 'GENERAL', errorDetails: details }), {
    status: 503,
    headers: { ...kCors, 'Content-Type': 'application/json', 'Retry-After': '1' },
  });
}
