// FLAGWIRE_TRUSTED_PROXIES against the real server: which client the per-IP limits (spec: Limits)
// count a request by. Every connection comes from a loopback address (all of 127.0.0.0/8 reaches the
// server), so a test client plays the reverse proxy by connecting from a listed address and writing
// the X-Forwarded-For header a proxy would. The rule itself, entry by entry: test/http/client-address.test.ts.
import t, { type Test } from 'tap';
import http from 'node:http';
import type { TestServer } from '../helpers/server.js';
import { startWorldServer } from '../helpers/world-server.js';

interface Sent {
  /** Loopback source address of the connection: the peer the server sees. */
  from: string;
  /** X-Forwarded-For header lines, in order. */
  xff?: string[];
  token?: string;
}

interface Answer {
  status: number;
  /** The envelope's error title; undefined for the plain-text rate-limit 429. */
  error: string | undefined;
}

function get(server: TestServer, { from, xff = [], token }: Sent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    // An array value is sent as one header line per element.
    const headers: Record<string, string | string[]> = xff.length === 0 ? {} : { 'x-forwarded-for': xff };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    const req = http.request(
      { host: '127.0.0.1', port: server.port, path: '/api/v1/token', localAddress: from, headers, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          const json = res.headers['content-type']?.startsWith('application/json') ? (JSON.parse(body) as { error?: string }) : null;
          resolve({ status: res.statusCode!, error: json?.error });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const kLockedOut = { status: 429, error: 'Too many failed authentication attempts' };
const kRateLimited = { status: 429, error: undefined };
const kOk = { status: 200, error: undefined };
const kUnauthorized = { status: 401 };

/**
 * Two peers that must be counted as themselves whatever X-Forwarded-For they write (limits 3 requests
 * and 2 failures): `locked` fails twice claiming other addresses and is locked out; `limited` sends
 * each request in another name and is rate limited on the fourth.
 */
async function checkForwardedForIgnored(t: Test, server: TestServer, token: string, locked: string, limited: string): Promise<void> {
  t.match(await get(server, { from: locked, xff: ['203.0.113.1'] }), kUnauthorized);
  t.match(await get(server, { from: locked, xff: ['203.0.113.2'] }), kUnauthorized);
  t.same(await get(server, { from: locked, xff: ['203.0.113.3'], token }), kLockedOut, `the failures counted for ${locked}`);
  for (let i = 1; i <= 3; i++) t.same(await get(server, { from: limited, xff: [`198.51.100.${i}`], token }), kOk);
  t.same(await get(server, { from: limited, xff: ['198.51.100.4'], token }), kRateLimited, `the requests counted for ${limited}`);
}

t.test('without the setting X-Forwarded-For is ignored: a client cannot leave its buckets by writing one', async (t) => {
  const { server, world } = await startWorldServer(t, { FLAGWIRE_RATE_LIMIT: '3', FLAGWIRE_AUTH_FAIL_LIMIT: '2' });
  await checkForwardedForIgnored(t, server, world.secrets.read, '127.0.0.2', '127.0.0.3');
});

t.test('behind a listed proxy each client has its own buckets', async (t) => {
  // The connection from 127.0.0.1 is the proxy; the addresses it writes are the clients.
  const { server, world } = await startWorldServer(t, {
    FLAGWIRE_RATE_LIMIT: '3',
    FLAGWIRE_AUTH_FAIL_LIMIT: '2',
    FLAGWIRE_TRUSTED_PROXIES: '127.0.0.1',
  });
  const read = world.secrets.read;
  const proxy = '127.0.0.1';
  t.match(await get(server, { from: proxy, xff: ['203.0.113.1'] }), kUnauthorized);
  t.match(await get(server, { from: proxy, xff: ['203.0.113.1'] }), kUnauthorized);
  t.same(await get(server, { from: proxy, xff: ['203.0.113.1'], token: read }), kLockedOut, 'client A is locked out');
  t.same(await get(server, { from: proxy, xff: ['203.0.113.2'], token: read }), kOk, 'client B behind the same proxy is not');
  t.same(await get(server, { from: proxy, token: read }), kOk, 'nor the proxy itself (no header)');

  for (let i = 0; i < 3; i++) t.same(await get(server, { from: proxy, xff: ['203.0.113.3'], token: read }), kOk);
  t.same(await get(server, { from: proxy, xff: ['203.0.113.3'], token: read }), kRateLimited, 'client C is over the rate limit');
  t.same(await get(server, { from: proxy, xff: ['203.0.113.4'], token: read }), kOk, 'client D is not');
  t.same(await get(server, { from: proxy, xff: ['2001:db8::4'], token: read }), kOk, 'nor an IPv6 client');
});

t.test('through a listed proxy a client cannot pick its bucket: the right-most address the proxy did not write is used', async (t) => {
  const { server, world } = await startWorldServer(t, { FLAGWIRE_AUTH_FAIL_LIMIT: '2', FLAGWIRE_TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8' });
  const read = world.secrets.read;
  const proxy = '127.0.0.1';
  // The attacker at 203.0.113.66 claims to be the victim 203.0.113.2; the proxy appends the real address.
  t.match(await get(server, { from: proxy, xff: ['203.0.113.2, 203.0.113.66'] }), kUnauthorized);
  t.match(await get(server, { from: proxy, xff: ['203.0.113.2, 203.0.113.66'] }), kUnauthorized);
  t.same(
    await get(server, { from: proxy, xff: ['203.0.113.2'], token: read }),
    kOk,
    'the victim was not locked out by failures sent in its name',
  );
  t.same(await get(server, { from: proxy, xff: ['203.0.113.66'], token: read }), kLockedOut, 'the attacker was');
  t.same(
    await get(server, { from: proxy, xff: ['203.0.113.7, 203.0.113.66'], token: read }),
    kLockedOut,
    'claiming another address does not get it out',
  );
  t.same(
    await get(server, { from: proxy, xff: ['203.0.113.7', '203.0.113.66'], token: read }),
    kLockedOut,
    'nor in a header line of its own: the lines are joined in order',
  );
  t.same(
    await get(server, { from: proxy, xff: ['203.0.113.7, 203.0.113.66, 10.0.0.2'], token: read }),
    kLockedOut,
    'a chain of listed proxies is skipped',
  );
  // Every entry listed: the left-most is the client (here a listed address locked out on its own).
  t.match(await get(server, { from: proxy, xff: ['10.0.0.5'] }), kUnauthorized);
  t.match(await get(server, { from: proxy, xff: ['10.0.0.5'] }), kUnauthorized);
  t.same(
    await get(server, { from: proxy, xff: ['10.0.0.5, 10.0.0.2'], token: read }),
    kLockedOut,
    'all entries listed: the left-most is the client',
  );
  t.same(await get(server, { from: proxy, xff: ['10.0.0.2'], token: read }), kOk);

  // A malformed entry where the client should be: the request counts as the proxy's, never as the
  // address left of it, which the client wrote (the locked-out 203.0.113.66 would get a 429 here).
  t.match(await get(server, { from: proxy, xff: ['203.0.113.66, 203.0.113.9:4711'] }), kUnauthorized);
  t.match(await get(server, { from: proxy, xff: ['203.0.113.66, unknown'] }), kUnauthorized);
  t.same(await get(server, { from: proxy, token: read }), kLockedOut, 'both failures counted for the proxy');
  t.same(await get(server, { from: proxy, xff: ['203.0.113.9'], token: read }), kOk, 'a well-formed 203.0.113.9 is another client');
});

t.test('a peer that is not a listed proxy cannot pick a bucket with X-Forwarded-For', async (t) => {
  // 10.0.0.0/8 and 127.0.0.2 are listed; 127.0.0.1 and 127.0.0.3 are not.
  const { server, world } = await startWorldServer(t, {
    FLAGWIRE_RATE_LIMIT: '3',
    FLAGWIRE_AUTH_FAIL_LIMIT: '2',
    FLAGWIRE_TRUSTED_PROXIES: '10.0.0.0/8,127.0.0.2',
  });
  const read = world.secrets.read;
  await checkForwardedForIgnored(t, server, read, '127.0.0.1', '127.0.0.3');
  t.same(
    await get(server, { from: '127.0.0.2', xff: ['203.0.113.1'], token: read }),
    kOk,
    'the listed 127.0.0.2 forwards for its own clients',
  );
  t.same(
    await get(server, { from: '127.0.0.2', xff: ['127.0.0.3'], token: read }),
    kRateLimited,
    'and names them by the address it writes',
  );
});
