// The node's gRPC server (the sync port: flagd's sync service and the services capabilities host beside
// it, src/capability/grpc-service.ts), gRPC over HTTP/2 spoken on node:http2 for the two kinds of method
// Flagwire serves: unary, and a server stream after one request. Not @grpc/grpc-js's server, because it
// frames every message it sends into a copy of its own (serializeMessage: 5 bytes and the message, per
// call): a 300 KB flag set written to 1,000 readers that do not read was 1,000 copies held in HTTP/2's
// queues (issue 55, item 2). Here a message is framed once (frameMessage, grpc-frame.ts) and the same
// Buffer is queued on every call that is sent it; node:http2 sends a Buffer without copying it.
//
// Bounded, whatever clients do:
//   - calls: at most `maxCalls` at once, every call counted (streams and unary calls alike, from their
//     headers to their end); one more is refused RESOURCE_EXHAUSTED at once, never queued;
//   - bytes: what the calls' readers have not taken yet. Each distinct Buffer queued on a call is counted
//     once while any call holds it unwritten (`heldBytes`); past `maxHeldBytes` the calls that have
//     waited longest for their readers are cut (RST_STREAM ENHANCE_YOUR_CALM: RESOURCE_EXHAUSTED to a
//     gRPC client) until the held bytes are back under;
//   - a request: one message of at most kMaxRequestBytes;
//   - a peer that stops answering HTTP/2 pings: its connection is dropped (its calls end).
import http2 from 'node:http2';
import zlib from 'node:zlib';
import { ConfigError } from '../config.js';
import { listenAddress, type PortNaming, portInUse } from '../port-setting.js';

/** gRPC's status codes that Flagwire answers (grpc/doc/statuscodes.md). */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;
export type GrpcStatusCode = (typeof GrpcStatus)[keyof typeof GrpcStatus];

/** A request is a selector and a provider id, or a relay's source and revision: nothing larger is read. */
const kMaxRequestBytes = 16 * 1024;
/** A dead peer (a killed client, a dropped network) is found within a minute and a half, and its calls freed. */
const kPingEveryMs = 60_000;
const kPingTimeoutMs = 20_000;
/** At shutdown, what the connections get to close by themselves before they are cut. */
const kCloseGraceMs = 1000;

/** One call as its method's handler sees it. */
export interface GrpcCall {
  /** The request message, unframed. */
  readonly request: Buffer;
  /** The peer's address (what the per-address lockout counts). */
  readonly peer: string;
  /** The call's method path (`/package.Service/Method`). */
  readonly path: string;
  /** Whether it has ended: answered, refused, cancelled by the client, its connection gone. */
  readonly ended: boolean;
  /** The first value of the request's metadata `key`, trimmed; '' when absent. */
  metadata(key: string): string;
  /**
   * Queues one message framed by frameMessage (the same Buffer may be queued on many calls: it is held
   * once); `written` when the reader has taken it (never, if the call ends first).
   */
  write(framed: Buffer, written: () => void): void;
  /** Queues one message and ends the call OK (a unary answer). */
  reply(framed: Buffer): void;
  /** Ends the call with `code` (OK included) after what was queued. */
  end(code: GrpcStatusCode, details: string): void;
  /** `listener` hears the call's end once, whatever ended it. */
  onEnd(listener: () => void): void;
}

export type GrpcHandler = (call: GrpcCall) => void;

export interface GrpcServerOptions {
  maxCalls: number;
  /** The refusal's text when `maxCalls` are open. */
  busyMessage: string;
  maxHeldBytes: number;
  /** How a port that cannot be bound is named, and what to do about it. */
  port: PortNaming;
  onError(err: unknown): void;
}

export class GrpcServer {
  private readonly server: http2.Http2Server;
  private readonly handlers = new Map<string, GrpcHandler>();
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  private open = 0;
  private closing = false;
  /** Each Buffer queued and not yet taken by some reader: how many calls hold it. */
  private readonly held = new Map<Buffer, number>();
  private heldTotal = 0;
  /** The calls with a write not yet taken, the longest waiting first (a Set keeps insertion order). */
  private readonly waiting = new Set<Call>();

