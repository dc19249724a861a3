// The sending side of usage reports (src/usage-reports/routes.ts), shared by Flagwire's OpenFeature provider
// (usage-reporter.ts) and a relay (src/relay/usage-forwarder.ts): counts are cut into batches,
// each under an id of its own, kept until the server answers it and sent again (in order, one at a time)
// until then, to whichever node answers: the server counts an id once, so a batch sent twice (an answer
// lost with the connection, a node killed after its commit) is counted once. Bounded: at most
// `maxPendingBatches` wait; past that the oldest is dropped and its evaluations counted as dropped, as is a
// batch the server refuses (a 4xx other than 408 and 429: sending it again would not help) or one older
// than kGiveUpMs. Imports nothing of Node's but fetch and crypto's UUIDs (the provider's bundle takes it).

/** One count as a report carries it (src/usage-reports/report.ts UsageReport's entries). */
export interface UsageEntry {
  flag: string;
  variant?: string;
  /** The environment evaluated, a relay's (the provider names its own with ?env=). */
  env?: string;
  evaluations: number;
  lastEvaluatedAt: number;
}

/** Entries one batch carries at most: what the server allows (src/usage-reports/report.ts). */
export const kMaxBatchEntries = 10_000;
/** A batch unanswered this long is dropped: the server forgets a counted id a day after (src/usage-reports/usage-report-commands.ts kBatchIdKeepMs). */
export const kGiveUpMs = 12 * 3600 * 1000;

export interface UsageBatchSenderOptions {
  /** The report route's full URL. */
  url: string;
  /** The Authorization header's value. */
  authorization: string;
  maxPendingBatches: number;
  /** How long one request may take. */
  timeoutMs: number;
  /** Told of evaluations dropped (counted, never sent), with why. */
  onDropped(evaluations: number, why: string): void;
}

interface PendingBatch {
  readonly body: string;
  readonly evaluations: number;
  readonly madeAt: number;
}

export class UsageBatchSender {
  private readonly pending: PendingBatch[] = [];
  private sending: Promise<boolean> | null = null;

  constructor(private readonly options: UsageBatchSenderOptions) {}

  /** Batches waiting for the server's answer. */
  get pendingBatches(): number {
    return this.pending.length;
  }

  /** Drops every waiting batch (a sender that stops), its evaluations told to onDropped. */
  dropAll(why: string): void {
    for (const batch of this.pending.splice(0)) this.options.onDropped(batch.evaluations, why);
  }

  /** `entries` as batches of at most kMaxBatchEntries, each under a new id, queued to send. */
  add(entries: readonly UsageEntry[], now: number): void {
    for (let start = 0; start < entries.length; start += kMaxBatchEntries) {
      const counts = entries.slice(start, start + kMaxBatchEntries);
      let evaluations = 0;
      for (const entry of counts) evaluations += entry.evaluations;
      if (this.pending.length >= this.options.maxPendingBatches) {
        const oldest = this.pending.shift()!;
        this.options.onDropped(oldest.evaluations, `${this.options.maxPendingBatches} batches were waiting for the server`);
      }
      this.pending.push({ body: JSON.stringify({ batchId: crypto.randomUUID(), counts }), evaluations, madeAt: now });
    }
  }

  /**
   * Sends the waiting batches, oldest first, until one is not answered: true when none waits. Joins the
   * sending in progress, if any, and sends again after it when more wait.
   */
  async flush(now: number, signal?: AbortSignal): Promise<boolean> {
    while (this.sending !== null) await this.sending;
    if (this.pending.length === 0) return true;
    this.sending = this.sendAll(now, signal);
    try {
      return await this.sending;
    } finally {
      this.sending = null;
    }
  }

  private async sendAll(now: number, signal: AbortSignal | undefined): Promise<boolean> {
    while (this.pending.length > 0) {
      const batch = this.pending[0]!;
      if (now - batch.madeAt > kGiveUpMs) {
        this.pending.shift();
        this.options.onDropped(batch.evaluations, 'the server did not answer the batch for 12 hours');
        continue;
      }
      const outcome = await this.send(batch, signal);
      if (outcome === 'later') return false;
      this.pending.shift();
      if (outcome !== 'counted') this.options.onDropped(batch.evaluations, outcome);
    }
    return true;
  }

  /** 'counted' (answered: counted now or before), 'later' (not answered: send it again), or the refusal's words. */
  private async send(batch: PendingBatch, signal: AbortSignal | undefined): Promise<string> {
    let res: Response;
    try {
      const timeout = AbortSignal.timeout(this.options.timeoutMs);
      res = await fetch(this.options.url, {
        method: 'POST',
        headers: { authorization: this.options.authorization, 'content-type': 'application/json' },
        body: batch.body,
        signal: signal === undefined ? timeout : AbortSignal.any([signal, timeout]),
      });
      await res.arrayBuffer();
    } catch {
      return 'later';
    }
    if (res.ok) return 'counted';
    if (res.status >= 500 || res.status === 408 || res.status === 429) return 'later';
    return `the server refused the batch (${res.status})`;
  }
}
