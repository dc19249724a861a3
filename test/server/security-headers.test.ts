// Issue 23, item 9 (b, c): `X-Content-Type-Options: nosniff` on every answer Flagwire writes (every
// route, errors and 404s, preflights, evaluation and OFREP answers including a 304, the change stream),
// exactly once; and a Content-Security-Policy on /docs that allows nothing, which the page needs none of.
import t from 'tap';
import net from 'node:net';
import { RawClient, rawRequest } from '../helpers/raw-http.js';
import { startWorldServer } from '../helpers/world-server.js';

t.test('every answer says X-Content-Type-Options: nosniff; /docs has a Content-Security-Policy', async (t) => {
  const { server, world } = await startWorldServer(t);
  const { ids, secrets } = world;
  const host = ['Host', 'x'] as const;
  const json = (body: unknown) =>
    [
      ['Content-Type', 'application/json'],
      ['Content-Length', String(Buffer.byteLength(JSON.stringify(body)))],
    ] as const;
  const bulk = { context: { targetingKey: 'u' } };
  const cases: { name: string; status: number; bytes: Buffer }[] = [
    { name: 'GET /health', status: 200, bytes: rawRequest('GET', '/health', [host]) },
    { name: 'GET /ready', status: 200, bytes: rawRequest('GET', '/ready', [host]) },
    { name: 'GET /metrics', status: 200, bytes: rawRequest('GET', '/metrics', [host]) },
    { name: 'GET /docs', status: 200, bytes: rawRequest('GET', '/docs', [host]) },
    { name: 'GET /api/v1/openapi.json', status: 200, bytes: rawRequest('GET', '/api/v1/openapi.json', [host]) },
    { name: 'GET /console', status: 200, bytes: rawRequest('GET', '/console', [host]) },
    { name: 'GET /nowhere (404)', status: 404, bytes: rawRequest('GET', '/nowhere', [host]) },
    { name: 'GET /api/v1/flags without a token (401)', status: 401, bytes: rawRequest('GET', '/api/v1/flags', [host]) },
    {
      name: 'GET /api/v1/flags',
      status: 200,
      bytes: rawRequest('GET', '/api/v1/flags', [host, ['Authorization', `Bearer ${secrets.write}`]]),
    },
    {
      name: 'PATCH with a bad body (400)',
      status: 400,
      bytes: rawRequest(
        'PATCH',
        `/api/v1/flags/${ids.flag}`,
        [host, ['Authorization', `Bearer ${secrets.write}`], ...json({ enabled: 'yes' })],
        JSON.stringify({ enabled: 'yes' }),
      ),
    },
    {
      name: 'two Content-Length headers (framing 400)',
      status: 400,
      bytes: rawRequest('POST', '/api/v1/flags', [host, ['Content-Length', '1'], ['Content-Length', '2']], 'x'),
    },
    {
      name: 'OPTIONS preflight (204)',
      status: 204,
      bytes: rawRequest('OPTIONS', '/api/v1/flags', [host, ['Origin', 'https://a.test'], ['Access-Control-Request-Method', 'PATCH']]),
    },
    { name: 'GET /v1/flags/:id', status: 200, bytes: rawRequest('GET', `/v1/flags/${ids.flag}?targetingKey=u`, [host]) },
    { name: 'GET /v1/flags/:unknown (404)', status: 404, bytes: rawRequest('GET', '/v1/flags/unknown?targetingKey=u', [host]) },
    {
      name: 'OFREP single',
      status: 200,
      bytes: rawRequest('POST', `/ofrep/v1/evaluate/flags/${ids.flag}`, [host, ...json(bulk)], JSON.stringify(bulk)),
    },
    {
      name: 'OFREP bulk',
      status: 200,
      bytes: rawRequest(
        'POST',
        '/ofrep/v1/evaluate/flags',
        [host, ['X-Flagwire-Project', ids.single], ...json(bulk)],
        JSON.stringify(bulk),
      ),
    },
    { name: 'GET /console/api/session signed out', status: 401, bytes: rawRequest('GET', '/console/api/session', [host]) },
  ];
  const client = new RawClient(server.port);
  t.teardown(() => client.close());
  const missing: string[] = [];
  let etag = '';
  for (const c of cases) {
    const reply = await client.request(c.bytes, { closeAfter: true });
    if (reply.headers.get('x-content-type-options') !== 'nosniff')
      missing.push(`${c.name}: ${reply.status} ${JSON.stringify(reply.headers.get('x-content-type-options') ?? null)}`);
    if (c.name === 'OFREP bulk') etag = reply.headers.get('etag') ?? '';
    if (c.name === 'GET /docs') {
      t.equal(
        reply.headers.get('content-security-policy'),
        "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        '/docs: a policy that allows nothing',
      );
      const page = reply.body.toString();
      t.match(page, /<h1>Flagwire API errors<\/h1>/, '/docs still renders its content');
      t.notMatch(
        page,
        /<(script|link|style|img|iframe|form)\b|\sstyle=|\son[a-z]+=/i,
        '/docs needs nothing the policy refuses: no script, style, image, frame or form',
      );
    }
    if (c.status !== reply.status) missing.push(`${c.name}: expected ${c.status}, got ${reply.status}`);
  }
  t.not(etag, '', 'the OFREP bulk answer has an ETag');
  const notModified = await client.request(
    rawRequest(
      'POST',
      '/ofrep/v1/evaluate/flags',
      [host, ['X-Flagwire-Project', ids.single], ['If-None-Match', etag], ...json(bulk)],
      JSON.stringify(bulk),
    ),
    { closeAfter: true },
  );
  t.equal(notModified.status, 304, 'the same bulk request with If-None-Match is a 304');
  if (notModified.headers.get('x-content-type-options') !== 'nosniff') missing.push('OFREP bulk 304');

  // The change stream never ends: read its head only.
  const head = await new Promise<string>((resolve, reject) => {
    const socket = net.connect(server.port, '127.0.0.1', () =>
      socket.write(rawRequest('GET', `/v1/stream/project/${ids.single}`, [host, ['Authorization', `Bearer ${secrets.read}`]])),
    );
    let got = '';
    socket.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (got.includes('\r\n\r\n')) {
        socket.destroy();
        resolve(got.slice(0, got.indexOf('\r\n\r\n')));
      }
    });
    socket.on('error', reject);
  });
  t.match(head, /^HTTP\/1\.1 200/, 'the change stream opens');
  if (!/\r\nX-Content-Type-Options: nosniff\r\n/i.test(`${head}\r\n`)) missing.push('change stream');
  t.same(missing, [], 'every answer carries X-Content-Type-Options: nosniff exactly once, with its expected status');
});
