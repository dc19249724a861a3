// What the audit stream hands entries to (stream.ts): the JSON-lines file (file-sink.ts) and the syslog
// receiver (syslog-sink.ts). A sink says which entries it has accepted for good; the stream's cursor
// (cursor.ts) moves only to those, so whatever a sink had not accepted when it failed, or when the node
// stopped, is sent again from the cursor.
import type { StreamRecord } from './record.js';

export interface AuditSink {
  /** Its name in the logs and in its cursor's file name. */
  readonly name: string;
  /**
   * Opens it; where to go on from, given the cursor's `saved` position (a sink may know a later one).
   * `onLost`: called when it loses what it had not accepted (see lost), so a waiting stream sends it again.
   */
  open(saved: number, onLost: () => void): Promise<number>;
  /**
   * Hands it `records`, the entries after the last ones handed; resolves with the highest sequence
   * number now accepted for good (null: none more than before); rejects when the sink failed.
   */
  send(records: readonly StreamRecord[]): Promise<number | null>;
  /** With nothing more to send for a while: confirms what was sent, as `send` resolves; rejects when the sink failed. */
  settle(): Promise<number | null>;
  /** Whether it lost what it had not accepted since the last call (a connection closed under it): the stream sends it again. */
  lost(): boolean;
  /** Settles within `waitMs` at most, then closes; what settle resolves with, or null when it could not. */
  close(waitMs: number): Promise<number | null>;
}
