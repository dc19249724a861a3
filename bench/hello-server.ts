// The ceiling: a uWebSockets.js server that answers every GET with fixed bytes, the same body and
// headers the evaluation route sends for the bench's flag (status line, CORS, Content-Type, body).
// Nothing is parsed, nothing is handed off: whatever Flagwire does beyond this is its own cost.
//
//   node dist/bench/hello-server.js --port 0 --body '{"id":"flg_…","name":"…","enabled":true}'
//
// Prints `hello listening on http://127.0.0.1:PORT` once listening; stops on SIGTERM/SIGINT.
import * as uWS from 'uWebSockets.js';

function arg(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : process.argv[at + 1] ?? fallback;
}

const host = arg('host', '127.0.0.1');
const port = Number(arg('port', '0'));
// Buffers made once: uWS copies them into its send buffer, the JS side allocates nothing per request.
const body = Buffer.from(arg('body', '{"id":"flg_0123456789abcdef","name":"x","enabled":true}'));
const kStatus = Buffer.from('200 OK');
const kCorsName = Buffer.from('Access-Control-Allow-Origin');
const kCorsValue = Buffer.from('*');
const kTypeName = Buffer.from('Content-Type');
const kJson = Buffer.from('application/json');

const app = uWS.App();
// Answered synchronously, so uWS has corked the socket already (no res.cork needed, no onAborted).
app.get('/*', (res) => {
  res.writeStatus(kStatus);
  res.writeHeader(kCorsName, kCorsValue);
  res.writeHeader(kTypeName, kJson);
  res.end(body);
});
app.any('/*', (res) => {
  res.writeStatus('404 Not Found').end();
});

app.listen(host, port, (socket) => {
  if (!socket) {
    process.stderr.write(`hello: cannot listen on ${host}:${port}\n`);
    process.exit(1);
  }
  const listening = uWS.us_socket_local_port(socket as unknown as uWS.us_socket);
  process.stdout.write(`hello listening on http://${host}:${listening}\n`);
  const stop = () => {
    uWS.us_listen_socket_close(socket);
    app.close();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
});
