// A relay's follower: keeps the relay's LMDB copy at its upstream's revisions. It runs in the writer
// thread (the relay's write path, relay-write-path.ts, writes nothing else into the copy):
//   1. discovery: GET {upstream}/v1/relay with the relay key answers the sync port, the upstream's
//      source (its system of record) and revision;
//   2. Follow (flagwire.relay.v1.RelayService, on that port, TLS when the URL is https) with the source
//      and revision this copy holds: the upstream answers a whole copy (applied with replaceAll) when the
//      copy is of another source or behind its change log, then revisions (applyRevisions: each fills
//      this copy's own change log too, so relays chain) and a heartbeat every 5 s while nothing changes;
//      an upstream that is itself a relay adds, on each, the primary's reachability as it sees it (wire.ts);
//   3. when the stream ends, fails, or says nothing for kSilentMs (an upstream that hangs, or a network
//      that drops packets without a reset), back to 1 after a delay doubling from 250 ms to
//      10 s with jitter (many relays of one upstream do not return all at once); one that
//      delivered something retries at once. A refused key (401 or UNAUTHENTICATED: revoked or wrong) is
//      retried every kRefusedRetryMs: the key is a setting, so only a restart with a new one mends it.
// Whatever happens upstream, the copy keeps serving what it holds; its state is reported to the main
// thread (readiness, the log) as a RelayStatus.
import { backoffMs } from '../outbox/outbox.js';
import type * as grpc from '@grpc/grpc-js';
import { loadOnUse } from '../load-on-use.js';
import type { Config } from '../config.js';
import type { RelayStatus } from '../model/follow-state.js';
import { getUpstream, type UpstreamAnswer } from './upstream-get.js';
import { decodeFollowResponse, encodeFollowRequest, kFollowPath, type RelayPayload } from './wire.js';
import type { StoreCopy } from '../store/interfaces.js';

// Loaded when a relay first dials its upstream: every node's writer thread loads this module, and only a
// relay's uses it (a large part of a thread's start: bench/RESULTS.md, Costs behind the code's choices).
const grpcLib = loadOnUse<typeof grpc>('@grpc/grpc-js');

// Doubling from 250 ms to 10 s, jittered (src/outbox/outbox.ts backoffMs: the one backoff rule).
const kRetry = { firstDelayMs: 250, maxDelayMs: 10_000, jitter: true } as const;
const kRefusedRetryMs = 30_000;
/** Three of the upstream's heartbeats (every 5 s) missed: the stream is given up and dialled again. */
const kSilentMs = 15_000;
/** Discovery is one small read: an upstream that has not answered it in this time is not answering. */
const kDiscoveryMs = 5000;

/** GET /v1/relay's answer (the relay contract). */
interface Discovery {
  syncPort: number;
  source: string;
  revision: number;
}

/** A stream's end: whether the upstream refused the key, and whether anything arrived before. */
interface Ended {
  refused: boolean;
  delivered: boolean;
  text: string;
}

class Refused extends Error {}

export class UpstreamFollower {
  private status: RelayStatus;
  private stopped = false;
  private call: grpc.ClientReadableStream<RelayPayload> | null = null;
  private wake: (() => void) | null = null;
  /** Aborts a discovery in flight when the follower stops. */
  private readonly stopping = new AbortController();
  private loop: Promise<void> | null = null;

  constructor(
    private readonly copy: StoreCopy,
    private readonly upstream: NonNullable<Config['upstream']>,
    private readonly report: (status: RelayStatus) => void,
  ) {
    this.status = {
      upstream: upstream.url,
      holdsCopy: this.holdsCopy(),
      connected: false,
      revision: copy.replicaRevision(),
      heardAt: null,
      problem: null,
      primary: null,
    };
  }

