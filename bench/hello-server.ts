// The ceiling: a uWebSockets.js server that answers every GET with fixed bytes, the same body and
// headers the evaluation route sends for the bench's flag: its header lines are the evaluation answer's
// own (src/evaluation/engine/answer-writer.ts, AnswerHeads, at the revision given), written as that writes them,
// and the body is what bench/threads.sh read from the route. Nothing is parsed, nothing is handed off:
// whatever Flagwire does beyond this is its own cost.
//
//   node dist/bench/hello-server.js --port 0 --body '{"id":"flg_…","name":"…","enabled":true}' --revision 1 [--threads N]
//
// With --threads N (N > 1) it is built as Flagwire's front-end threads are (src/server/frontend-threads.ts):
// an acceptor on the main thread hands connections to N worker threads' apps, so a scaling run compares
// like with like. Prints `hello listening on http://127.0.0.1:PORT` once listening; stops on SIGTERM/SIGINT.
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import * as uWS from 'uWebSockets.js';
import { AnswerHeads } from '../src/evaluation/engine/answer-writer.js';
import { kRevisionHeader } from '../src/http/revisions.js';
import { childApps } from '../src/server/listen.js';

function arg(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : (process.argv[at + 1] ?? fallback);
}

const host = arg('host', '127.0.0.1');
const port = Number(arg('port', '0'));
// Buffers made once: uWS copies them into its send buffer, the JS side allocates nothing per request.
const body = Buffer.from(arg('body', '{"id":"flg_0123456789abcdef","name":"x","enabled":true}'));
const kHeadName = Buffer.from(kRevisionHeader);
const kHead = new AnswerHeads().at(Number(arg('revision', '1'))).plain;

const threads = Number(arg('threads', '1'));

const app = uWS.App();
// Answered synchronously, so uWS has corked the socket already (no res.cork needed, no onAborted). No
// status line, as the evaluation answer writes none for a 200: uWS's end() writes `200 OK` itself.
app.get('/*', (res) => {
  res.writeHeader(kHeadName, kHead);
  res.end(body);
});
app.any('/*', (res) => {
  res.writeStatus('404 Not Found').end();
});

if (!isMainThread) {
  // A child app: hand the acceptor our descriptor and stay alive (the port keeps the thread running).
  parentPort!.postMessage(childApps(app).getDescriptor());
  parentPort!.on('message', () => {});
} else {
  const acceptor = threads > 1 ? uWS.App() : app;
  for (let i = 0; i < (threads > 1 ? threads : 0); i++) {
    const worker = new Worker(new URL(import.meta.url), { argv: process.argv.slice(2) });
    childApps(acceptor).addChildAppDescriptor(await new Promise<number>((resolve) => worker.once('message', resolve)));
  }
  listen(acceptor);
}

function listen(acceptor: uWS.TemplatedApp): void {
  acceptor.listen(host, port, (socket) => {
    if (!socket) {
      process.stderr.write(`hello: cannot listen on ${host}:${port}\n`);
      process.exit(1);
    }
    const listening = uWS.us_socket_local_port(socket as unknown as uWS.us_socket);
    process.stdout.write(`hello listening on http://${host}:${listening}\n`);
    const stop = () => {
      uWS.us_listen_socket_close(socket);
      acceptor.close();
      process.exit(0);
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
