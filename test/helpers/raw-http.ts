// A raw HTTP/1.1 client over one TCP connection, for requests fetch cannot send: raw bytes in the
// request line, duplicated or malformed headers, lying Content-Length, partial requests. It parses the
// response itself (Content-Length, chunked, or read-until-close), so a response that never completes
// is reported as a hang, and a connection closed without a response is reported as such (status 0).
import net from 'node:net';

export interface RawReply {
  /** 0 when the connection closed before a whole response arrived. */
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Map<string, string>;
  body: Buffer;
  /** The server closed the connection (after this response, or instead of one). */
  closed: boolean;
  ms: number;
}

export class HangError extends Error {}

export interface RawRequestOptions {
  /** Fail with HangError when no complete response arrives within this time (default 60 s: the bound only catches a hang). */
  timeoutMs?: number;
  /** The request is HEAD: the response has no body whatever its Content-Length says. */
  head?: boolean;
  /** Close the connection after this response (for requests that leave bytes unread on it). */
  closeAfter?: boolean;
}

/** Builds a request: `headers` are written as given (repeats and odd values allowed), CRLF line ends. */
export function rawRequest(
  method: string,
  target: string | Buffer,
  headers: readonly (readonly [string, string])[],
  body?: Buffer | string,
): Buffer {
  const head = Buffer.concat([
    Buffer.from(`${method} `, 'latin1'),
    typeof target === 'string' ? Buffer.from(target, 'latin1') : target,
    Buffer.from(` HTTP/1.1\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`, 'utf8'),
  ]);
  return body === undefined ? head : Buffer.concat([head, typeof body === 'string' ? Buffer.from(body) : body]);
}

interface Connection {
  socket: net.Socket;
  buffer: Buffer;
  ended: boolean;
  onChange: (() => void) | null;
}

export class RawClient {
  private conn: Connection | null = null;

  constructor(
    readonly port: number,
    readonly host = '127.0.0.1',
  ) {}

  private async connect(): Promise<Connection> {
    if (this.conn !== null && !this.conn.ended) return this.conn;
    this.close();
    const socket = net.connect(this.port, this.host);
    socket.setNoDelay(true);
    // State per socket: events of a closed earlier socket never touch the current one.
    const conn: Connection = { socket, buffer: Buffer.alloc(0), ended: false, onChange: null };
    socket.on('data', (chunk: Buffer) => {
      conn.buffer = conn.buffer.length === 0 ? chunk : Buffer.concat([conn.buffer, chunk]);
      conn.onChange?.();
    });
    const end = () => {
      conn.ended = true;
      conn.onChange?.();
    };
    socket.on('close', end);
    socket.on('error', end);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    this.conn = conn;
    return conn;
  }

  /** Sends `bytes` and resolves with the one response that follows (or the connection closing). */
  async request(bytes: Buffer, options: RawRequestOptions = {}): Promise<RawReply> {
    const started = performance.now();
    const conn = await this.connect();
    conn.buffer = Buffer.alloc(0);
    conn.socket.write(bytes);
    const timeoutMs = options.timeoutMs ?? 60_000;
    let reply: RawReply | null = null;
    try {
      reply = await new Promise<RawReply>((resolve, reject) => {
        const timer = setTimeout(() => {
          conn.onChange = null;
          reject(
            new HangError(
              `no complete response within ${timeoutMs} ms (got ${conn.buffer.length} bytes: ${JSON.stringify(conn.buffer.subarray(0, 120).toString('latin1'))})`,
            ),
          );
        }, timeoutMs);
        const check = () => {
          const parsed = parseResponse(conn.buffer, conn.ended, options.head ?? false);
          if (parsed === null) return;
          clearTimeout(timer);
          conn.onChange = null;
          resolve({ ...parsed, ms: performance.now() - started });
        };
        conn.onChange = check;
        check();
      });
      return reply;
    } finally {
      // A 413 is answered before the body is read: the server closes, or reads on to the body's declared
      // end (src/http/body.ts kDrainBytes). Never reuse that connection: a request written into it in
      // the meantime would be lost, or read as the rest of that body. Nor one whose answer said
      // `Connection: close` (RFC 9112 §9.6): its close may not have arrived yet.
      const reusable = reply !== null && reply.status !== 413 && !/\bclose\b/i.test(reply.headers.get('connection') ?? '');
      if (options.closeAfter || conn.ended || !reusable) this.close();
    }
  }

  close(): void {
    this.conn?.socket.destroy();
    this.conn = null;
  }
}

/** A complete response in `buf`, or null while more bytes are needed. `ended`: no more bytes will come. */
function parseResponse(buf: Buffer, ended: boolean, head: boolean): Omit<RawReply, 'ms'> | null {
  // Interim responses (100 Continue, answering "Expect: 100-continue") come before the real one.
  while (/^HTTP\/1\.[01] 1\d\d /.test(buf.subarray(0, 13).toString('latin1'))) {
    const end = buf.indexOf('\r\n\r\n');
    if (end === -1) return ended ? { status: 0, headers: new Map(), body: buf, closed: true } : null;
    buf = buf.subarray(end + 4);
  }
  const headerEnd = buf.indexOf('\r\n\r\n');
  if (headerEnd === -1) return ended ? { status: 0, headers: new Map(), body: buf, closed: true } : null;
  const lines = buf.subarray(0, headerEnd).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
  }
  const rest = buf.subarray(headerEnd + 4);
  const closing = (headers.get('connection') ?? '').toLowerCase() === 'close';
  if (head || status === 204 || status === 304) return { status, headers, body: Buffer.alloc(0), closed: ended || closing };
  const length = headers.get('content-length');
  if (length !== undefined) {
    const n = Number(length);
    if (rest.length >= n) return { status, headers, body: rest.subarray(0, n), closed: ended || closing };
    return ended ? { status: 0, headers, body: rest, closed: true } : null;
  }
  if ((headers.get('transfer-encoding') ?? '').toLowerCase().includes('chunked')) {
    const body = dechunk(rest);
    if (body !== null) return { status, headers, body, closed: ended || closing };
    return ended ? { status: 0, headers, body: rest, closed: true } : null;
  }
  // No length: the body runs to the end of the connection (uWS's own error responses).
  return ended ? { status, headers, body: rest, closed: true } : null;
}

function dechunk(buf: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', at);
    if (lineEnd === -1) return null;
    const size = parseInt(buf.subarray(at, lineEnd).toString('latin1'), 16);
    if (Number.isNaN(size)) return Buffer.alloc(0);
    if (size === 0) return Buffer.concat(parts);
    if (buf.length < lineEnd + 2 + size + 2) return null;
    parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}
