// An MCP session is the node's, not one front-end thread's (src/mcp/sessions.ts): with four front-end
// threads, the stock MCP client SDK whose every request goes out on a new connection (so the acceptor
// hands consecutive requests to different threads) keeps one session through many calls. An altered
// session id is 404; DELETE is 405 (sessions end on age) and the session still works.
import http from 'node:http';
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t, { FLAGWIRE_MCP: 'on', FLAGWIRE_HTTP_THREADS: '4' });
const { secrets } = world;

/** A fetch for the SDK that opens a new connection for each request and closes it after the answer. */
async function freshConnectionFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const url = new URL(input instanceof Request ? input.url : input);
  const headers = Object.fromEntries(new Headers(init?.headers).entries());
  const body = typeof init?.body === 'string' ? init.body : undefined;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: init?.method ?? 'GET',
        headers: { ...headers, connection: 'close' },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const answer = new Headers();
          for (const [name, value] of Object.entries(res.headers)) for (const v of [value ?? []].flat()) answer.append(name, v);
          const status = res.statusCode!;
          resolve(new Response(status === 202 || status === 204 ? null : Buffer.concat(chunks), { status, headers: answer }));
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function connect(t: { teardown(fn: () => Promise<unknown>): void }) {
  const client = new Client({ name: 'flagwire-threads-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', server.baseUrl), {
    requestInit: { headers: { Authorization: `Bearer ${secrets.multiRead}` } },
    fetch: freshConnectionFetch,
  });
  await client.connect(transport);
  t.teardown(() => client.close());
  return { client, transport };
}

t.test('one session through many calls, each on a new connection to any of four threads', async (t) => {
  const { client, transport } = await connect(t);
  t.ok(transport.sessionId, 'initialize opened a session');
  let answered = 0;
  for (let i = 0; i < 40; i++) {
    const { tools } = await client.listTools();
    if (tools.length > 0) answered++;
  }
  t.equal(answered, 40, 'every call answered, whichever thread took it');
  const flags = await client.callTool({ name: 'list_flags', arguments: {} });
  t.notOk(flags.isError, 'a tool call too');
});

t.test('an altered id is 404; DELETE is 405 and the session lives on', async (t) => {
  const { client, transport } = await connect(t);
  const id = transport.sessionId!;
  const post = (sessionId: string) =>
    freshConnectionFetch(`${server.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${secrets.multiRead}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        'mcp-session-id': sessionId,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
  t.equal((await post(id)).status, 200);
  const altered = `${id.slice(0, -2)}${id.endsWith('AA') ? 'BB' : 'AA'}`;
  t.equal((await post(altered)).status, 404, 'a forged or altered id');
  const ended = await freshConnectionFetch(`${server.baseUrl}/mcp`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${secrets.multiRead}`, 'mcp-session-id': id },
  });
  t.equal(ended.status, 405);
  t.equal(ended.headers.get('allow'), 'POST');
  t.ok((await client.listTools()).tools.length > 0, 'the session still works');
});
