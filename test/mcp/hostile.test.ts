// /mcp against a hostile client (src/mcp/service-routes.ts, sessions.ts): thousands of sessions keep the
// node's memory bounded (it holds none: each id proves itself), every one of them still valid, and a
// session past FLAGWIRE_MCP_SESSION_SECONDS is 404; oversized and malformed bodies, deep arguments, unknown tools, foreign origins,
// missing tokens and another token's session are each refused in a 4xx, never a 5xx. With MCP off,
// /mcp is 404.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { startTestServer } from '../helpers/server.js';
import { advanceClock } from '../helpers/test-hooks.js';
import { startWorldServer } from '../helpers/world-server.js';

const kSessionSeconds = 3600;
// The rate limit lifted: this client's thousands of requests are about sessions (rate-limit.test.ts tests the limit).
const { server, world } = await startWorldServer(t, {
  FLAGWIRE_MCP: 'on',
  FLAGWIRE_MCP_SESSION_SECONDS: String(kSessionSeconds),
  FLAGWIRE_RATE_LIMIT: '1000000',
  FLAGWIRE_TEST_HOOKS: '1',
});
const { secrets } = world;
const url = `${server.baseUrl}/mcp`;
const kInitialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'hostile', version: '1' } },
};

interface Answer {
  status: number;
  session: string | null;
  json: any;
}

async function post(body: unknown, headers: Record<string, string> = {}, token: string | null = secrets.multiRead): Promise<Answer> {
  const r = await fetch(url, {
    method: 'POST',
    headers: {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-protocol-version': '2025-06-18',
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await r.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: r.status, session: r.headers.get('mcp-session-id'), json };
}

async function open(token = secrets.multiRead): Promise<string> {
  const r = await post(kInitialize, {}, token);
  if (r.status !== 200 || r.session === null) throw new Error(`initialize: ${r.status} ${JSON.stringify(r.json)}`);
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': r.session }, token);
  return r.session;
}

const listTools = (session: string, token = secrets.multiRead) =>
  post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': session }, token);
const callTool = (session: string, name: string, args: unknown) =>
  post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name, arguments: args } }, { 'mcp-session-id': session });

/** The server process's resident memory, in bytes. */
function rss(): number {
  const status = readFileSync(`/proc/${server.proc.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

t.test('thousands of sessions: memory bounded, every one valid, no 5xx; past its age, 404', async (t) => {
  const first = await open();
  t.equal((await listTools(first)).status, 200);
  const statuses = new Map<number, number>();
  const opened: string[] = [];
  const openMany = async (count: number) => {
    for (let done = 0; done < count; done += 50) {
      const batch = await Promise.all(Array.from({ length: 50 }, () => post(kInitialize)));
      for (const r of batch) {
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r.session !== null) opened.push(r.session);
      }
    }
  };
  await openMany(500);
  const warm = rss();
  await openMany(3000);
  const after = rss();
  t.strictSame([...statuses.keys()], [200], `every initialize answered 200: ${JSON.stringify([...statuses])}`);
  t.ok(after - warm < 64 * 1024 * 1024, `3000 more sessions grew the node by ${Math.round((after - warm) / 1024 / 1024)} MiB`);
  t.equal(new Set(opened).size, 3500, 'each initialize a session of its own');
  t.equal((await listTools(first)).status, 200, 'the first session is still valid: nothing was evicted');
  t.equal((await listTools(opened[1234]!)).status, 200);
  await advanceClock(server, kSessionSeconds + 1);
  const gone = await listTools(first);
  t.equal(gone.status, 404, 'a session past its age has ended');
  t.equal(gone.json?.error?.code, -32001);
  const last = await open();
  t.equal((await listTools(last)).status, 200, 'a new session works');
});

t.test("a session is its token's: another token is answered as for no session", async (t) => {
  const session = await open(secrets.multiRead);
  t.equal((await listTools(session, secrets.multiWrite)).status, 404);
  t.equal((await listTools(session, secrets.multiRead)).status, 200);
  t.equal((await listTools('v1.x.y.z', secrets.multiRead)).status, 404, 'an id this node never issued');
  const ended = await fetch(url, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${secrets.multiRead}`, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
  });
  t.equal(ended.status, 405, 'DELETE: a session ends on its age alone');
  t.equal(ended.headers.get('allow'), 'POST');
});

t.test('oversized, malformed and deep bodies, unknown tools: 4xx or a tool error, never 5xx', async (t) => {
  const session = await open();
  const huge = await post(
    { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'get_flag', arguments: { flag_id: 'x'.repeat(2 * 1024 * 1024) } } },
    { 'mcp-session-id': session },
  );
  t.equal(huge.status, 413, 'a body past 1 MiB is refused before it is parsed');
  t.strictSame(Object.keys(huge.json).sort(), ['detail', 'docs', 'error']);
  const big = await callTool(session, 'get_flag', { flag_id: 'x'.repeat(900 * 1024) });
  t.equal(big.status, 200);
  t.equal(big.json.result.isError, true, "a large argument is the tool's refusal");
  t.equal(big.json.result.structuredContent.error, 'Not found');
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  const nested = await post(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"create_flag","arguments":{"body":${deep}}}}`, {
    'mcp-session-id': session,
  });
  t.ok(nested.status < 500, `deep arguments: ${nested.status}`);
  const unknown = await callTool(session, 'drop_database', {});
  t.equal(unknown.status, 200);
  t.equal(unknown.json.error.code, -32602, 'an unknown tool is a JSON-RPC error');
  const notJson = await post('{"jsonrpc": ', { 'mcp-session-id': session });
  t.equal(notJson.status, 400);
  const badArgs = await callTool(session, 'change_flag', 'not an object');
  t.ok(badArgs.status < 500, `arguments that are no object: ${badArgs.status}`);
  const noSession = await post({ jsonrpc: '2.0', id: 5, method: 'tools/list' });
  t.equal(noSession.status, 400, 'a request outside a session');
  const get = await fetch(url, { headers: { authorization: `Bearer ${secrets.multiRead}`, accept: 'text/event-stream' } });
  t.equal(get.status, 405, "no stream of the server's own");
  t.notMatch(server.logs(), /unexpected error/, 'nothing was an unexpected error');
});

t.test('foreign origins and missing tokens are refused in the envelope', async (t) => {
  const foreign = await post(kInitialize, { origin: 'http://evil.example', host: 'evil.example' });
  t.equal(foreign.status, 403);
  t.equal(foreign.json.error, 'Cross-site request refused');
  t.equal((await post(kInitialize, { origin: 'http://localhost:6274' })).status, 200, 'a loopback origin (the inspector) passes');
  const anonymous = await post(kInitialize, {}, null);
  t.equal(anonymous.status, 401);
  t.strictSame(Object.keys(anonymous.json).sort(), ['detail', 'docs', 'error']);
  const unknown = await post(kInitialize, {}, 'fw_nope');
  t.ok(unknown.status === 401, `an unknown token: ${unknown.status}`);
});

t.test('with MCP off, /mcp is 404', async (t) => {
  const off = await startTestServer({});
  t.teardown(() => off.stop());
  const r = await fetch(`${off.baseUrl}/mcp`, { method: 'POST', body: '{}' });
  t.equal(r.status, 404);
  t.match(((await r.json()) as { detail: string }).detail, /FLAGWIRE_MCP=on/);
});
