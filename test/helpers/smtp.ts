// SMTP servers for the mail tests, on free ports of 127.0.0.1: a real one (smtp-server) that can
// refuse its first deliveries, and a hung one that accepts connections and never says a word.
import net, { type AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface Received {
  to: string[];
  raw: string;
}

export interface TestSmtpServer {
  port: number;
  received: Received[];
  /** Messages offered so far, refused ones included. */
  attempts(): number;
  close(): Promise<void>;
}

/**
 * A real SMTP server; the first `rejectFirst` messages are refused with a temporary error (451). Each
 * message is answered `answerAfterMs` after it arrived (a slow server: a send lasts that long).
 */
export async function smtpServer(rejectFirst = 0, answerAfterMs = 0): Promise<TestSmtpServer> {
  const received: Received[] = [];
  let attempts = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (d: Buffer) => (raw += d.toString()));
      stream.on('end', async () => {
        if (answerAfterMs > 0) await new Promise((resolve) => setTimeout(resolve, answerAfterMs));
        attempts++;
        if (attempts <= rejectFirst) {
          callback(Object.assign(new Error('try again later'), { responseCode: 451 }));
          return;
        }
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), raw });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { port, received, attempts: () => attempts, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

export interface HungServer {
  port: number;
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/** Accepts TCP connections and never greets, reads or closes them: an SMTP server that hangs. */
export async function hungSmtpServer(): Promise<HungServer> {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls `check` every 50 ms until it holds; throws after `timeoutMs` (the bound only catches a hang). */
export async function until(what: string, check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
