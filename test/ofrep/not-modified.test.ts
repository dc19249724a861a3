// A 304 to a conditional evaluation carries no Content-Length (RFC 9110 §8.6: it may only repeat the
// length a 200 would have sent, which a 304 answered without computing the body does not know), and the
// connection carries the next request as usual.
import t from 'tap';
import { RawClient, rawRequest } from '../helpers/raw-http.js';
import { startWorldServer } from '../helpers/world-server.js';

t.test('an OFREP bulk 304: no Content-Length, and the connection goes on', async (t) => {
  const { server, world } = await startWorldServer(t);
  const { ids } = world;
  const body = JSON.stringify({ context: { targetingKey: 'u' } });
  const headers = (more: readonly (readonly [string, string])[]) =>
    [
      ['Host', 'x'],
      ['X-Flagwire-Project', ids.single],
      ['Content-Type', 'application/json'],
      ['Content-Length', String(Buffer.byteLength(body))],
      ...more,
    ] as const;
  const client = new RawClient(server.port);
  t.teardown(() => client.close());
  const first = await client.request(rawRequest('POST', '/ofrep/v1/evaluate/flags', headers([]), body));
  t.equal(first.status, 200);
  const etag = first.headers.get('etag') ?? '';
  t.not(etag, '', 'the bulk answer has an ETag');

  const notModified = await client.request(rawRequest('POST', '/ofrep/v1/evaluate/flags', headers([['If-None-Match', etag]]), body));
  t.equal(notModified.status, 304);
  t.equal(notModified.headers.get('content-length'), undefined, 'no Content-Length on the 304');
  t.equal(notModified.body.length, 0, 'no body');
  t.equal(notModified.headers.get('etag'), etag, 'the tag again');
  t.notOk(notModified.closed, 'the connection stays open');

  const again = await client.request(rawRequest('POST', '/ofrep/v1/evaluate/flags', headers([]), body));
  t.equal(again.status, 200, 'the next request on the same connection is answered');
  t.equal(again.headers.get('etag'), etag);
});
