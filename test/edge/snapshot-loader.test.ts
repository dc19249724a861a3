// The edge fed from a bound value instead of a node (src/edge/snapshot-loader.ts storeLoader): the value a
// deploy step writes from the snapshot route (its body, ETag and Flagwire-Config-Tag, which the route
// sends on its 304 too) makes the edge answer as the server, ETags included; no value is a 503 naming why.
import t from 'tap';
import { FlagwireEdge } from '../../src/edge/edge.js';
import { startEdgeWorld } from './edge-world.js';
import { ask, type OfrepRequest } from './ofrep-cases.js';

t.setTimeout(600_000);
const { world, server, token, stop } = await startEdgeWorld();
const { ids } = world;
t.teardown(stop);

const snapshotUrl = `${server.baseUrl}/v1/snapshots/${ids.single}`;
const first = await fetch(snapshotUrl, { headers: { authorization: `Bearer ${token}` } });
const snapshot = await first.json();
const etag = first.headers.get('etag') ?? '';
const configTag = first.headers.get('flagwire-config-tag') ?? '';

t.test('the snapshot route names the configuration tag on its 200 and its 304', async (t) => {
  t.match(configTag, /^[0-9a-f]{8}$/);
  const again = await fetch(snapshotUrl, { headers: { authorization: `Bearer ${token}`, 'if-none-match': etag } });
  t.equal(again.status, 304);
  t.equal(again.headers.get('flagwire-config-tag'), configTag);
});

/** The edge's answer to `request`, through its fetch handler as a runtime calls it. */
async function viaEdge(edge: FlagwireEdge, request: OfrepRequest) {
  const path = request.key === null ? '/ofrep/v1/evaluate/flags' : `/ofrep/v1/evaluate/flags/${request.key}`;
  const res = await edge.fetch(new Request(`http://edge${path}`, { method: 'POST', body: request.body, headers: request.headers }));
  return { status: res.status, body: await res.text(), etag: res.headers.get('etag') };
}

t.test('from a bound value: the server answers, ETags included', async (t) => {
  const key = `flagwire-snapshot-${ids.single}`;
  const value = JSON.stringify({ etag, configTag, snapshot });
  const edge = new FlagwireEdge({ project: ids.single, store: { get: async (asked) => (asked === key ? value : null) } });
  for (const context of [{ targetingKey: 'u1' }, { targetingKey: 'u5', plan: 'beta', country: 'NL' }, { cohort: 'alice' }]) {
    const request = { label: 'bulk', key: null, body: JSON.stringify({ context }), headers: { 'X-Flagwire-Project': ids.single } };
    t.same(await viaEdge(edge, request), await ask(server.baseUrl, request), JSON.stringify(context));
  }
});

t.test('no value bound: a 503 that says so', async (t) => {
  const edge = new FlagwireEdge({ project: ids.single, store: { get: async () => null } });
  const answer = await viaEdge(edge, { label: 'flag', key: ids.on, body: '{}', headers: {} });
  t.equal(answer.status, 503);
  t.match(JSON.parse(answer.body).errorDetails, /holds no snapshot under "flagwire-snapshot-/);
});
