// Write load that remembers what the server acknowledged, for the crash and shutdown tests.
//
// A PatchWriter owns one (flag, environment) and patches it in sequence, each time to a cohort list no
// earlier patch used, so every acknowledged patch is a real change with its own audit entry; at most
// one patch is in flight (sent, not answered) when the server dies. A Creator creates flags with
// unique names. After a crash, `verify*` read the data dir and list every acknowledged change that is
// missing: a durable store has none.
import http from 'node:http';
import { getFlag, listFlags } from '../../src/flags/records/flag-store.js';
import type { Flag } from '../../src/model/flags.js';
import type { AuditEntry } from '../../src/model/audit.js';
import type { AuditPage, StoreReader } from '../../src/store/interfaces.js';

/** What verification reads: a Store, or a fresh read by a new process (helpers/fresh-read.ts). */
export interface Reader {
  getFlag(id: string): Flag | undefined;
  listFlags(projectId: string): Flag[];
  listAudit(projectId: string, page: AuditPage): AuditEntry[];
}

/** A store, read as verification reads a fresh read. */
export function storeReader(store: StoreReader): Reader {
  return {
    getFlag: (id) => getFlag(store, id),
    listFlags: (projectId) => listFlags(store, projectId),
    listAudit: (projectId, page) => store.listAudit(projectId, page),
  };
}

export interface PatchTarget {
  secret: string;
  flagId: string;
  projectId: string;
  env: string | null;
}

/** One keep-alive connection per worker. node:http never retries: a request the server did not answer fails. */
function agent(): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets: 1 });
}

