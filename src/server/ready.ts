// GET /ready: 200 only when the store is open, every eval worker has answered a probe and, with
// PostgreSQL, this node's copy has caught up once since start, or on a relay, its copy holds a state of
// its upstream (load balancers route on it); 503 otherwise, and from the moment shutdown starts, with a
// `detail` saying why. PostgreSQL going away (or hanging) later does not make a node unready, nor does a
// relay's upstream: evaluation goes on from the copy, and the body says how old its last word is.
//
// The writer does not decide readiness: while another process holds the data file's write lock, writes
// are refused with 503 Storage busy, but evaluation, what a balancer routes, works. The body reports
// the writer's state ("ok" or "busy") for operators, as does the flagwire_writer_busy gauge.
//
// Concurrent probes share one check, and a result is reused for kReuseMs: a load balancer polling every
// few hundred milliseconds from several nodes costs one probe round per interval.
import type { TemplatedApp } from 'uWebSockets.js';
import { send, trackAbort } from '../http/http.js';
import { kRoutes, registerRoutes } from '../routes/route-table.js';
import { kRouteReady, type Metrics } from '../metrics/metrics.js';
import type { ReadinessBody } from '../model/probes.js';
import type { RelayStatus } from '../model/follow-state.js';
import type { ReplicaStatus } from '../store/open-store.js';

export interface ReadinessDeps {
  /** Reads the store's commit sequence number (throws when the store is closed or unreadable). */
  readStore(): number;
  /** `replica`: with PostgreSQL, this node's copy (not ready until it has first caught up); else null. */
  writer: { readonly busy: boolean; readonly replica?: ReplicaStatus | null; readonly relay?: RelayStatus | null };
  /** Probes the eval workers (every front-end thread's, when there are several). */
  probe(timeoutMs: number): Promise<{ answered: number; workers: number }>;
  metrics: Metrics | null;
  /** Each check's budget. */
  timeoutMs?: number;
}

/** One check's result; `status` is added when answering, from the state at that moment. */
export type ReadinessReport = Omit<ReadinessBody, 'status' | 'detail'>;

const kReuseMs = 250;
const kNoCache = [['Cache-Control', 'no-store']] as const;
const kRetry = [
  ['Cache-Control', 'no-store'],
  ['Retry-After', '1'],
] as const;

export class Readiness {
  private stopping = false;
  private running: Promise<ReadinessReport> | null = null;
  private last: { at: number; report: ReadinessReport } | null = null;
  private readonly timeoutMs: number;

  constructor(private readonly deps: ReadinessDeps) {
    this.timeoutMs = deps.timeoutMs ?? 1000;
  }

  /** From now on every check answers 503 (shutdown has started). */
  stop(): void {
    this.stopping = true;
  }

  check(): Promise<ReadinessReport> {
    if (this.last !== null && performance.now() - this.last.at < kReuseMs) return Promise.resolve(this.last.report);
    this.running ??= this.run().finally(() => (this.running = null));
    return this.running;
  }

  private async run(): Promise<ReadinessReport> {
    let store = false;
    try {
      this.deps.readStore();
      store = true;
    } catch {
      store = false;
    }
    const probe = await this.deps.probe(this.timeoutMs).catch(() => ({ answered: 0, workers: 0 }));
    const workersOk = probe.workers > 0 && probe.answered === probe.workers;
    const replica = this.deps.writer.replica ?? null;
    const relay = this.deps.writer.relay ?? null;
    const report: ReadinessReport = {
      ready: !this.stopping && store && workersOk && (replica === null || replica.caughtUp) && (relay === null || relay.holdsCopy),
      store,
      writer: this.deps.writer.busy ? 'busy' : 'ok',
      workers: { answered: probe.answered, total: probe.workers },
      ...(replica === null ? {} : { replica: { revision: replica.revision, caughtUp: replica.caughtUp, connected: replica.connected } }),
      ...(relay === null ? {} : { relay: relayReport(relay) }),
    };
    this.last = { at: performance.now(), report };
    return report;
  }

  register(app: TemplatedApp): void {
    registerRoutes(app, kRoutes, {
      ready: (res) => {
        trackAbort(res);
        void this.check().then((report) => {
          const ready = report.ready && !this.stopping;
          this.deps.metrics?.request(kRouteReady, ready ? 200 : 503);
          const body: ReadinessBody = ready
            ? { status: 'ready', ...report, ready }
            : { status: 'not ready', ...report, ready, detail: whyNotReady(report, this.stopping) };
          send(res, ready ? 200 : 503, JSON.stringify(body), 'application/json', ready ? kNoCache : kRetry);
        });
      },
    });
  }
}

function relayReport(status: RelayStatus): NonNullable<ReadinessReport['relay']> {
  return {
    upstream: status.upstream,
    holdsCopy: status.holdsCopy,
    connected: status.connected,
    revision: status.revision,
    lastHeardMsAgo: status.heardAt === null ? null : Math.max(0, Date.now() - status.heardAt),
    ...(status.problem === null ? {} : { problem: status.problem.text }),
    ...(status.primary === null
      ? {}
      : {
          primary: {
            url: status.primary.url,
            connected: status.primary.connected,
            lastHeardMsAgo: status.primary.heardAt === null ? null : Math.max(0, Date.now() - status.primary.heardAt),
            ...(status.primary.problem === null ? {} : { problem: status.primary.problem }),
          },
        }),
  };
}

/** Why a node is not ready, in the words an operator acts on (each failed condition, in order). */
function whyNotReady(report: ReadinessReport, stopping: boolean): string {
  const reasons: string[] = [];
  if (stopping) reasons.push('the server is shutting down');
  if (!report.store) reasons.push('the data file cannot be read');
  const { answered, total } = report.workers;
  if (total === 0 || answered < total) reasons.push(`${answered} of ${total} eval workers answered a probe`);
  const replica = report.replica;
  if (replica !== undefined && !replica.caughtUp) {
    reasons.push(
      replica.connected
        ? "this node's copy is catching up with PostgreSQL, the system of record"
        : "PostgreSQL, the system of record, does not answer, and this node's copy has not caught up with it since the node started (evaluation answers from the copy meanwhile)",
    );
  }
  const relay = report.relay;
  // Not ready only before the first copy: afterwards a relay serves what it holds, however old.
  if (relay !== undefined && !relay.holdsCopy) {
    reasons.push(
      `this relay holds no copy of its upstream ${relay.upstream} yet${relay.problem === undefined ? '' : ` (${relay.problem})`}`,
    );
  }
  return reasons.join('; ');
}
