// The bodies of the sends a node's deliverer runs, as the bytes sent. A change goes to each webhook of
// its project that subscribes (up to kMaxWebhooks), and their sends of it run at about the same time;
// reading the change's payload (every body of the change, up to a flag's size in each format: a new
// string each time) and encoding it at each send cost the main thread, which serves requests, as much
// again per webhook. So the first send of a body reads it and encodes it once, the sends beside it share
// those bytes, and the last one to end lets them go: a node holds only bodies that sends are using, one
// copy each.
import type { SnapshotReader } from '../store/interfaces.js';
import type { Webhook } from './webhook.js';
import { getPayload } from './records.js';

export class SentBodies {
  /** By change and format: the body's bytes and how many running sends use them. */
  private readonly held = new Map<string, { bytes: Buffer; sends: number }>();

  constructor(private readonly store: SnapshotReader) {}

  /**
   * The body of change `auditSeq` in `format`, held until `release` is called with the same arguments;
   * null (and nothing held) when the store no longer keeps it.
   */
  take(auditSeq: number, format: Webhook['format']): Buffer | null {
    const key = `${auditSeq} ${format}`;
    const held = this.held.get(key);
    if (held !== undefined) {
      held.sends++;
      return held.bytes;
    }
    const body = getPayload(this.store, auditSeq)?.bodies[format];
    if (body === undefined) return null;
    const bytes = Buffer.from(body);
    this.held.set(key, { bytes, sends: 1 });
    return bytes;
  }

  release(auditSeq: number, format: Webhook['format']): void {
    const key = `${auditSeq} ${format}`;
    const held = this.held.get(key);
    if (held !== undefined && --held.sends === 0) this.held.delete(key);
  }
}
