// Black-box: the packed edge package (scripts/pack-edge.mjs) in Vercel's Edge Runtime (the `edge-runtime`
// npm package) with code generation from strings and WebAssembly refused, fed over HTTP by a real server
// with a read token: every OFREP request of ofrep-cases.ts gets from it what it gets from the server, byte
// for byte with the same ETag, and a held bulk answer its 304.
import t from 'tap';
import { packEdge, startEdgeRuntime } from './edge-hosts.js';
import { startEdgeWorld } from './edge-world.js';
import { ask, compareAll, ofrepCases } from './ofrep-cases.js';

t.setTimeout(600_000);
const { world, server, token, typed, stop } = await startEdgeWorld();
const { ids } = world;
const edge = await startEdgeRuntime(packEdge(), { url: server.baseUrl, token, project: ids.single, pollMs: 200 });
t.teardown(async () => {
  await edge.stop();
  await stop();
});

t.test('the runtime refuses code generation', async (t) => {
  t.throws(() => edge.runtime.evaluate("new Function('return 1')()"), 'new Function');
  t.throws(() => edge.runtime.evaluate("eval('1')"), 'eval');
});

t.test('every OFREP case: the same status, bytes and ETag from the Edge Runtime as from the server', async (t) => {
  await compareAll(t, server.baseUrl, edge.baseUrl, ofrepCases(world, typed));
});

t.test('a bulk answer held is answered 304 as by the server', async (t) => {
  const request = {
    label: 'bulk',
    key: null,
    body: JSON.stringify({ context: { targetingKey: 'u2' } }),
    headers: { 'X-Flagwire-Project': ids.single },
  };
  const first = await ask(server.baseUrl, request);
  const again = await ask(edge.baseUrl, request, { 'If-None-Match': first.etag! });
  t.same([again.status, again.body, again.etag], [304, '', first.etag]);
});
