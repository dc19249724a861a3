// Events in (issue 58, item 2), in-process: a batch's shape refused whole (400) when it is not one; each
// bad event named by its index and reason, the good ones of the same batch kept; GO Feature Flag's
// collector body read as the same events; a body inflated from gzip within its bound (a small body that
// would inflate past it is refused as it passes it); the client key check of the events routes.
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { ClientKeyAccess } from '../../src/client-keys/access.js';
import { kClientKeyRecords } from '../../src/client-keys/records.js';
import { readEventsBody } from '../../src/events/body.js';
import { readEventBatch } from '../../src/events/event-batch.js';
import { readGoffCollectorBatch } from '../../src/events/goff-collector.js';
import { kMaxEventsPerBatch, kMaxInflatedBytes } from '../../src/events/schemas.js';
import { AuthFailures } from '../../src/http/auth-failures.js';
import { kOperator } from '../../src/actor/audit-actor.js';
import { jsonBody } from '../../src/model/request-body.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { buildWorld } from '../helpers/world.js';

const now = Date.UTC(2026, 10, 25, 12);
const exposure = { kind: 'exposure', key: 'new-checkout', targetingKey: 'u1', variant: 'on', timestamp: now - 1000 };
/** `event` without `key`: as JSON sends it (no key at all, never an undefined one). */
function without(event: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _gone, ...rest } = event;
  return rest;
}
const track = { kind: 'track', key: 'purchase', targetingKey: 'u1', value: 42.5, timestamp: now - 500 };

t.test('a good batch: every event read, value resolved, the batch id kept', async (t) => {
  const read = readEventBatch({ batchId: 'b-1', events: [exposure, track, without(track, 'value')] }, now);
  t.equal(read.batchId, 'b-1');
  t.strictSame(read.rejected, []);
  t.strictSame(read.events, [
    { kind: 'exposure', key: 'new-checkout', targetingKey: 'u1', variant: 'on', value: 0, details: null, timestamp: now - 1000 },
    { kind: 'track', key: 'purchase', targetingKey: 'u1', variant: null, value: 42.5, details: null, timestamp: now - 500 },
    { kind: 'track', key: 'purchase', targetingKey: 'u1', variant: null, value: 1, details: null, timestamp: now - 500 },
  ]);
  t.equal(readEventBatch({ events: [track] }, now).batchId, null);
});

t.test('bad events are named by index and reason; the good ones of the batch are kept', async (t) => {
  const bad: [unknown, RegExp][] = [
    ['not an object', /an event must be a JSON object/],
    [{ ...exposure, kind: 'click' }, /kind must be "exposure" or "track"/],
    [without(exposure, 'targetingKey'), /targetingKey is required/],
    [{ ...exposure, targetingKey: 'x'.repeat(257) }, /targetingKey must be a non-empty string of at most 256 characters/],
    [{ ...exposure, key: '' }, /key must be a non-empty string of at most 200 characters/],
    [without(exposure, 'variant'), /an exposure must name the variant served/],
    [{ ...exposure, value: 3 }, /an exposure carries no "value"/],
    [{ ...track, variant: 'on' }, /a track carries no "variant"/],
    [{ ...track, value: 1e10 }, /value must be a number between/],
    [{ ...track, value: '3' }, /value must be a number/],
    [{ ...track, details: { nested: { a: 1 } } }, /details.nested must be a string of at most 256 characters, a number, a boolean or null/],
    [
      { ...track, details: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, i])) },
      /details must be an object of at most 20/,
    ],
    [
      { ...track, details: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, 'x'.repeat(250)])) },
      /details must be at most 2048 bytes/,
    ],
    [{ ...track, timestamp: now - 8 * 24 * 3600 * 1000 }, /more than 7 days before/],
    [{ ...track, timestamp: now + 11 * 60 * 1000 }, /more than 10 minutes after/],
    [{ ...track, timestamp: 1.5 }, /timestamp must be a whole number of milliseconds/],
    [{ ...track, extra: true }, /unknown field "extra"/],
  ];
  const read = readEventBatch({ events: [exposure, ...bad.map(([event]) => event), track] }, now);
  t.equal(read.events.length, 2, 'the first and last kept');
  t.strictSame(
    read.rejected.map((r) => r.index),
    bad.map((_, i) => i + 1),
    'each bad one named by its index',
  );
  for (const [i, [event, reason]] of bad.entries()) t.match(read.rejected[i]!.reason, reason, JSON.stringify(event)?.slice(0, 80));
});