  start(): void {
    // At once: a relay that holds a state is ready before it has heard from its upstream.
    this.report(this.status);
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    this.call?.cancel();
    this.wake?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      let ended: Ended;
      try {
        const discovery = await this.discover();
        // Stopped while discovery was in flight (a start that failed on a port): no stream is opened,
        // else nothing would cancel it and the stop would wait on it for ever.
        if (this.stopped) return;
        ended = await this.follow(discovery);
      } catch (err) {
        ended = { refused: err instanceof Refused, delivered: false, text: err instanceof Error ? err.message : String(err) };
      }
      if (this.stopped) return;
      this.publish({ connected: false, problem: { refused: ended.refused, text: ended.text } });
      failures = ended.delivered ? 0 : failures + 1;
      await this.pause(ended.refused ? kRefusedRetryMs : failures === 0 ? 0 : backoffMs(kRetry, failures));
    }
  }

  /** GET /v1/relay: the port to dial, or Refused for a key the upstream does not take. */
  private async discover(): Promise<Discovery> {
    let res: UpstreamAnswer;
    try {
      res = await getUpstream(
        `${this.upstream.url}/v1/relay`,
        { authorization: `Bearer ${this.upstream.token}` },
        AbortSignal.any([AbortSignal.timeout(kDiscoveryMs), this.stopping.signal]),
      );
    } catch (err) {
      throw new Error(`the upstream ${this.upstream.url} does not answer (${describe(err)})`);
    }
    if (res.status === 401) throw new Refused(refusedText(this.upstream.url, res.body));
    if (res.status !== 200) throw new Error(`the upstream ${this.upstream.url} answered GET /v1/relay with ${res.status}`);
    const discovery = parseDiscovery(res.body);
    if (discovery === null)
      throw new Error(
        `the upstream ${this.upstream.url} answered GET /v1/relay with no sync port (is it a Flagwire node with its sync service on?)`,
      );
    this.publish({ heardAt: Date.now() });
    return discovery;
  }

  /** One Follow stream, applied as it comes, until it ends. */
  private follow(discovery: Discovery): Promise<Ended> {
    const url = new URL(this.upstream.url);
    const lib = grpcLib();
    const credentials = url.protocol === 'https:' ? lib.credentials.createSsl() : lib.credentials.createInsecure();
    const client = new lib.Client(`${url.hostname}:${discovery.syncPort}`, credentials);
    const metadata = new lib.Metadata();
    metadata.set('authorization', `Bearer ${this.upstream.token}`);
    const request = { source: this.copy.replicaOf() ?? '', revision: this.copy.replicaRevision() };
    const call = client.makeServerStreamRequest(kFollowPath, encodeFollowRequest, decodeFollowResponse, request, metadata);
    this.call = call;
    return new Promise<Ended>((resolve) => {
      let delivered = false;
      let failure: string | null = null;
      let silence = setTimeout(() => call.cancel(), kSilentMs);
      call.on('data', (message: RelayPayload) => {
        clearTimeout(silence);
        silence = setTimeout(() => call.cancel(), kSilentMs);
        try {
          this.apply(message);
          delivered = true;
        } catch (err) {
          // A revision that does not follow (or a message this Flagwire cannot read): dial again, and
          // the upstream answers from what the copy holds.
          failure = `a message from the upstream could not be applied (${describe(err)})`;
          call.cancel();
        }
      });
      // 'error' comes with every status but OK; 'status' always, last.
      call.on('error', () => undefined);
      call.on('status', (status: grpc.StatusObject) => {
        clearTimeout(silence);
        this.call = null;
        client.close();
        const refused = status.code === lib.status.UNAUTHENTICATED;
        const text = refused
          ? refusedText(this.upstream.url, status.details)
          : (failure ?? `the upstream's stream ended (${lib.status[status.code]}${status.details ? `: ${status.details}` : ''})`);
        resolve({ refused, delivered, text });
      });
    });
  }

  private apply(message: RelayPayload): void {
    if (message.t === 'copy') this.copy.replaceAll(message.source, message.revision, message.records);
    else if (message.t === 'revisions') this.copy.applyRevisions(message.revisions);
    // Connected once the stream has said something: an upstream that accepts the call and then refuses
    // it (a revoked key) is never reported followed.
    this.publish({
      connected: true,
      problem: null,
      heardAt: Date.now(),
      revision: this.copy.replicaRevision(),
      holdsCopy: this.holdsCopy(),
      primary: message.primary ?? null,
    });
  }

  private holdsCopy(): boolean {
    return this.copy.replicaOf() !== undefined;
  }

  private publish(change: Partial<RelayStatus>): void {
    this.status = { ...this.status, ...change };
    this.report(this.status);
  }

  /** Waits `ms`, or less when the follower stops. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

function refusedText(url: string, why: string): string {
  return `the upstream ${url} refused this relay's key (${why.trim() || 'unauthenticated'}): it is wrong or was revoked there. The relay keeps serving what it holds and asks again every ${kRefusedRetryMs / 1000} s; a new key takes a restart with --upstream-token (FLAGWIRE_UPSTREAM_TOKEN)`;
}

function parseDiscovery(body: string): Discovery | null {
  try {
    const value = JSON.parse(body) as Partial<Discovery>;
    if (typeof value.syncPort !== 'number' || typeof value.source !== 'string' || typeof value.revision !== 'number') return null;
    return { syncPort: value.syncPort, source: value.source, revision: value.revision };
  } catch {
    return null;
  }
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message;
  return String(err);
}
