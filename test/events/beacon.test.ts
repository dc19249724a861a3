// Black-box: POST /ofrep/v1/events takes a text/plain body holding the batch's JSON, what
// navigator.sendBeacon sends with a string (docs/events.md, "At unload"), counted as the same batch sent
// as application/json is, and held to the same limits and checks: a bad one is refused whole in the
// spec's envelope and counts nothing. sendBeacon sets no Authorization header: the client key may come
// as ?key= instead. The OpenAPI document lists both media types.
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { call } from '../helpers/http.js';
import { startExperimentServer } from '../helpers/experiment-server.js';

const { base, clientKey, statistics } = await startExperimentServer(t);
const kBeacon = 'text/plain;charset=UTF-8';
const post = (raw: string | Uint8Array<ArrayBuffer>, headers: Record<string, string> = {}) =>
  call(base, 'POST', '/ofrep/v1/events', { token: clientKey, raw, headers: { 'content-type': kBeacon, ...headers } });
const track = (metric: string, targetingKey: string, value?: number) => ({
  kind: 'track',
  key: metric,
  targetingKey,
  ...(value === undefined ? {} : { value }),
  timestamp: Date.now(),
});
const metricOf = async (metric: string) =>
  (await statistics()).variants
    .flatMap((v: { metrics: { metric: string }[] }) => v.metrics)
    .filter((m: { metric: string }) => m.metric === metric);

t.test('a text/plain batch, as sendBeacon sends it, is counted as the JSON it holds', async (t) => {
  const exposed = await post(
    JSON.stringify({ events: [{ kind: 'exposure', key: 'new-checkout', targetingKey: 'beacon-1', variant: 'on', timestamp: Date.now() }] }),
  );
  t.equal(exposed.status, 200, exposed.text);
  const batch = JSON.stringify({
    batchId: 'beacon-0001',
    events: [track('unload-metric', 'beacon-1', 2), track('unload-metric', 'beacon-1', 3)],
  });
  const answer = await post(batch);
  t.equal(answer.status, 200, answer.text);
  t.strictSame(answer.json, { accepted: 2, duplicates: 0, rejected: [] });
  const again = await post(batch, { 'content-type': 'text/plain' });
  t.strictSame(again.json, answer.json, 'sent again under its id: answered as the first time');
  const gzipped = await post(new Uint8Array(gzipSync(JSON.stringify({ events: [track('unload-metric', 'beacon-1', 5)] }))), {
    'content-encoding': 'gzip',
  });
  t.equal(gzipped.status, 200, gzipped.text);
  t.match(await metricOf('unload-metric'), [{ events: 3, subjects: 1, sum: '10' }], 'counted once each');
});

t.test('a text/plain body is held to the same checks: refused whole, in the envelope, nothing counted', async (t) => {
  const notJson = await post('{"events": [');
  t.equal(notJson.status, 400, notJson.text);
  t.match(notJson.json, { error: String, detail: /not valid JSON/ });
  const extra = await post(JSON.stringify({ events: [track('refused-metric', 'beacon-2')], sneaky: true }));
  t.equal(extra.status, 400, extra.text);
  const empty = await post(JSON.stringify({ events: [] }));
  t.equal(empty.status, 400, empty.text);
  t.match(empty.json.detail, /events must be an array of 1 to 1000 events/);
  const notUtf8 = await post(new Uint8Array([...Buffer.from('{"events": [{"key": "'), 0xff, ...Buffer.from('"}]}')]));
  t.equal(notUtf8.status, 400, notUtf8.text);
  const tooLarge = await post('x'.repeat(1024 * 1024 + 1));
  t.equal(tooLarge.status, 413, tooLarge.text);
  t.match(tooLarge.json, { error: 'Request body too large' });
  const noKey = await call(base, 'POST', '/ofrep/v1/events', {
    raw: JSON.stringify({ events: [track('refused-metric', 'beacon-2')] }),
    headers: { 'content-type': kBeacon },
  });
  t.equal(noKey.status, 401, noKey.text);
  t.strictSame(await metricOf('refused-metric'), [], 'nothing counted');
  const html = await post(JSON.stringify({ events: [track('refused-metric', 'beacon-2')] }), { 'content-type': 'text/html' });
  t.equal(html.status, 400, 'another media type is still refused');
});

t.test('as sendBeacon sends it: no header but its type, the client key as ?key=', async (t) => {
  // beacon-1 was exposed by the first test: its outcomes count.
  const batch = JSON.stringify({ events: [track('beacon-metric', 'beacon-1')] });
  const beacon = (key: string) =>
    call(base, 'POST', `/ofrep/v1/events?key=${encodeURIComponent(key)}`, { raw: batch, headers: { 'content-type': kBeacon } });
  const sent = await beacon(clientKey);
  t.equal(sent.status, 200, sent.text);
  t.match(await metricOf('beacon-metric'), [{ events: 1 }]);
  const wrong = await beacon('fwc_not-a-key');
  t.equal(wrong.status, 401, wrong.text);
  t.match(await metricOf('beacon-metric'), [{ events: 1 }], 'a wrong key counts nothing');
});

t.test('the OpenAPI document lists text/plain beside application/json', async (t) => {
  const document = (await call(base, 'GET', '/api/v1/openapi.json')).json;
  t.strictSame(Object.keys(document.paths['/ofrep/v1/events'].post.requestBody.content), ['application/json', 'text/plain']);
  t.strictSame(Object.keys(document.paths['/v1/data/collector'].post.requestBody.content), ['application/json'], 'not the collector');
});