t.test('a body that is not a batch is refused whole', async (t) => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{}, /events is required/],
    [{ events: [] }, /events must be an array of 1 to 1000 events/],
    [{ events: Array.from({ length: kMaxEventsPerBatch + 1 }, () => track) }, /events must be an array of 1 to 1000 events/],
    [{ events: [track], batchId: '' }, /batchId must be a non-empty string of at most 64 characters/],
    [{ events: [track], other: 1 }, /unknown field "other"/],
  ];
  for (const [body, detail] of cases)
    t.throws(() => readEventBatch(body, now), { code: 'INVALID_REQUEST', detail }, JSON.stringify(body).slice(0, 60));
});

t.test("GO Feature Flag's collector body: feature events are exposures, tracking events tracks", async (t) => {
  const seconds = Math.floor(now / 1000) - 5;
  const read = readGoffCollectorBatch(
    {
      meta: { environment: 'prod' },
      events: [
        {
          kind: 'feature',
          contextKind: 'user',
          userKey: 'u1',
          creationDate: seconds,
          key: 'new-checkout',
          variation: 'on',
          value: true,
          default: false,
          version: '',
          source: 'PROVIDER_CACHE',
          metadata: { env: 'prod', deep: { a: 1 } },
        },
        {
          kind: 'tracking',
          contextKind: 'user',
          userKey: 'u1',
          creationDate: seconds,
          key: 'purchase',
          evaluationContext: { targetingKey: 'u1' },
          trackingEventDetails: { value: 19.99, currency: 'EUR' },
        },
        { kind: 'tracking', userKey: 'u2', creationDate: seconds, key: 'signup', trackingEventDetails: {} },
        {
          kind: 'feature',
          userKey: 'u3',
          creationDate: seconds,
          key: 'new-checkout',
          variation: 'SdkDefault',
          value: false,
          default: true,
        },
        { kind: 'custom', userKey: 'u3', creationDate: seconds, key: 'x' },
        { kind: 'feature', creationDate: seconds, key: 'new-checkout', variation: 'on' },
        { kind: 'feature', userKey: 'undefined-targetingKey', creationDate: seconds, key: 'new-checkout', variation: 'on' },
        { kind: 'tracking', userKey: 'undefined-targetingKey', creationDate: seconds, key: 'purchase', trackingEventDetails: {} },
      ],
    },
    now,
  );
  t.strictSame(read.events, [
    {
      kind: 'exposure',
      key: 'new-checkout',
      targetingKey: 'u1',
      variant: 'on',
      value: 0,
      details: { env: 'prod' },
      timestamp: seconds * 1000,
    },
    {
      kind: 'track',
      key: 'purchase',
      targetingKey: 'u1',
      variant: null,
      value: 19.99,
      details: { value: 19.99, currency: 'EUR' },
      timestamp: seconds * 1000,
    },
    { kind: 'track', key: 'signup', targetingKey: 'u2', variant: null, value: 1, details: {}, timestamp: seconds * 1000 },
  ]);
  t.strictSame(
    read.rejected.map((r) => r.index),
    [3, 4, 5, 6, 7],
  );
  t.match(read.rejected[0]!.reason, /"default": true/);
  t.match(read.rejected[1]!.reason, /kind must be "feature" or "tracking"/);
  t.match(read.rejected[2]!.reason, /targetingKey is required/);
  for (const keyless of read.rejected.slice(3)) {
    t.equal(keyless.reason, 'no targeting key (GO Feature Flag\'s "undefined-targetingKey"): an evaluation without one is no subject');
  }
  t.throws(() => readGoffCollectorBatch({ meta: {} }, now), { code: 'INVALID_REQUEST', detail: /events is required/ });
});

