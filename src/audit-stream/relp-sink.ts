// The RELP sink (FLAGWIRE_AUDIT_SYSLOG=relp://): the syslog sink's RFC 5424 messages, each the data of a
// RELP `syslog` command (the Reliable Event Logging Protocol, librelp's doc/relp.md: rsyslog's imrelp),
// which the receiver answers once it took the message. The receiver answers in order, so an entry counts
// as accepted (the cursor may pass it) once it and every entry handed before it were answered 200. What
// was sent and not answered when a connection broke, or answered with another code, is sent again, and
// only that: an entry answered 200 is never sent again, though the stream hands it again after a failure.
// So a graceful restart of either end sends nothing twice when the receiver answers what it took before
// it closes (a stopping node waits, bounded, for the answer and sends `close`): with one command
// unanswered at a time, rsyslog does (kWindow says why not more); what a receiver took and never
// answered (it crashed) it gets again (docs/audit-stream.md, Delivery).
//
// A receiver that hangs holds the stream, never a write: at most kWindow messages wait unanswered, the
// rest stays in the store. Nothing times an answer out: a command sent again on a new connection would
// be taken twice if the hung receiver took the first; a dead peer is found by TCP keep-alive. Its answers
// are read into a buffer of a fixed size: a frame longer than an answer can be is refused, not read.
import { type Socket, connect } from 'node:net';
import { hostname } from 'node:os';
import { type StreamRecord, syslogMessage } from './record.js';
import type { AuditSink } from './sink.js';

/**
 * Entries sent past `accepted`, at most (unanswered, or answered after one that was not): one, so each
 * command waits for the answer to the one before. With more, a stopping rsyslog writes messages whose
 * answers never leave it: librelp's socket keeps Nagle's algorithm, so answers after the first wait in
 * its send queue for our acknowledgement, and it closes with our next commands unread, which makes the
 * kernel reset the connection and drop that queue (docs/decisions.md, issue 97 item 6). With one, its
 * answer leaves at once and nothing of ours is unread when it closes: the connection ends with FIN.
 */
export const kWindow = 1;
const kKeepAliveMs = 30_000;
/** RELP's transaction numbers run from 1 to this, then start at 1 again; 0 is the server's hints'. */
const kMaxTxnr = 999_999_999;
/** The open command's offers: the protocol version librelp speaks, and the one command this sink uses. */
const kOffers = 'relp_version=0\nrelp_software=flagwire\ncommands=syslog';
/** The longest frame header: 9 digits, a command of 32 letters, 9 digits, their spaces. */
const kMaxHeader = 53;
/**
 * The most DATA a receiver's frame may declare: an answer is a status line (the answer to open adds its
 * offers). A longer one is not RELP as this sink speaks it, and is refused before it is read.
 */
export const kMaxAnswerData = 64 * 1024;
/** The longest whole frame the sink takes: header, DATA and the closing LF. */
const kMaxFrame = kMaxHeader + 1 + kMaxAnswerData + 1;

/** An entry handed to the sink and not yet below `accepted`. */
interface Entry {
  seq: number;
  state: 'sent' | 'accepted' | 'unsent';
}

interface Frame {
  txnr: number;
  command: string;
  data: Buffer;
}

/** One connection: its transaction numbers, and the commands it sent that are not answered yet, oldest first. */
class Connection {
  private txnr = 0;
  readonly unanswered: { txnr: number; entry: Entry | null }[] = [];
  /** Whether the receiver answered open, offering the syslog command. */
  ready = false;
  ended = false;
  /** The socket's first error, as the reason it ended. */
  error: Error | null = null;
  /**
   * What was read and not yet parsed: `held[start, end)`, at most one frame's worth. Fixed, and twice a
   * frame, so a chunk is copied in once and the part of a frame kept is moved at most once per frame.
   */
  readonly held = Buffer.allocUnsafe(2 * kMaxFrame);
  start = 0;
  end = 0;
  /** Settles at the answer to open, or when the connection ended before it. */
  readonly opened: Promise<void>;
  openAnswered: (err: Error | null) => void = () => {};

  constructor(readonly socket: Socket) {
    this.opened = new Promise((resolve, reject) => (this.openAnswered = (err) => (err === null ? resolve() : reject(err))));
    this.opened.catch(() => {});
  }

  /** The frame of the next command, counted as unanswered. */
  command(command: string, data: Buffer, entry: Entry | null): Buffer {
    this.txnr = this.txnr === kMaxTxnr ? 1 : this.txnr + 1;
    this.unanswered.push({ txnr: this.txnr, entry });
    return frame(this.txnr, command, data);
  }

  /** Resolves once the bytes were handed to the system. */
  write(frames: readonly Buffer[]): Promise<void> {
    if (frames.length === 0) return Promise.resolve();
    const bytes = Buffer.concat(frames);
    return new Promise((resolve, reject) => this.socket.write(bytes, (err) => (err ? reject(err) : resolve())));
  }
}