/** One request; resolves with the status and body, rejects when the connection fails or closes first. */
export function request(
  baseUrl: string,
  dispatcher: http.Agent,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseUrl}${path}`, { method, headers, agent: dispatcher, timeout: 60_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('response aborted')));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 60 s')));
    req.on('error', reject);
    req.end(body);
  });
}

export interface Outcome {
  startedAt: number;
  endedAt: number;
  status: number | null;
  error: string | null;
  /** The body of an answer other than 200 (kept to check refusals have their defined body). */
  text?: string;
}

abstract class Worker {
  protected readonly dispatcher = agent();
  readonly outcomes: Outcome[] = [];
  private acks = 0;
  private readonly ackListeners = new Set<() => void>();
  private stopped = false;
  private loop: Promise<void> | null = null;

  constructor(
    protected readonly baseUrl: string,
    readonly tag: string,
  ) {}

  /** Runs until stop() or until a request fails (the server is gone). */
  start(): this {
    this.loop = (async () => {
      let seq = 0;
      while (!this.stopped) {
        const ok = await this.once(++seq);
        if (!ok) break;
      }
    })();
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    this.dispatcher.destroy();
  }

  /** Writes the server acknowledged so far. */
  get ackCount(): number {
    return this.acks;
  }

  /** Calls `listener` after each acknowledged write until the returned function is called. */
  onAck(listener: () => void): () => void {
    this.ackListeners.add(listener);
    return () => this.ackListeners.delete(listener);
  }

  protected acknowledged(): void {
    this.acks++;
    for (const listener of this.ackListeners) listener();
  }

  protected abstract once(seq: number): Promise<boolean>;

  protected async send(method: string, path: string, secret: string, body: unknown): Promise<{ status: number; json: any } | null> {
    const outcome: Outcome = { startedAt: performance.now(), endedAt: 0, status: null, error: null };
    this.outcomes.push(outcome);
    try {
      const res = await request(
        this.baseUrl,
        this.dispatcher,
        method,
        path,
        { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        JSON.stringify(body),
      );
      outcome.status = res.status;
      outcome.endedAt = performance.now();
      if (res.status !== 200) outcome.text = res.text;
      return { status: res.status, json: res.text === '' ? null : JSON.parse(res.text) };
    } catch (err) {
      outcome.error = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      outcome.endedAt = performance.now();
      return null;
    }
  }
}

export class PatchWriter extends Worker {
  /** Cohort values the server acknowledged (200, changed), in order. */
  readonly acked: string[] = [];
  /** The value of the patch that was sent and never answered, if any. */
  unanswered: string | null = null;
  /** Answers other than 200 (a 503 while stopping is fine; anything else is reported). */
  readonly refused: { status: number; body: unknown }[] = [];

  /** `baseline`: the cohorts the target held before this writer started, when known. */
  constructor(
    baseUrl: string,
    tag: string,
    readonly target: PatchTarget,
    readonly baseline?: readonly string[] | null,
  ) {
    super(baseUrl, tag);
  }

  protected async once(seq: number): Promise<boolean> {
    const value = `${this.tag}-${seq}`;
    const { flagId, env, secret } = this.target;
    this.unanswered = value;
    const reply = await this.send('PATCH', `/api/v1/flags/${flagId}${env === null ? '' : `?env=${env}`}`, secret, { cohorts: [value] });
    if (reply === null) return false;
    this.unanswered = null;
    if (reply.status === 200 && reply.json?.changed === true) {
      this.acked.push(value);
      this.acknowledged();
    } else {
      this.refused.push({ status: reply.status, body: reply.json });
      if (reply.status >= 500) return false;
    }
    return true;
  }
}

export class Creator extends Worker {
  /** Flags the server acknowledged (201): name -> id. */
  readonly acked = new Map<string, string>();
  unanswered: string | null = null;
  readonly refused: { status: number; body: unknown }[] = [];

  constructor(
    baseUrl: string,
    tag: string,
    readonly secret: string,
    readonly projectId: string,
    readonly multi: boolean,
  ) {
    super(baseUrl, tag);
  }

  protected async once(seq: number): Promise<boolean> {
    const name = `${this.tag}-${seq}`;
    this.unanswered = name;
    const body = this.multi ? { name, environments: {} } : { name, enabled: true, trafficPercentage: 100 };
    const reply = await this.send('POST', '/api/v1/flags', this.secret, body);
    if (reply === null) return false;
    this.unanswered = null;
    if (reply.status === 201) {
      this.acked.set(name, reply.json.id);
      this.acknowledged();
    } else {
      this.refused.push({ status: reply.status, body: reply.json });
      if (reply.status >= 500) return false;
    }
    return true;
  }
}

/**
 * Resolves true once `workers` together have `count` acknowledged writes, or false after `boundMs` (a
 * hang catcher): a test that kills the server under load waits for this, not for a fixed time, so the
 * load it checks is there however slowly a just-started server or a loaded machine answers.
 */
export function acknowledgedWrites(workers: readonly (PatchWriter | Creator)[], count: number, boundMs: number): Promise<boolean> {
  const total = () => workers.reduce((n, w) => n + w.ackCount, 0);
  if (total() >= count) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (reached: boolean) => {
      clearTimeout(timer);
      for (const off of offs) off();
      resolve(reached);
    };
    const timer = setTimeout(() => done(false), boundMs);
    const offs = workers.map((w) => w.onAck(() => total() >= count && done(true)));
  });
}

export interface Verdict {
  /** Acknowledged changes checked. */
  checked: number;
  /** Acknowledged changes not found on disk (must be 0). */
  lost: string[];
  /** Changes sent but never answered that were committed anyway (allowed). */
  committedUnanswered: number;
}

/**
 * Every acknowledged patch has its audit entry (written in the same transaction as the change), and the
 * flag holds the last acknowledged value, or the unanswered one if that was committed before the crash.
 */
export function verifyPatches(store: Reader, writers: readonly PatchWriter[]): Verdict {
  const verdict: Verdict = { checked: 0, lost: [], committedUnanswered: 0 };
  for (const w of writers) {
    const { flagId, projectId, env } = w.target;
    const audited = new Set<string>();
    for (const entry of store.listAudit(projectId, { limit: 1_000_000, before: null })) {
      if (entry.flagId !== flagId || entry.env !== env) continue;
      const after = (entry.changes.cohorts?.after ?? null) as string[] | null;
      if (after?.length === 1) audited.add(after[0]!);
    }
    for (const value of w.acked) {
      verdict.checked++;
      if (!audited.has(value)) verdict.lost.push(`${flagId}${env === null ? '' : `@${env}`}: ${value} (no audit entry)`);
    }
    const current = targetCohorts(store, w.target);
    // The target holds the last acknowledged value, or the unanswered one if it was committed; with
    // nothing acknowledged, what it held before (when known), or the unanswered one.
    const last = w.acked.at(-1);
    const allowed: (readonly string[] | null)[] = [];
    if (last !== undefined) allowed.push([last]);
    else if (w.baseline !== undefined) allowed.push(w.baseline);
    if (w.unanswered !== null) allowed.push([w.unanswered]);
    if ((last !== undefined || w.baseline !== undefined) && !allowed.some((a) => JSON.stringify(a) === JSON.stringify(current))) {
      verdict.lost.push(
        `${flagId}${env === null ? '' : `@${env}`}: holds ${JSON.stringify(current)}, expected ${allowed.map((a) => JSON.stringify(a)).join(' or ')}`,
      );
    }
    if (w.unanswered !== null && audited.has(w.unanswered)) verdict.committedUnanswered++;
  }
  return verdict;
}

/** The cohort list a target's evaluations use: its environment's override, else the flag-wide list. */
export function targetCohorts(store: Pick<Reader, 'getFlag'>, { flagId, env }: PatchTarget): readonly string[] | null {
  const flag = store.getFlag(flagId);
  if (flag === undefined) return null;
  if (flag.kind === 'flag') return flag.cohorts;
  return (Object.hasOwn(flag.environments, env ?? '') ? flag.environments[env ?? '']!.cohorts : null) ?? flag.cohorts;
}

/** Every acknowledged create is a flag with that id and name. */
export function verifyCreates(store: Reader, creators: readonly Creator[]): Verdict {
  const verdict: Verdict = { checked: 0, lost: [], committedUnanswered: 0 };
  for (const c of creators) {
    for (const [name, id] of c.acked) {
      verdict.checked++;
      const flag = store.getFlag(id);
      if (flag?.name !== name || flag.projectId !== c.projectId) verdict.lost.push(`flag ${name} (${id})`);
    }
    if (c.unanswered !== null && store.listFlags(c.projectId).some((f) => f.name === c.unanswered)) verdict.committedUnanswered++;
  }
  return verdict;
}
