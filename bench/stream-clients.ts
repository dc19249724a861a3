// One client process of bench/change-streams.bench.ts: holds its share of the change streams (SSE
// connections of their own, or gRPC SyncFlags streams on HTTP/2 connections of 100) so that the clients'
// CPU is not the bench process's and can be counted apart. The clients are as cheap as they can be, since
// on 2 cores they share the machine with the node under test: an SSE stream is a plain TCP socket whose
// bytes are searched for `id:` lines (no HTTP parser), a SyncFlags stream a raw HTTP/2 request (node:http2,
// nghttp2 in C++) whose DATA is searched for the set's `"flagwireRevision":N` (no grpc-js, no protobuf
// decoding): what a stream was told is the revision, and nothing else is read. (With grpc-js and node:http
// the clients used about twice the node's CPU per change.) Driven over the IPC channel (fork):
//   parent -> { open: Share }        open the streams, answer { opened } when each sent its first message
//   parent -> { await: revision }    answer { told: [epoch ms, ...] } when every stream saw that revision
//   parent -> { close: true }        close every stream and exit
// Times are epoch milliseconds (performance.timeOrigin + performance.now()): every process reads the same
// clock, so the parent can set them against the moment its PATCH was answered.
import { connect as connectHttp2, constants, type ClientHttp2Session } from 'node:http2';
import { connect as connectTcp } from 'node:net';

export type Share =
  | { kind: 'sse'; count: number; url: string; localAddress: string }
  | { kind: 'grpc'; count: number; syncPort: number; selector: string; perChannel: number };

export type ToClients = { open: Share } | { await: number } | { close: true };
export type FromClients = { opened: number } | { told: number[] } | { failed: string };

const now = (): number => performance.timeOrigin + performance.now();
// How many SSE connections are being set up at once: more only queue in the server's accept backlog.
const kConnecting = 200;

/** Per stream: the revisions it was told, with when (the last few: an await asks for a recent one). */
class Seen {
  readonly revisions: number[] = [];
  readonly times: number[] = [];
  told(revision: number): void {
    if (revision <= (this.revisions.at(-1) ?? -1)) return;
    this.revisions.push(revision);
    this.times.push(now());
    if (this.revisions.length > 8) {
      this.revisions.shift();
      this.times.shift();
    }
  }
  /** When it was first told `revision` or a later one; null while not yet. */
  at(revision: number): number | null {
    const i = this.revisions.findIndex((r) => r >= revision);
    return i < 0 ? null : this.times[i]!;
  }
}

const seen: Seen[] = [];
let closing = false;
const closers: (() => void)[] = [];
const send = (message: FromClients) => process.send!(message);

/**
 * Calls `told` with every revision found in a stream's bytes. A match may straddle two chunks: the text
 * after the last complete match is kept (at most `keep` characters) and searched again with the next.
 */
function revisionScanner(pattern: RegExp, keep: number, into: Seen): (chunk: string) => void {
  let rest = '';
  return (chunk) => {
    const text = rest + chunk;
    let end = 0;
    pattern.lastIndex = 0;
    for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
      into.told(Number(m[1]));
      end = pattern.lastIndex;
    }
    rest = text.slice(Math.max(end, text.length - keep));
  };
}

/** One SSE connection: every event's `id:` is the revision it was seen at (src/stream/change-feed.ts). */
function openSse(url: URL, localAddress: string, into: Seen): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connectTcp({ port: Number(url.port), host: url.hostname, localAddress });
    const scan = revisionScanner(/\nid: (\d+)\n/g, 32, into);
    let status = false;
    socket.setEncoding('latin1');
    socket.on('connect', () => socket.write(`GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\n\r\n`));
    socket.on('data', (chunk: string) => {
      if (!status) {
        status = true;
        if (!chunk.startsWith('HTTP/1.1 200')) return reject(new Error(`SSE answered ${chunk.slice(0, 40)}`));
      }
      scan(chunk);
      if (into.revisions.length > 0) resolve();
    });
    socket.on('error', reject);
    // The server ends a stream only when it drops a slow reader: that is a finding, not a quiet loss.
    socket.on('close', () => {
      if (!closing) send({ failed: 'an SSE stream was closed by the server' });
    });
    closers.push(() => socket.destroy());
  });
}

// An empty SyncFlagsRequest in gRPC's framing (not compressed, length 0): the selector is the header.
const kEmptyRequest = Buffer.alloc(5);

/** One SyncFlags stream on `session`: flagd.sync.v1's server stream, the selector in `flagd-selector`. */
function openSync(session: ClientHttp2Session, selector: string, into: Seen): void {
  const stream = session.request({
    [constants.HTTP2_HEADER_METHOD]: 'POST',
    [constants.HTTP2_HEADER_PATH]: '/flagd.sync.v1.FlagSyncService/SyncFlags',
    'content-type': 'application/grpc',
    te: 'trailers',
    'flagd-selector': selector,
  });
  const scan = revisionScanner(/"flagwireRevision":(\d+)/g, 40, into);
  stream.setEncoding('latin1');
  stream.on('response', (headers) => {
    if (headers[':status'] !== 200 || headers['grpc-status'] !== undefined) {
      send({ failed: `SyncFlags answered ${headers[':status']}, grpc-status ${headers['grpc-status']} ${headers['grpc-message']}` });
    }
  });
  stream.on('data', scan);
  stream.on('trailers', (trailers) => {
    if (!closing) send({ failed: `a SyncFlags stream ended: grpc-status ${trailers['grpc-status']} ${trailers['grpc-message']}` });
  });
  stream.on('error', (err) => {
    if (!closing) send({ failed: `a SyncFlags stream failed: ${err.message}` });
  });
  stream.end(kEmptyRequest);
}

async function open(share: Share): Promise<void> {
  for (let i = 0; i < share.count; i++) seen.push(new Seen());
  if (share.kind === 'sse') {
    const url = new URL(share.url);
    let next = 0;
    const lane = async () => {
      while (next < share.count) {
        const i = next++;
        await openSse(url, share.localAddress, seen[i]!);
      }
    };
    await Promise.all(Array.from({ length: Math.min(kConnecting, share.count) }, lane));
    return;
  }
  const sessions: ClientHttp2Session[] = [];
  for (let i = 0; i < share.count; i++) {
    if (i % share.perChannel === 0) {
      const session = connectHttp2(`http://127.0.0.1:${share.syncPort}`);
      session.on('error', (err) => {
        if (!closing) send({ failed: `an HTTP/2 connection failed: ${err.message}` });
      });
      sessions.push(session);
    }
    openSync(sessions.at(-1)!, share.selector, seen[i]!);
  }
  closers.push(() => {
    for (const session of sessions) session.destroy();
  });
  while (seen.some((s) => s.revisions.length === 0)) await new Promise((resolve) => setTimeout(resolve, 20));
}

async function told(revision: number): Promise<number[]> {
  for (;;) {
    const times = seen.map((s) => s.at(revision));
    if (times.every((t) => t !== null)) return times as number[];
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

process.on('message', (message: ToClients) => {
  if ('open' in message) {
    open(message.open).then(
      () => send({ opened: seen.length }),
      (err: Error) => send({ failed: err.message }),
    );
  } else if ('await' in message) {
    void told(message.await).then((times) => send({ told: times }));
  } else {
    closing = true;
    for (const close of closers) close();
    process.disconnect();
    setTimeout(() => process.exit(0), 200).unref();
  }
});