t.test('a body: as sent or gzipped, within the inflate bound; other encodings and bad gzip refused', async (t) => {
  const json = JSON.stringify({ events: [track] });
  t.strictSame(await readEventsBody(Buffer.from(json), '', 'application/json'), { events: [track] });
  t.strictSame(await readEventsBody(gzipSync(json), 'gzip', 'application/json'), { events: [track] }, 'gzip');
  // 20 MiB of JSON whitespace around a batch: some 20 KiB gzipped, far under the 1 MiB body cap.
  const bomb = gzipSync(
    Buffer.concat([Buffer.from('{"events": ['), Buffer.alloc(20 * 1024 * 1024, 0x20), Buffer.from(`${JSON.stringify(track)}]}`)]),
  );
  t.ok(bomb.length < 64 * 1024, `the bomb is small as sent: ${bomb.length} bytes`);
  await t.rejects(readEventsBody(bomb, 'gzip', 'application/json'), {
    code: 'PAYLOAD_TOO_LARGE',
    detail: `The body inflates to more than ${kMaxInflatedBytes} bytes (8 MiB); send fewer events per batch (at most 1,000).`,
  });
  await t.rejects(readEventsBody(Buffer.from('not gzip'), 'gzip', 'application/json'), {
    code: 'INVALID_REQUEST',
    detail: /not valid gzip/,
  });
  await t.rejects(readEventsBody(Buffer.from(json), 'br', 'application/json'), {
    code: 'INVALID_REQUEST',
    detail: /Content-Encoding must be gzip or none/,
  });
  await t.rejects(readEventsBody(Buffer.from(json), '', 'text/plain'), {
    code: 'INVALID_REQUEST',
    detail: /Content-Type must be application\/json/,
  });
  await t.rejects(readEventsBody(Buffer.from('{"events": ['), '', 'application/json'), {
    code: 'INVALID_REQUEST',
    detail: /not valid JSON/,
  });
});

t.test("the events routes' key check: a live client key with the use; else 401, or 403 without the use", async (t) => {
  const world = buildWorld(tempDir(t, 'flagwire-events-'));
  t.teardown(() => world.store.close());
  const made = world.run('clientKeyCreate', {
    principal: kOperator,
    projectId: world.ids.single,
    received: jsonBody(JSON.stringify({ name: 'web', uses: ['events'] })),
  });
  const access = new ClientKeyAccess(world.store, AuthFailures.create(1000));
  const grant = (authorization: string, apiKey = '') => access.grant(authorization, apiKey, 'events', '10.0.0.1', Date.now());
  t.equal(grant(`Bearer ${made.secret}`).id, made.id);
  t.equal(grant('', made.secret).id, made.id, "GO Feature Flag's X-API-Key");
  t.throws(() => grant(''), { code: 'MISSING_TOKEN' });
  t.throws(() => grant('Basic abc'), { code: 'MALFORMED_TOKEN' });
  t.throws(() => grant('Bearer fwc_short'), { code: 'MALFORMED_TOKEN' });
  t.throws(() => grant(`Bearer ${world.secrets.write}`), {
    code: 'UNKNOWN_TOKEN',
    detail: /This is an API token: API tokens never go in a browser or app/,
  });
  t.throws(() => grant(`Bearer fwc_${'x'.repeat(40)}`), { code: 'UNKNOWN_TOKEN', detail: /does not exist/ });
  const stored = world.store.transact((w) => w.listKeyed(kClientKeyRecords))[0]!;
  world.store.transact((w) => w.putKeyed(kClientKeyRecords, { ...stored, uses: [] }));
  t.throws(() => grant(`Bearer ${made.secret}`), {
    code: 'INSUFFICIENT_PERMISSION',
    detail: `Client key ${made.id} may not be used for events (its uses: none); make a key with the "events" use.`,
  });
  world.run('clientKeyRevoke', { principal: kOperator, keyId: made.id });
  t.throws(() => grant(`Bearer ${made.secret}`), { code: 'TOKEN_REVOKED' });
});
