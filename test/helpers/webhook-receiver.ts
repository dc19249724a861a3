// A webhook receiver for tests: a real HTTP server on 127.0.0.1 that records every POST (headers and
// body) and answers as the test says: a status, or no answer at all (a hanging receiver).
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  path: string;
  /** The sender's port of the connection it came on (which process sent it: see senderPid in the multinode tests). */
  remotePort: number;
  /** When it arrived (Date.now()). */
  at: number;
}

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** What the next requests get: a status code, or 'hang' (no answer until the receiver closes). */
  answer: number | 'hang';
  /** Requests left unanswered ('hang') that the sender gave up on (closed its side) so far. */
  readonly cutOff: number;
  /** Called with each request's body as it arrives (the bench times deliveries with it). */
  onRequest: ((body: string) => void) | null;
  /** Resolves once `count` requests have arrived (the bound only catches a hang). */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** `port`: 0 for a free one; a given one to come up where a receiver was down (connections refused). */
export async function startReceiver(port = 0): Promise<Receiver> {
  const received: Received[] = [];
  const hanging: ServerResponse[] = [];
  let cutOff = 0;
  let closing = false;
  const server = createServer((req, res) => {
    const remotePort = req.socket.remotePort ?? 0;
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body, path: req.url ?? '', remotePort, at: Date.now() });
      receiver.onRequest?.(body);
      if (receiver.answer === 'hang') {
        hanging.push(res);
        res.on('close', () => {
          if (!closing) cutOff++;
        });
      } else res.writeHead(receiver.answer).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const receiver: Receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    answer: 200,
    get cutOff() {
      return cutOff;
    },
    onRequest: null,
    async waitFor(count, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`the receiver got ${received.length} requests, not ${count}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: () =>
      new Promise<void>((r) => {
        closing = true;
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  return receiver;
}
