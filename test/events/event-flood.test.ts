// A flooding project refused before its bodies are read (docs/events.md: Limits), against a real server
// at the lowest rate (FLAGWIRE_EVENTS_PER_SECOND=1000, one front-end thread so that a batch of 1,000 is
// a second's worth): once the rate refused a key's batch, its next batch is answered 429 with
// Retry-After from its headers, while its body has not been sent, in the words the rate uses; the
// connection stays open, the unread body is skipped and the next request on it answered; another
// project's events and evaluations are answered meanwhile; after Retry-After the batch counts.
import t from 'tap';
import { must, startExperimentServer } from '../helpers/experiment-server.js';
import { call } from '../helpers/http.js';
import { HangError, RawClient, type RawReply, rawRequest } from '../helpers/raw-http.js';

const { server, base, world, clientKey } = await startExperimentServer(t, {
  FLAGWIRE_EVENTS_PER_SECOND: '1000',
  FLAGWIRE_HTTP_THREADS: '1',
});
const other = must(
  await call(base, 'POST', '/api/v1/client-keys', { token: world.secrets.writeB, body: { name: 'b', uses: ['events'] } }),
  201,
).secret as string;

const batch = (id: string) =>
  JSON.stringify({
    batchId: id,
    events: Array.from({ length: 1000 }, (_, i) => ({ kind: 'track', key: 'views', targetingKey: `${id}-${i}`, timestamp: Date.now() })),
  });
const eventsHead = (key: string, length: number) =>
  rawRequest('POST', '/ofrep/v1/events', [
    ['Host', 'localhost'],
    ['Authorization', `Bearer ${key}`],
    ['Content-Type', 'application/json'],
    ['Content-Length', String(length)],
  ]);
const evaluation = () => {
  const body = JSON.stringify({ context: { targetingKey: 'someone' } });
  return rawRequest(
    'POST',
    '/ofrep/v1/evaluate/flags/new-checkout',
    [
      ['Host', 'localhost'],
      ['Content-Type', 'application/json'],
      ['X-Flagwire-Project', world.ids.single],
      ['Content-Length', String(Buffer.byteLength(body))],
    ],
    body,
  );
};

// Near the 1 MiB cap: a body the node would buffer whole, had it read it. JSON may end in white space.
const kLength = 1_000_000;
const slow = Buffer.from(batch('slow').padEnd(kLength, ' '));
const kSent = 1000;

t.test("a flooding key's next batch is refused from its headers; its body is never read", async (t) => {
  const client = new RawClient(server.port);
  t.teardown(() => client.close());
  let early: RawReply | null = null;
  // The refusal holds for up to a second (the bucket refilling a batch's worth): a machine stalled past
  // it between two requests reads the slow body instead, which is then sent whole and the flood begun again.
  for (let attempt = 0; attempt < 5 && early === null; attempt++) {
    let n = 0;
    let status = 200;
    while (status !== 429) {
      const body = batch(`flood-${attempt}-${n++}`);
      status = (await client.request(Buffer.concat([eventsHead(clientKey, Buffer.byteLength(body)), Buffer.from(body)]))).status;
      t.ok(status === 200 || status === 429, `flooding: ${status}`);
    }
    try {
      early = await client.request(Buffer.concat([eventsHead(clientKey, kLength), slow.subarray(0, kSent)]), { timeoutMs: 5000 });
    } catch (err) {
      if (!(err instanceof HangError)) throw err;
      t.comment(`attempt ${attempt}: the refusal had expired, the body was read`);
      await client.request(slow.subarray(kSent));
    }
  }
  if (early === null) throw new Error('never refused before the body was sent');
  t.equal(early.status, 429, 'refused with 1,000 of its 1,000,000 bytes sent');
  const retryAfter = Number(early.headers.get('retry-after'));
  t.equal(retryAfter, 1, "Retry-After 1: the bucket refills a batch's worth within a second");
  t.match(early.headers.get('content-type'), /^application\/json/);
  t.match(JSON.parse(early.body.toString()), {
    error: 'Too many events',
    detail:
      /more than 1000 events a second; nothing of this batch was counted\. Send it again after 1 s \(Retry-After\), under the same batch id\./,
  });
  t.notOk(early.closed, 'the connection stays open');

  // Meanwhile, with the body unfinished: another project's events, and evaluations.
  const elsewhere = await call(base, 'POST', '/ofrep/v1/events', {
    token: other,
    body: { events: [{ kind: 'track', key: 'views', targetingKey: 'b1', timestamp: Date.now() }] },
  });
  t.equal(elsewhere.status, 200, "another project's events are counted");
  const evaluated = await call(base, 'POST', '/ofrep/v1/evaluate/flags/new-checkout', {
    body: { context: { targetingKey: 'someone' } },
    headers: { 'x-flagwire-project': world.ids.single },
  });
  t.equal(evaluated.status, 200, 'evaluations are answered');

  // The rest of the body, then another request on the same connection: the body is skipped, unread.
  const next = await client.request(Buffer.concat([slow.subarray(kSent), evaluation()]));
  t.equal(next.status, 200, 'the next request on the connection is answered');
  t.match(JSON.parse(next.body.toString()), { key: 'new-checkout' }, 'it is the evaluation');

  // A client that waits the Retry-After has its batch read and counted.
  await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
  const again = await client.request(Buffer.concat([eventsHead(clientKey, kLength), slow]));
  t.equal(again.status, 200, `after Retry-After the batch counts: ${again.body.toString().slice(0, 200)}`);
  t.match(JSON.parse(again.body.toString()), { accepted: 1000, rejected: [] });
});

t.test('a key that names no project is read and refused 401 as before', async (t) => {
  const unknown = `fwc_${'x'.repeat(32)}`;
  const r = await call(base, 'POST', '/ofrep/v1/events', {
    token: unknown,
    body: { events: [{ kind: 'track', key: 'views', targetingKey: 'x', timestamp: Date.now() }] },
  });
  t.equal(r.status, 401, r.text);
});