export class RelpSink implements AuditSink {
  // The plain-TCP sink's cursor: a receiver switched to RELP goes on where it was.
  readonly name = 'syslog';
  private readonly hostname = hostname();
  private conn: Connection | null = null;
  /** The receiver accepted every entry up to here. */
  private accepted = 0;
  /** The entries handed after `accepted`, lowest first, each once; and the same by sequence number. */
  private readonly entries: Entry[] = [];
  private readonly bySeq = new Map<number, Entry>();
  /** A refusal not yet reported by send or settle. */
  private refused: Error | null = null;
  private wasLost = false;
  private closing = false;
  private onLost: () => void = () => {};
  /** Resolved, and replaced, at each answer and lost connection: what a waiting call waits on. */
  private changed = signal();

  constructor(private readonly address: { host: string; port: number }) {}

  async open(saved: number, onLost: () => void): Promise<number> {
    this.onLost = onLost;
    this.accepted = saved;
    return saved;
  }

  async send(records: readonly StreamRecord[]): Promise<number | null> {
    this.throwRefused();
    const conn = await this.connection();
    let frames: Buffer[] = [];
    for (const record of records) {
      if (record.seq <= this.accepted) continue;
      let entry = this.bySeq.get(record.seq);
      // Sent and not answered yet, or accepted past an entry that was not: not again.
      if (entry !== undefined && entry.state !== 'unsent') continue;
      if (entry === undefined && this.entries.length >= kWindow) {
        await conn.write(frames);
        frames = [];
        while (this.entries.length >= kWindow && !this.closing) await this.waitChange(conn);
      }
      if (this.closing) break;
      this.throwEnded(conn);
      entry ??= this.track(record.seq);
      entry.state = 'sent';
      frames.push(conn.command('syslog', Buffer.from(syslogMessage(record, this.hostname, process.pid), 'utf8'), entry));
    }
    await conn.write(frames);
    return this.accepted;
  }

  async settle(): Promise<number | null> {
    const conn = this.conn;
    while (conn !== null && conn.unanswered.length > 0) await this.waitChange(conn);
    this.throwRefused();
    return this.accepted;
  }

  lost(): boolean {
    const lost = this.wasLost;
    this.wasLost = false;
    return lost;
  }

