// A capability's background work (the mailer, the webhook deliverer, the release plans' scheduler, the
// flag file's follower) as a value the capability declares, and the node's start and stop of all of it
// (src/server/start.ts). Each work says which phase it belongs to; the phases carry the order that
// matters, so the list's order (the capabilities' order, the command line's index) never has to.
import type { Logger } from 'pino';
import type { AuthFailures } from '../http/auth-failures.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { PortSetting } from '../port-setting.js';
import type { Store } from '../store/interfaces.js';
import type { WriterClient } from '../writer/client.js';
import type { GrpcServiceSpec } from './grpc-service.js';

/** What a node gives its background work. */
export interface NodeServices {
  readonly config: Readonly<Config>;
  readonly store: Store;
  readonly writer: WriterClient;
  readonly clock: Clock;
  readonly log: Logger;
  /** The failed-authentication lockout of the node (spec: Limits): one per server instance, whatever takes tokens. */
  readonly authFailures: AuthFailures;
  /** The node's own `/metrics` URL; null until it listens (a rollout's guard may read it). */
  ownMetricsUrl(): string | null;
  /** Every capability's gRPC services, for the node's gRPC server to host (src/capability/grpc-service.ts). */
  readonly grpcServices: readonly GrpcServiceSpec[];
}

/**
 * Why a work is stopped: the node shuts down, or its start failed before it listened (then nothing
 * waits for sends in progress: no request was answered, and the process is about to report the error).
 */
export type StopReason = 'shutdown' | 'failed start';

export interface RunningWork {
  stop(reason: StopReason): Promise<void>;
}

/**
 * - 'outbox': sends what the outbox holds (mail, webhook deliveries). Started first; its start only
 *   begins its polls. At shutdown its stop begins with the others' and is awaited after the in-flight
 *   requests have drained, so its wait for a send in progress overlaps the drain.
 * - 'before listening': brings the node's data up to date before it answers (the changes that fell due
 *   while it was down, the flag file) and then keeps it so. Started after the outbox's, one at a time
 *   in the list's order, each awaited; the node listens once all have started. At shutdown awaited
 *   before the drain.
 */
export type BackgroundPhase = 'outbox' | 'before listening';

export interface BackgroundWork {
  /** What it is called in the docs and the tests. */
  readonly name: string;
  readonly phase: BackgroundPhase;
  /**
   * Whether a relay (FLAGWIRE_UPSTREAM_URL) runs it. A relay writes nothing, so work that writes (sends
   * the outbox, runs due changes, applies a file) stays on the nodes that write; work that serves its
   * copy (the sync service) runs there too.
   */
  readonly runsOnRelay: boolean;
  /**
   * The port it listens on, if it listens (the sync service's): start-up tries it with the HTTP port's
   * before anything starts (src/server/listen.ts), so a taken one is refused before the data directory
   * is written and the threads start; its own listen names it the same way when it was taken since.
   */
  readonly listensOn?: PortSetting;
  /** Starts it; null when nothing of it runs on: the node's settings leave it off (no SMTP server, no flag file), or it was all done at start (a sweep). */
  start(node: NodeServices): Promise<RunningWork | null>;
}

const kPhases: readonly BackgroundPhase[] = ['outbox', 'before listening'];

/** Whether `work` runs on a node with `config`: a relay runs only the work that runsOnRelay. */
function runsOn(work: BackgroundWork, config: Readonly<Config>): boolean {
  return config.upstream === null || work.runsOnRelay;
}

/** The ports that the works running on a node with `config` listen on (listensOn), in their order. */
export function listenedPorts(works: readonly BackgroundWork[], config: Readonly<Config>): PortSetting[] {
  return works.flatMap((work) => (work.listensOn !== undefined && runsOn(work, config) ? [work.listensOn] : []));
}

/** The node's background work: started in its phases, stopped at shutdown or after a failed start. */
export class NodeBackground {
  /** What has started, in the order it started. */
  private readonly running: { phase: BackgroundPhase; work: RunningWork }[] = [];

  constructor(private readonly node: NodeServices) {}

  /** Starts every work, phase by phase, each awaited; rejects with the first start that fails (what started stays to stop). */
  async start(works: readonly BackgroundWork[]): Promise<void> {
    for (const phase of kPhases) {
      for (const work of works) {
        if (work.phase !== phase || !runsOn(work, this.node.config)) continue;
        const running = await work.start(this.node);
        if (running !== null) this.running.push({ phase, work: running });
      }
    }
  }

  /** After a failed start: stops what started, the last started first, one at a time. */
  async abandon(): Promise<void> {
    for (const { work } of [...this.running].reverse()) await work.stop('failed start');
  }

  /**
   * At shutdown: begins every stop now; `beforeDrain` settles when the 'before listening' work has
   * stopped, `afterDrain` when the outbox's has.
   */
  stopForShutdown(): { beforeDrain: Promise<void>; afterDrain: Promise<void> } {
    const stopping = this.running.map(({ phase, work }) => ({ phase, stopped: work.stop('shutdown') }));
    const settled = (phase: BackgroundPhase) =>
      Promise.all(stopping.filter((s) => s.phase === phase).map((s) => s.stopped)).then(() => undefined);
    return { beforeDrain: settled('before listening'), afterDrain: settled('outbox') };
  }
}