  constructor(private readonly options: GrpcServerOptions) {
    this.server = http2.createServer({
      // Bounded by the calls' cap and the held bytes (above): HTTP/2's own per-connection budget would
      // count a Buffer shared by 100 calls 100 times and refuse streams of a connection that holds little.
      maxSessionMemory: Number.MAX_SAFE_INTEGER,
      settings: { maxHeaderListSize: 16 * 1024 },
    });
    this.server.on('session', (session) => this.session(session));
    this.server.on('stream', (stream, headers) => this.stream(stream, headers));
  }

  /** Serves `handler` at `path` (`/package.Service/Method`); before listen. */
  handle(path: string, handler: GrpcHandler): void {
    this.handlers.set(path, handler);
  }

  /** Calls open now, every method's. */
  get calls(): number {
    return this.open;
  }

  /** Bytes queued on calls that their readers have not taken, each Buffer counted once. */
  get heldBytes(): number {
    return this.heldTotal;
  }

  /** Binds `host:port` (a port that cannot be bound is a ConfigError naming the setting); resolves with the port bound. */
  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const failed = (err: NodeJS.ErrnoException) => {
        const { port: named } = this.options;
        reject(
          err.code === 'EADDRINUSE'
            ? portInUse(named, host, port)
            : new ConfigError(
                named.setting,
                `${listenAddress(host, port)} cannot be bound (${err.code ?? err.message}); ${named.whenTaken}`,
              ),
        );
      };
      this.server.once('error', failed);
      this.server.listen({ host, port, exclusive: true }, () => {
        this.server.off('error', failed);
        this.server.on('error', (err) => this.options.onError(err));
        const bound = this.server.address();
        resolve(typeof bound === 'object' && bound !== null ? bound.port : port);
      });
    });
  }

  /** Refuses new calls, lets the connections close (GOAWAY) for a moment, then cuts them. */
  async close(): Promise<void> {
    this.closing = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const session of this.sessions) session.close();
    const grace = setTimeout(() => {
      for (const session of this.sessions) session.destroy();
    }, kCloseGraceMs);
    await closed;
    clearTimeout(grace);
  }

  private session(session: http2.ServerHttp2Session): void {
    this.sessions.add(session);
    let pinging = false;
    const pings = setInterval(() => {
      if (pinging || session.destroyed) return;
      pinging = true;
      const timeout = setTimeout(() => session.destroy(), kPingTimeoutMs);
      const sent = session.ping((err) => {
        pinging = false;
        clearTimeout(timeout);
        if (err) session.destroy();
      });
      if (!sent) {
        pinging = false;
        clearTimeout(timeout);
      }
    }, kPingEveryMs);
    pings.unref();
    session.on('error', () => undefined);
    session.once('close', () => {
      clearInterval(pings);
      this.sessions.delete(session);
    });
  }

  private stream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void {
    stream.on('error', () => undefined);
    const contentType = headers['content-type'] ?? '';
    if (headers[':method'] !== 'POST' || !contentType.startsWith('application/grpc')) {
      stream.respond({ ':status': 415 }, { endStream: true });
      return;
    }
    const path = headers[':path'] ?? '';
    const handler = this.handlers.get(path);
    if (handler === undefined) {
      trailersOnly(stream, GrpcStatus.UNIMPLEMENTED, `${path} is not a method of this server`);
      return;
    }
    if (this.closing) {
      trailersOnly(stream, GrpcStatus.UNAVAILABLE, 'Flagwire is shutting down; reconnect to another node or retry.');
      return;
    }
    if (this.open >= this.options.maxCalls) {
      trailersOnly(stream, GrpcStatus.RESOURCE_EXHAUSTED, this.options.busyMessage);
      return;
    }
    this.open++;
    const call = new Call(this, stream, headers, path);
    stream.once('close', () => {
      this.open--;
      call.closed();
    });
    const deadline = timeoutMs(headers['grpc-timeout']);
    if (deadline !== null) {
      const timer = setTimeout(() => call.end(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded'), deadline);
      call.onEnd(() => clearTimeout(timer));
    }
    readRequest(stream, headers['grpc-encoding']).then(
      (request) => {
        if (call.ended) return;
        if (typeof request === 'string') {
          call.end(GrpcStatus.RESOURCE_EXHAUSTED, request);
          return;
        }
        call.request = request;
        try {
          handler(call);
        } catch (err) {
          this.options.onError(err);
          call.end(GrpcStatus.INTERNAL, 'Internal error');
        }
      },
      () => call.end(GrpcStatus.CANCELLED, 'The request was not read'),
    );
  }

  /** `call` queued `framed`. */
  hold(call: Call, framed: Buffer): void {
    const count = this.held.get(framed) ?? 0;
    this.held.set(framed, count + 1);
    if (count === 0) this.heldTotal += framed.length;
    if (!this.waiting.has(call)) this.waiting.add(call);
    if (this.heldTotal > this.options.maxHeldBytes) this.shed();
  }

  /** `call`'s reader took `framed`, or the call ended with it unwritten. */
  release(call: Call, framed: Buffer): void {
    const count = this.held.get(framed) ?? 0;
    if (count <= 1) {
      if (this.held.delete(framed)) this.heldTotal -= framed.length;
    } else this.held.set(framed, count - 1);
    if (!call.holding()) this.waiting.delete(call);
  }

  /** Ends the calls that have waited longest for their readers until the held bytes are under the bound. */
  private shed(): void {
    for (const call of this.waiting) {
      if (this.heldTotal <= this.options.maxHeldBytes) return;
      call.cut();
    }
  }
}

/** One call: its HTTP/2 stream, its request, what it holds unwritten. */
class Call implements GrpcCall {
  request: Buffer = Buffer.alloc(0);
  ended = false;
  readonly peer: string;
  private readonly listeners: (() => void)[] = [];
  /** The Buffers queued on the stream whose writes have not completed. */
  private readonly unwritten: Buffer[] = [];
  private responded = false;
  private status: { code: GrpcStatusCode; details: string } | null = null;

  constructor(
    private readonly server: GrpcServer,
    private readonly stream: http2.ServerHttp2Stream,
    private readonly headers: http2.IncomingHttpHeaders,
    readonly path: string,
  ) {
    this.peer = stream.session?.socket?.remoteAddress ?? '';
  }

  metadata(key: string): string {
    const value = this.headers[key];
    const first = Array.isArray(value) ? value[0] : value;
    return typeof first === 'string' ? first.trim() : '';
  }

  holding(): boolean {
    return this.unwritten.length > 0;
  }

  write(framed: Buffer, written: () => void): void {
    if (this.ended) return;
    this.respond();
    this.unwritten.push(framed);
    this.server.hold(this, framed);
    this.stream.write(framed, (err) => {
      if (!this.take(framed)) return;
      if (err === null || err === undefined) written();
    });
  }

  reply(framed: Buffer): void {
    this.write(framed, () => undefined);
    this.end(GrpcStatus.OK, '');
  }

  end(code: GrpcStatusCode, details: string): void {
    if (this.ended) return;
    if (this.stream.destroyed || this.stream.closed) {
      this.closed();
      return;
    }
    this.finish();
    if (!this.responded) {
      this.responded = true;
      trailersOnly(this.stream, code, details);
      return;
    }
    // The trailers follow what was queued (wantTrailers); the call is no longer served from now on.
    this.status = { code, details };
    this.stream.end();
  }

  /**
   * Ends it at once, dropping what its reader has not taken (RST_STREAM ENHANCE_YOUR_CALM, which gRPC
   * clients report as RESOURCE_EXHAUSTED): trailers would wait behind the unread data.
   */
  cut(): void {
    if (!this.stream.destroyed && !this.stream.closed) this.stream.close(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
    this.closed();
  }

  onEnd(listener: () => void): void {
    if (this.ended) listener();
    else this.listeners.push(listener);
  }

  /** The stream closed: whatever it held is let go. */
  closed(): void {
    for (const framed of this.unwritten.splice(0)) this.server.release(this, framed);
    this.finish();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    for (const listener of this.listeners.splice(0)) listener();
  }

  /** `framed`'s write completed: returns whether it was still counted (false after the stream closed). */
  private take(framed: Buffer): boolean {
    const at = this.unwritten.indexOf(framed);
    if (at === -1) return false;
    this.unwritten.splice(at, 1);
    this.server.release(this, framed);
    return true;
  }

  private respond(): void {
    if (this.responded) return;
    this.responded = true;
    this.stream.respond(
      { ':status': 200, 'content-type': 'application/grpc+proto', 'grpc-accept-encoding': 'identity,deflate,gzip' },
      {
        waitForTrailers: true,
      },
    );
    this.stream.once('wantTrailers', () => {
      const status = this.status ?? { code: GrpcStatus.OK, details: '' };
      this.stream.sendTrailers(statusHeaders(status.code, status.details));
    });
  }
}

/** A call answered by its status alone (no message): one HEADERS frame that ends the stream. */
function trailersOnly(stream: http2.ServerHttp2Stream, code: GrpcStatusCode, details: string): void {
  if (stream.headersSent || stream.destroyed) return;
  stream.respond({ ':status': 200, 'content-type': 'application/grpc+proto', ...statusHeaders(code, details) }, { endStream: true });
}

function statusHeaders(code: GrpcStatusCode, details: string): http2.OutgoingHttpHeaders {
  return details === '' ? { 'grpc-status': String(code) } : { 'grpc-status': String(code), 'grpc-message': percentEncoded(details) };
}

/** grpc-message's encoding (gRPC over HTTP/2): every byte outside printable ASCII, and `%`, as %XX. */
function percentEncoded(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** grpc-timeout (`1500m`, `10S`, ...) in milliseconds; null when absent or not one. */
function timeoutMs(value: string | string[] | undefined): number | null {
  const match = typeof value === 'string' ? /^(\d{1,8})([HMSmun])$/.exec(value) : null;
  if (match === null) return null;
  const unitMs = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 }[match[2] as 'H' | 'M' | 'S' | 'm' | 'u' | 'n'];
  return Math.min(2 ** 31 - 1, Math.ceil(Number(match[1]) * unitMs));
}

/**
 * The call's one request message, unframed (and inflated when the client compressed it); a string says
 * why it cannot be read. At most kMaxRequestBytes are read, framed or inflated.
 */
function readRequest(stream: http2.ServerHttp2Stream, encoding: string | string[] | undefined): Promise<Buffer | string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > kMaxRequestBytes + 5) {
        stream.removeAllListeners('data');
        resolve(`The request is larger than ${kMaxRequestBytes} bytes.`);
        return;
      }
      chunks.push(chunk);
    });
    stream.once('end', () => {
      const body = Buffer.concat(chunks);
      if (body.length < 5 || body.readUInt32BE(1) !== body.length - 5) {
        resolve('The request is not one length-prefixed gRPC message.');
        return;
      }
      const message = body.subarray(5);
      if (body[0] === 0) {
        resolve(message);
        return;
      }
      try {
        const options = { maxOutputLength: kMaxRequestBytes };
        if (encoding === 'gzip') resolve(zlib.gunzipSync(message, options));
        else if (encoding === 'deflate') resolve(zlib.inflateSync(message, options));
        else resolve(`The request is compressed with ${String(encoding)}, which this server does not read.`);
      } catch {
        resolve(`The request, inflated, is not a message of at most ${kMaxRequestBytes} bytes.`);
      }
    });
    stream.once('aborted', () => reject(new Error('aborted')));
  });
}
