// One client process of bench/change-streams.bench.ts: holds its share of the change streams (SSE
// connections of their own, or gRPC SyncFlags streams on channels of 100) so that the clients' CPU is
// not the bench process's and can be counted apart. Driven over the IPC channel (fork):
//   parent -> { open: Share }        open the streams, answer { opened } when each sent its first message
//   parent -> { await: revision }    answer { told: [epoch ms, ...] } when every stream saw that revision
//   parent -> { close: true }        close every stream and exit
// Times are epoch milliseconds (performance.timeOrigin + performance.now()): every process reads the same
// clock, so the parent can set them against the moment its PATCH was answered.
import { request, type ClientRequest } from 'node:http';
import { SyncClient, type OpenStream } from '../test/helpers/sync-client.js';

export type Share =
  | { kind: 'sse'; count: number; url: string }
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

/** One SSE connection: every event's `id:` is the revision it was seen at (src/stream/change-feed.ts). */
function openSse(url: string, into: Seen): Promise<void> {
  return new Promise((resolve, reject) => {
    let rest = '';
    const req: ClientRequest = request(url, { agent: false, headers: { accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`SSE answered ${res.statusCode}`));
      res.setEncoding('utf8').on('data', (chunk: string) => {
        rest += chunk;
        const end = rest.lastIndexOf('\n\n');
        if (end < 0) return;
        for (const m of rest.slice(0, end).matchAll(/^id: (\d+)$/gm)) into.told(Number(m[1]));
        rest = rest.slice(end + 2);
        if (into.revisions.length > 0) resolve();
      });
      res.on('error', () => {});
      // The server ends a stream only when it drops a slow reader: that is a finding, not a quiet loss.
      res.on('close', () => {
        if (!closing) send({ failed: 'an SSE stream was closed by the server' });
      });
    });
    req.on('error', reject);
    req.end();
    closers.push(() => req.destroy());
  });
}

async function open(share: Share): Promise<void> {
  for (let i = 0; i < share.count; i++) seen.push(new Seen());
  if (share.kind === 'sse') {
    let next = 0;
    const lane = async () => {
      while (next < share.count) {
        const i = next++;
        await openSse(share.url, seen[i]!);
      }
    };
    await Promise.all(Array.from({ length: Math.min(kConnecting, share.count) }, lane));
    return;
  }
  const channels = Array.from({ length: Math.ceil(share.count / share.perChannel) }, () => new SyncClient(share.syncPort));
  const streams: OpenStream[] = [];
  for (let i = 0; i < share.count; i++) {
    const into = seen[i]!;
    // The revision is read from the set's metadata without parsing the whole set: the clients must cost
    // as little as they can, since they share the 2 cores with the node under test.
    streams.push(
      channels[Math.floor(i / share.perChannel)]!.syncFlags({ header: share.selector }, undefined, (set) =>
        into.told(Number(/"flagwireRevision":(\d+)/.exec(set)![1])),
      ),
    );
  }
  closers.push(() => {
    for (const stream of streams) stream.cancel();
    for (const channel of channels) channel.close();
  });
  while (seen.some((s) => s.revisions.length === 0)) {
    const ended = streams.find((s) => s.ended !== null);
    if (ended) throw new Error(`a sync stream ended: ${ended.ended!.code} ${ended.ended!.details}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
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
