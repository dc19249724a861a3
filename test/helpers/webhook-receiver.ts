// A webhook receiver for tests: a real HTTP server on 127.0.0.1 that records every POST (headers and
// body) and answers as the test says: a status, or no answer at all (a hanging receiver).
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  path: string;
}

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** What the next requests get: a status code, or 'hang' (no answer until the receiver closes). */
  answer: number | 'hang';
  /** Called with each request's body as it arrives (the bench times deliveries with it). */
  onRequest: ((body: string) => void) | null;
  /** Resolves once `count` requests have arrived (the bound only catches a hang). */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const hanging: ServerResponse[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body, path: req.url ?? '' });
      receiver.onRequest?.(body);
      if (receiver.answer === 'hang') hanging.push(res);
      else res.writeHead(receiver.answer).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const receiver: Receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    answer: 200,
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
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  return receiver;
}
