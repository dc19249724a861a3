// The syslog sink: RFC 5424 messages in octet-counting frames (RFC 6587) over TCP. Plain TCP says
// nothing of what the receiver took: bytes written may still sit in the sockets' buffers when the
// receiver dies. So an entry counts as accepted only once its connection was closed cleanly: this end
// half-closes it, the receiver reads everything sent before the end of the stream, and only then closes
// its side. The sink closes its connection so (and opens a new one for what follows) after kConfirmBytes,
// when the stream has nothing to send for a while, and when the node stops. A connection that ends any
// other way (the receiver restarted, a reset) loses only what was sent since the last clean close: the
// stream sends that again, and the receiver drops what it already had by the records' ids. At least once.
//
// A receiver that hangs holds the stream, never a write: a write waits in its socket's buffers (and one
// batch in memory), the rest stays in the store until the receiver reads again. Nothing times it out:
// sending again into a hung receiver's buffers would only deliver it twice; a dead peer is found by TCP
// keep-alive.
import { hostname } from 'node:os';
import { type Socket, connect } from 'node:net';
import { octetCounted, type StreamRecord, syslogMessage } from './record.js';
import type { AuditSink } from './sink.js';

/** Bytes sent on one connection before it is closed cleanly to confirm them (what a receiver's restart may make it receive twice). */
export const kConfirmBytes = 1024 * 1024;
const kKeepAliveMs = 30_000;

export class SyslogSink implements AuditSink {
  readonly name = 'syslog';
  private readonly hostname = hostname();
  private socket: Socket | null = null;
  /** The connection's end: settles when it closed, with whether it closed cleanly. */
  private closed: Promise<boolean> | null = null;
  /** The last entry written on the connection, and the bytes written on it. */
  private lastWritten: number | null = null;
  private bytes = 0;
  private wasLost = false;
  /** The connection this end is closing to confirm what was sent on it (settle). */
  private ending: Socket | null = null;

  private onLost: () => void = () => {};

  constructor(private readonly address: { host: string; port: number }) {}

  async open(saved: number, onLost: () => void): Promise<number> {
    this.onLost = onLost;
    return saved;
  }

  async send(records: readonly StreamRecord[]): Promise<number | null> {
    const socket = this.socket ?? (await this.connect());
    const frames = Buffer.concat(records.map((r) => octetCounted(syslogMessage(r, this.hostname, process.pid))));
    await new Promise<void>((resolve, reject) => socket.write(frames, (err) => (err ? reject(err) : resolve())));
    this.lastWritten = records.at(-1)?.seq ?? this.lastWritten;
    this.bytes += frames.length;
    return this.bytes >= kConfirmBytes ? this.settle() : null;
  }

  async settle(): Promise<number | null> {
    const socket = this.socket;
    if (socket === null || this.lastWritten === null) return null;
    const confirmed = this.lastWritten;
    this.ending = socket;
    socket.end();
    if (!(await this.closed)) throw new Error('the syslog receiver closed the connection before it confirmed what was sent');
    return confirmed;
  }

  lost(): boolean {
    const lost = this.wasLost;
    this.wasLost = false;
    return lost;
  }

  async close(waitMs: number): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    const settled = await Promise.race([
      this.settle().catch(() => null),
      new Promise<null>((resolve) => (timer = setTimeout(resolve, waitMs, null))),
    ]);
    clearTimeout(timer);
    this.socket?.destroy();
    return settled;
  }

  private async connect(): Promise<Socket> {
    const socket = connect({ host: this.address.host, port: this.address.port, keepAlive: true, keepAliveInitialDelay: kKeepAliveMs });
    socket.setNoDelay(true);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    // What the receiver says is not read (syslog answers nothing); its end of the stream is waited for.
    socket.resume();
    this.socket = socket;
    this.lastWritten = null;
    this.bytes = 0;
    // Clean only when this end ended first: a receiver that ends first may not have read what was still
    // on its way (Node ends this side at once, so writableEnded cannot tell).
    let clean = false;
    socket.on('end', () => (clean = this.ending === socket));
    socket.on('error', () => {});
    this.closed = new Promise<boolean>((resolve) =>
      socket.once('close', (hadError) => {
        if (this.socket === socket) this.socket = null;
        const ok = clean && !hadError;
        if (!ok && this.lastWritten !== null) {
          this.wasLost = true;
          this.onLost();
        }
        resolve(ok);
      }),
    );
    return socket;
  }
}
