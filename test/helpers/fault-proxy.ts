// An HTTP proxy in front of one or more nodes, as a load balancer is: each request goes to the first
// node that takes its connection (a killed node refuses it, so the next one gets it), its answer streamed
// back (the change stream too). `fault` may fail a request once it is read: 'refuse' answers a 503 without
// forwarding it; 'drop' forwards it, lets the node answer, and drops the client's connection instead of
// the answer (the node did the work, the client never hears of it). A request whose node dies under it
// has its client's connection dropped.
import { request, createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault = 'pass' | 'refuse' | 'drop';

export interface FaultProxy {
  readonly url: string;
  close(): Promise<void>;
}

export async function startFaultProxy(ports: () => readonly number[], fault: (req: IncomingMessage) => Fault): Promise<FaultProxy> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const how = fault(req);
      if (how === 'refuse') {
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end('{"error":"Service unavailable","detail":"a fault of the test proxy"}');
        return;
      }
      const headers = { ...req.headers };
      delete headers.connection;
      const tryNode = (index: number) => {
        const port = ports()[index];
        if (port === undefined) {
          req.socket.destroy();
          return;
        }
        let answered = false;
        const upstream = request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers }, (answer) => {
          answered = true;
          if (how === 'drop') {
            answer.resume();
            answer.on('end', () => req.socket.destroy());
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          answer.on('error', () => req.socket.destroy());
          answer.on('aborted', () => req.socket.destroy());
        });
        upstream.on('error', (err: NodeJS.ErrnoException) => {
          // Refused: the node is not there; try the next. Lost once connected: the client's connection goes too.
          if (!answered && err.code === 'ECONNREFUSED') tryNode(index + 1);
          else req.socket.destroy();
        });
        res.on('close', () => upstream.destroy());
        upstream.end(body);
      };
      tryNode(0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
