// spec: CORS: every Management API response allows any origin, without credentials; a preflight needs no
// token and names exactly the spec's headers, on the Evaluation API too, and OFREP's four more.
// (Moved from flags-write.test.ts, whose subject is what a flag write does.)
import t from 'tap';
import { call } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const post = (token: string, body: unknown) => call(server.baseUrl, 'POST', '/api/v1/flags', { token, body });

t.test('CORS: every response allows any origin; preflight needs no token', async (t) => {
  const r = await post(world.secrets.read, { name: 'x' });
  t.equal(r.headers.get('access-control-allow-origin'), '*');
  t.notOk(r.headers.get('access-control-allow-credentials'));
  const pre = await call(server.baseUrl, 'OPTIONS', `/api/v1/flags/${world.ids.flag}`, {
    headers: { origin: 'https://example.test', 'access-control-request-method': 'PATCH' },
  });
  t.equal(pre.status, 204);
  t.equal(pre.headers.get('access-control-allow-origin'), '*');
  t.equal(pre.headers.get('access-control-allow-methods'), 'GET, POST, PATCH, OPTIONS');
  t.equal(pre.headers.get('access-control-allow-headers'), 'Content-Type, Authorization', "exactly the spec's headers");
  const evalPre = await call(server.baseUrl, 'OPTIONS', `/v1/flags/${world.ids.flag}`, {
    headers: { origin: 'https://example.test', 'access-control-request-method': 'GET' },
  });
  t.equal(evalPre.status, 204);
  t.equal(evalPre.headers.get('access-control-allow-headers'), 'Content-Type, Authorization', 'the Evaluation API too');
  const ofrepPre = await call(server.baseUrl, 'OPTIONS', '/ofrep/v1/evaluate/flags', {
    headers: {
      origin: 'https://example.test',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'x-flagwire-project',
    },
  });
  t.equal(ofrepPre.status, 204);
  t.equal(ofrepPre.headers.get('access-control-allow-origin'), '*');
  t.equal(
    ofrepPre.headers.get('access-control-allow-headers'),
    'Content-Type, Authorization, X-Flagwire-Project, If-None-Match, Last-Event-ID, Flagwire-Min-Revision, Content-Encoding',
    'OFREP clients send five more (Content-Encoding: a gzipped batch of events)',
  );
});
