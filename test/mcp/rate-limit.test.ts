// /mcp counts against the Management API's per-address rate limit (spec: Limits; src/mcp/service-routes.ts):
// the same limiter, so /mcp's requests and the API's share an address's budget, and past it /mcp answers
// the API's own plain 429 with its Retry-After, before the token or the body is looked at.
import t from 'tap';
import { call } from '../helpers/http.js';
import { advanceClock, alignClock } from '../helpers/test-hooks.js';
import { startWorldServer } from '../helpers/world-server.js';

const kLimit = 5;
const { server, world } = await startWorldServer(t, { FLAGWIRE_MCP: 'on', FLAGWIRE_RATE_LIMIT: String(kLimit), FLAGWIRE_TEST_HOOKS: '1' });
const { secrets } = world;

const initialize = (token: string | null = secrets.multiRead) =>
  fetch(`${server.baseUrl}/mcp`, {
    method: 'POST',
    headers: {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'limited', version: '1' } },
    }),
  });

t.test('past the limit, /mcp answers the Management API 429, and shares its count', async (t) => {
  // The limiter counts in buckets of the clock: just past a minute boundary, the window is the test's alone.
  await alignClock(server, 60);
  for (let i = 0; i < kLimit; i++) t.equal((await initialize()).status, 200, `request ${i + 1}`);
  const limited = await initialize();
  t.equal(limited.status, 429, '/mcp is limited');
  t.equal(limited.headers.get('retry-after'), '60');
  t.match(limited.headers.get('content-type'), /^text\/plain/);
  const api = await call(server.baseUrl, 'GET', '/api/v1/token', { token: secrets.multiRead });
  t.equal(api.status, 429, "the Management API's budget was spent by /mcp");
  t.equal(await limited.text(), api.text, 'the same answer');
  t.ok(limited.headers.has('flagwire-revision'), "naming the store's revision, as the API's does");
  t.equal(limited.headers.get('flagwire-revision'), api.headers.get('flagwire-revision'));
  t.equal((await initialize(null)).status, 429, 'before the token is checked');

  await advanceClock(server, 120);
  for (let i = 0; i < kLimit; i++) t.equal((await call(server.baseUrl, 'GET', '/api/v1/token', { token: secrets.multiRead })).status, 200);
  t.equal((await initialize()).status, 429, "/mcp is refused once the API's requests spent the budget");
});
