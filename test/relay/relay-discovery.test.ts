// Black-box: a relay's discovery (GET {upstream}/v1/relay, src/relay/upstream-get.ts) as its upstream
// answers it. An upstream URL that redirects within its origin (a proxy's 307) is followed, and the relay
// catches up; one that redirects to another origin is asked there without the relay key (as fetch asks),
// and the key is refused. An upstream that is down is named with the system's reason, and one that accepts the
// connection and never answers is given up after discovery's 5 s, both while the relay keeps trying.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import type { TestContext } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { freePort } from '../helpers/free-port.js';
import { buildWorld } from '../helpers/world.js';
import { createRelayKey, relayReady, startRelay, waitCaughtUp } from './support.js';

/** An HTTP server on 127.0.0.1 answering with `handler`, closed at the test's end. */
async function listen(t: TestContext, handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The relay's problem on /ready, once it says one matching `pattern`. */
async function problemOf(relayUrl: string, pattern: RegExp): Promise<string> {
  const ready = await pollUntil(
    `the relay says ${pattern}`,
    () => call(relayUrl, 'GET', '/ready'),
    (r) => typeof r.json?.relay?.problem === 'string' && pattern.test(r.json.relay.problem),
  );
  return ready.json.relay.problem as string;
}

t.test("an upstream URL that redirects: followed within the proxy's origin, the key never sent to another", async (t) => {
  const upDir = tempDataDir();
  const world = buildWorld(upDir);
  await world.store.close();
  const upstream = await startTestServer({ dataDir: upDir, syncPort: 'free' });
  t.teardown(() => upstream.stop());
  const key = await createRelayKey(upDir, 'behind-a-proxy');
  // A proxy on 127.0.0.1 (where the relay dials the sync port the node answers): /old/... redirected to
  // /..., anything else passed to the node as it came.
  const proxy = await listen(t, (req, res) => {
    if (req.url!.startsWith('/old/')) {
      res.writeHead(307, { location: req.url!.slice('/old'.length) });
      res.end();
      return;
    }
    const forward = request(`${upstream.baseUrl}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  const relay = await startRelay(`${proxy}/old`, key.secret);
  t.teardown(() => relay.stop());
  const revision = await waitCaughtUp(relay, upstream, world.ids.single);
  const ready = await relayReady(relay);
  t.equal(ready.status, 200);
  t.match(ready.json.relay, { upstream: `${proxy}/old`, connected: true, holdsCopy: true, revision, problem: null });

  // Redirected to another origin (the node's own address), discovery goes without the relay key, as
  // a browser's fetch does, and the node refuses it: the relay says its key was refused.
  const elsewhere = await listen(t, (req, res) => {
    res.writeHead(307, { location: `${upstream.baseUrl}${req.url}` });
    res.end();
  });
  const stray = await startRelay(elsewhere, key.secret);
  t.teardown(() => stray.stop());
  t.match(await problemOf(stray.baseUrl, /refused/), /^the upstream http:\/\/127\.0\.0\.1:\d+ refused this relay's key/);
});

t.test("an upstream that is down: the relay names the system's reason", async (t) => {
  const port = await freePort();
  const upstream = `http://127.0.0.1:${port}`;
  const relay = await startRelay(upstream, 'fwr_unused');
  t.teardown(() => relay.stop());
  const problem = await problemOf(relay.baseUrl, /does not answer/);
  t.equal(problem, `the upstream ${upstream} does not answer (connect ECONNREFUSED 127.0.0.1:${port})`);
});

t.test('an upstream that never answers discovery: given up after 5 s, said so, and asked again', async (t) => {
  let asked = 0;
  // Takes the request and holds it open.
  const upstream = await listen(t, () => {
    asked++;
  });
  const relay = await startRelay(upstream, 'fwr_unused');
  t.teardown(() => relay.stop());
  const problem = await problemOf(relay.baseUrl, /does not answer/);
  t.equal(problem, `the upstream ${upstream} does not answer (The operation was aborted due to timeout)`);
  await pollUntil(
    'the relay asks again',
    async () => asked,
    (n) => n >= 2,
  );
  t.pass(`asked ${asked} times`);
});