  async close(waitMs: number): Promise<number | null> {
    this.closing = true;
    this.wake();
    const conn = this.conn;
    if (conn !== null) {
      const answered = async () => {
        if (!conn.ready) return;
        while (!conn.ended && conn.unanswered.length > 0) await this.changed.promise;
        if (conn.ended) return;
        // Answered after every command before it; the receiver then closes its side.
        await conn.write([conn.command('close', Buffer.alloc(0), null)]);
        while (!conn.ended && conn.unanswered.length > 0) await this.changed.promise;
      };
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([answered().catch(() => {}), new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
      conn.socket.destroy();
    }
    return this.accepted;
  }

  private track(seq: number): Entry {
    const entry: Entry = { seq, state: 'unsent' };
    // Handed in order, but kept sorted should the store list a lower one late.
    let at = this.entries.length;
    while (at > 0 && this.entries[at - 1]!.seq > seq) at -= 1;
    this.entries.splice(at, 0, entry);
    this.bySeq.set(seq, entry);
    return entry;
  }

  /** Waits for the next answer or loss on `conn`; rejects when it ended or the receiver refused an entry. */
  private async waitChange(conn: Connection): Promise<void> {
    this.throwEnded(conn);
    this.throwRefused();
    await this.changed.promise;
    this.throwEnded(conn);
    this.throwRefused();
  }

  /** When `conn` ended: why, the receiver's refusal first. */
  private throwEnded(conn: Connection): void {
    if (!conn.ended) return;
    this.throwRefused();
    throw kEnded();
  }

  private throwRefused(): void {
    const refused = this.refused;
    this.refused = null;
    if (refused !== null) throw refused;
  }

  private wake(): void {
    this.changed.resolve();
    this.changed = signal();
  }

  /** The open session, or a new one: connects and opens it. */
  private async connection(): Promise<Connection> {
    if (this.conn?.ready) return this.conn;
    this.conn?.socket.destroy();
    const socket = connect({ host: this.address.host, port: this.address.port, keepAlive: true, keepAliveInitialDelay: kKeepAliveMs });
    socket.setNoDelay(true);
    // Known before it is open, so a stopping node can end a connection a receiver leaves hanging.
    const conn = new Connection(socket);
    this.conn = conn;
    socket.on('error', (err) => (conn.error ??= err));
    socket.on('data', (chunk: Buffer) => this.read(conn, chunk));
    socket.once('close', () => this.ended(conn));
    socket.once('connect', () => void conn.write([conn.command('open', Buffer.from(kOffers, 'ascii'), null)]).catch(() => {}));
    await conn.opened;
    return conn;
  }

  private read(conn: Connection, chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length && !conn.socket.destroyed) {
      if (conn.end === conn.held.length) {
        // Full: what is kept is less than a frame, so moving it down leaves room for the rest of it.
        conn.held.copyWithin(0, conn.start, conn.end);
        conn.end -= conn.start;
        conn.start = 0;
      }
      const copied = chunk.copy(conn.held, conn.end, at);
      at += copied;
      conn.end += copied;
      while (!conn.socket.destroyed) {
        const parsed = nextFrame(conn.held.subarray(conn.start, conn.end));
        if (parsed === null) break;
        if (typeof parsed === 'string') return this.notRelp(conn, parsed);
        conn.start += parsed.size;
        this.answer(conn, parsed.frame);
      }
      if (conn.start === conn.end) conn.start = conn.end = 0;
    }
  }

  /** Closes a connection whose peer sent what an answer cannot be; the stream backs off before it tries again. */
  private notRelp(conn: Connection, why: string): void {
    const err = new Error(`the receiver at ${this.address.host}:${this.address.port} is not speaking RELP: ${why}`);
    conn.error ??= err;
    // Before the answer to open, connecting fails with it; after, the next send or settle does.
    if (conn.ready) this.refused ??= err;
    conn.socket.destroy();
  }

  private answer(conn: Connection, { txnr, command, data }: Frame): void {
    // The receiver's hint that it closes the connection: everything it answered came before it.
    if (txnr === 0) return void (command === 'serverclose' && conn.socket.destroy());
    const head = conn.unanswered[0];
    if (command !== 'rsp' || head === undefined || head.txnr !== txnr) {
      return this.notRelp(conn, `${command} ${txnr}, where the answer to ${head?.txnr ?? 'nothing'} was due`);
    }
    conn.unanswered.shift();
    const text = data.toString('utf8');
    const ok = text.startsWith('200');
    if (!conn.ready) {
      // The answer to open: the receiver must offer the syslog command.
      conn.ready = ok && /(^|\n)commands=([^\n]*,)?syslog(,|\n|$)/.test(text);
      conn.openAnswered(conn.ready ? null : new Error(`the RELP receiver refused the session: ${text.split('\n')[0]}`));
      if (!conn.ready) conn.socket.destroy();
      return;
    }
    if (head.entry !== null && ok) {
      head.entry.state = 'accepted';
      this.advance();
    } else if (head.entry !== null) {
      // Not taken: sent again when the stream hands it again, after the refusal made it back off.
      head.entry.state = 'unsent';
      this.refused = new Error(`the RELP receiver refused entry ${head.entry.seq}: ${text.split('\n')[0]}`);
      this.onLost();
    }
    this.wake();
  }

  /** Moves `accepted` over the leading entries the receiver accepted. */
  private advance(): void {
    let n = 0;
    while (n < this.entries.length && this.entries[n]!.state === 'accepted') {
      this.accepted = this.entries[n]!.seq;
      this.bySeq.delete(this.accepted);
      n += 1;
    }
    if (n > 0) this.entries.splice(0, n);
  }

  private ended(conn: Connection): void {
    conn.ended = true;
    if (this.conn === conn) this.conn = null;
    conn.openAnswered(conn.error ?? new Error('the RELP receiver closed the connection before it answered open'));
    let lost = false;
    for (const { entry } of conn.unanswered) {
      if (entry === null) continue;
      entry.state = 'unsent';
      lost = true;
    }
    conn.unanswered.length = 0;
    if (lost) {
      this.wasLost = true;
      this.onLost();
    }
    this.wake();
  }
}

const kEnded = () => new Error('the RELP receiver closed the connection before it answered what was sent');

function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** `TXNR SP COMMAND SP DATALEN [SP DATA] LF`. */
function frame(txnr: number, command: string, data: Buffer): Buffer {
  const header = Buffer.from(data.length > 0 ? `${txnr} ${command} ${data.length} ` : `${txnr} ${command} 0`, 'ascii');
  return Buffer.concat([header, data, Buffer.from('\n', 'ascii')]);
}

/**
 * The first whole frame of `buffered` and its size; null: not whole yet; a string: why it is not RELP.
 * The frame's data is a view of `buffered`, valid until more is read.
 */
function nextFrame(buffered: Buffer): { frame: Frame; size: number } | null | string {
  const head = /^(\d{1,9}) ([A-Za-z]{1,32}) (\d{1,9})([ \n])/.exec(buffered.subarray(0, kMaxHeader + 1).toString('latin1'));
  if (head === null) return buffered.length > kMaxHeader ? 'a frame without a RELP header' : null;
  const [whole, txnr, command, length, after] = head as unknown as [string, string, string, string, string];
  const dataLength = Number(length);
  if (dataLength > kMaxAnswerData) return `a frame of ${dataLength} bytes of data, above the ${kMaxAnswerData} an answer may have`;
  if (after === '\n') {
    return dataLength === 0
      ? { frame: { txnr: Number(txnr), command: command!, data: Buffer.alloc(0) }, size: whole.length }
      : 'a frame whose data is missing';
  }
  const end = whole.length + dataLength;
  if (buffered.length <= end) return null;
  if (buffered[end] !== 0x0a) return 'a frame not ended by LF';
  return { frame: { txnr: Number(txnr), command, data: buffered.subarray(whole.length, end) }, size: end + 1 };
}
