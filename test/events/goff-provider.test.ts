// GO Feature Flag's stock OpenFeature provider (@openfeature/go-feature-flag-provider, its own
// GoFeatureFlagDataCollectorHook) sending its collector bodies to a real Flagwire's POST /v1/data/collector
// (issue 58, item 2; docs/events.md). The provider evaluates through GO Feature Flag's API, which a relay
// proxy in the test answers from Flagwire's OFREP (test/helpers/goff-relay-proxy.ts); the collector bodies
// go through it to Flagwire byte for byte. Many subjects evaluated on a boolean and a typed flag running
// experiments, flushed by the hook's own timer: each subject is exposed once, in the variant it got; the
// same subjects flushed again add nothing; an evaluation that failed (the hook's error stage,
// `"default": true`) is rejected, not counted; so are evaluations without a targeting key (the hook's
// "undefined-targetingKey"), which would otherwise be one subject; the client key with the events use is what authenticates:
// a wrong key's send is refused 401, a key without the events use 403, and nothing is counted.
import { GoFeatureFlagProvider } from '@openfeature/go-feature-flag-provider';
import { type Logger, OpenFeature } from '@openfeature/server-sdk';
import t, { type Test } from 'tap';
import { call } from '../helpers/http.js';
import { kColourFlag, must, startExperimentServer } from '../helpers/experiment-server.js';
import { type CollectorExchange, startGoffRelayProxy } from '../helpers/goff-relay-proxy.js';

const { base, world, clientKey } = await startExperimentServer(t);
const { ids, secrets } = world;
/** The typed flag, split between its variants on the targeting key (flagd's `fractional`). */
const kSplitColour = {
  ...kColourFlag,
  targeting: {
    fractional: [
      ['red', 50],
      ['blue', 50],
    ],
  },
};
must(await call(base, 'POST', '/api/v1/flags', { token: secrets.write, body: kSplitColour }), 201);
const relay = await startGoffRelayProxy(base, ids.single);
t.teardown(async () => {
  await OpenFeature.close();
  await relay.close();
});

type Variants = Record<string, number>;
/** An experiment's subjects per variant, as Flagwire's statistics say. */
const subjects = async (experiment: string): Promise<Variants> => {
  const stats = must(await call(base, 'GET', `/api/v1/experiments/${experiment}/statistics`, { token: secrets.read }), 200);
  return Object.fromEntries(stats.variants.map((v: { variant: string; subjects: number }) => [v.variant, v.subjects]));
};
const experiments = async () => ({ checkout: await subjects('checkout-2026'), colour: await subjects(kColourFlag.experiment) });

interface GoffEvent {
  kind: string;
  userKey: string;
  key: string;
  variation: string;
  value: unknown;
  default: boolean;
  creationDate: number;
  contextKind: string;
}
const bodyOf = (exchange: CollectorExchange) => JSON.parse(exchange.body.toString()) as { events: GoffEvent[]; meta: unknown };
const answerOf = (exchange: CollectorExchange) =>
  JSON.parse(exchange.answer) as {
    duplicates: number;
    rejected: { index: number; reason: string }[];
    ingestedContentCount: number;
  };
const sum = (exchanges: CollectorExchange[], field: 'duplicates' | 'ingestedContentCount') =>
  exchanges.reduce((total, exchange) => total + answerOf(exchange)[field], 0);

/** A logger that keeps the provider's errors (the stock hook logs a send it could not make, and keeps its events). */
function keptErrors(): { logger: Logger; errors: string[] } {
  const errors: string[] = [];
  const ignore = () => {};
  return { errors, logger: { error: (...args: unknown[]) => errors.push(args.join(' ')), warn: ignore, info: ignore, debug: ignore } };
}

const kSubjects = Array.from({ length: 60 }, (_, i) => `goff-user-${i}`);

t.test("the stock hook's events: each subject exposed once in the variant it got; flushed again, nothing added", async (t) => {
  const { logger, errors } = keptErrors();
  // The hook flushes on its own timer, as deployed; its apiKey is set on axios' defaults, so both its
  // evaluations and its collector sends carry `Authorization: Bearer <the client key>`.
  const provider = new GoFeatureFlagProvider({ endpoint: relay.url, apiKey: clientKey, dataFlushInterval: 100 }, logger);
  await OpenFeature.setProviderAndWait('goff', provider);
  const client = OpenFeature.getClient('goff');
  const started = Date.now();
  const got = { checkout: {} as Variants, colour: {} as Variants };
  const served = new Map<string, string>();
  /** Every subject on both flags; `cached`: what the stock hook needs to send an event (0.7.0 sends only those). */
  const evaluateAll = async (cached: boolean) => {
    for (const subject of kSubjects) {
      const checkout = await client.getBooleanDetails('new-checkout', false, { targetingKey: subject, plan: 'pro' });
      const colour = await client.getStringDetails(kColourFlag.name, 'none', { targetingKey: subject });
      for (const [flag, details, tally] of [
        ['new-checkout', checkout, got.checkout],
        [kColourFlag.name, colour, got.colour],
      ] as const) {
        if (details.errorCode !== undefined) t.fail(`${flag} for ${subject}: ${details.errorCode} ${details.errorMessage}`);
        else if (!cached) {
          served.set(`${flag}/${subject}`, details.variant!);
          tally[details.variant!] = (tally[details.variant!] ?? 0) + 1;
        } else if (details.reason !== 'CACHED' || details.variant !== served.get(`${flag}/${subject}`))
          t.fail(`${flag} for ${subject}: ${details.reason} ${details.variant}, not the cached ${served.get(`${flag}/${subject}`)}`);
      }
    }
  };
  await evaluateAll(false);
  await evaluateAll(true);
  await relay.waitForEvents(2 * kSubjects.length);
  const first = [...relay.exchanges];
  const finished = Date.now();

  // The bodies are the stock hook's: what docs/events.md says it sends.
  const events = first.flatMap((exchange) => bodyOf(exchange).events);
  t.equal(events.length, 2 * kSubjects.length, 'one event per cached evaluation');
  t.ok(
    first.every((exchange) => exchange.headers.authorization === `Bearer ${clientKey}`),
    'sent with the client key as its bearer',
  );
  t.strictSame(new Set(first.map((exchange) => JSON.stringify(bodyOf(exchange).meta))), new Set(['{"provider":"open-feature-js-sdk"}']));
  for (const event of events) {
    const seconds = event.creationDate;
    if (
      event.kind !== 'feature' ||
      event.default !== false ||
      event.contextKind !== 'user' ||
      event.variation !== served.get(`${event.key}/${event.userKey}`) ||
      !Number.isInteger(seconds) ||
      seconds < Math.floor(started / 1000) ||
      seconds > Math.ceil(finished / 1000)
    )
      t.fail(`not the feature event expected: ${JSON.stringify(event)}`);
  }
  t.strictSame(
    new Set(events.map((event) => typeof event.value)),
    new Set(['boolean', 'string']),
    'each carries the value served (which Flagwire does not need)',
  );

  t.ok(
    first.every((exchange) => exchange.status === 200 && answerOf(exchange).rejected.length === 0),
    `every send counted: ${first.map((exchange) => `${exchange.status} ${exchange.answer}`)}`,
  );
  t.equal(sum(first, 'ingestedContentCount'), 2 * kSubjects.length, "GO Feature Flag's count: every event");
  t.equal(sum(first, 'duplicates'), 0, 'none already counted');
  t.ok(Object.keys(got.checkout).length === 2 && Object.keys(got.colour).length === 2, 'both variants of each flag were served');
  t.strictSame(await experiments(), got, 'each subject exposed once, in the variant it was served');

  // The same subjects again: the hook sends them again (cached evaluations), and nothing changes.
  await evaluateAll(true);
  await relay.waitForEvents(4 * kSubjects.length);
  const second = relay.exchanges.slice(first.length);
  t.ok(
    second.every((exchange) => exchange.status === 200 && answerOf(exchange).rejected.length === 0),
    second.map((exchange) => exchange.answer).join(' '),
  );
  t.equal(sum(second, 'duplicates'), 2 * kSubjects.length, 'every exposure a duplicate');
  t.strictSame(await experiments(), got, 'the statistics unchanged');
  t.strictSame(errors, [], 'the provider logged no error');
});

/**
 * Each of the two events `exchanges` carried was answered 200 and rejected for `reason`; none was counted,
 * and the statistics are what they were `before`.
 */
async function allRejected(t: Test, exchanges: CollectorExchange[], reason: string, before: unknown): Promise<void> {
  t.ok(
    exchanges.every((exchange) => exchange.status === 200),
    exchanges.map((exchange) => exchange.answer).join(' '),
  );
  t.equal(sum(exchanges, 'ingestedContentCount'), 0, 'none counted');
  t.strictSame(
    exchanges.flatMap((exchange) => answerOf(exchange).rejected.map((rejection) => rejection.reason)),
    [reason, reason],
    'each rejected, named',
  );
  t.strictSame(await experiments(), before, 'the statistics unchanged');
}

t.test('an evaluation that failed (the hook\'s error stage, "default": true) is rejected, not counted', async (t) => {
  const before = await experiments();
  const sent = relay.exchanges.length;
  // Counted before the evaluations: the hook flushes every 100 ms, so the first one's event may be sent
  // before the second is made (a count taken after them then waited for an event too many).
  const counted = relay.eventsSent();
  const client = OpenFeature.getClient('goff');
  // The experiment's flag asked as a number (GO Feature Flag's provider: a type mismatch), and a flag that is not there.
  const mismatch = await client.getNumberDetails('new-checkout', 7, { targetingKey: 'goff-failed-1' });
  t.equal(mismatch.errorCode, 'TYPE_MISMATCH');
  const missing = await client.getBooleanDetails('no-such-flag', false, { targetingKey: 'goff-failed-2' });
  t.equal(missing.errorCode, 'FLAG_NOT_FOUND');
  await relay.waitForEvents(counted + 2);
  const failed = relay.exchanges.slice(sent);
  const events = failed.flatMap((exchange) => bodyOf(exchange).events);
  t.match(events, [
    { kind: 'feature', key: 'new-checkout', userKey: 'goff-failed-1', default: true, value: 7, variation: 'SdkDefault' },
    { kind: 'feature', key: 'no-such-flag', userKey: 'goff-failed-2', default: true, value: false, variation: 'SdkDefault' },
  ]);
  await allRejected(t, failed, 'the evaluation failed ("default": true): the caller\'s default was served, which is no exposure', before);
});

t.test('evaluations without a targeting key (the hook\'s "undefined-targetingKey") are rejected, not one subject', async (t) => {
  const before = await experiments();
  const sent = relay.exchanges.length;
  const counted = relay.eventsSent();
  const client = OpenFeature.getClient('goff');
  // Two contexts without a key, each evaluated twice: the second, from the cache, is what the hook sends.
  for (let round = 0; round < 2; round++) {
    for (const plan of ['free', 'pro']) await client.getBooleanDetails('new-checkout', false, { plan });
  }
  await relay.waitForEvents(counted + 2);
  const keyless = relay.exchanges.slice(sent);
  t.strictSame(
    keyless.flatMap((exchange) => bodyOf(exchange).events.map((event) => event.userKey)),
    ['undefined-targetingKey', 'undefined-targetingKey'],
  );
  await allRejected(
    t,
    keyless,
    'no targeting key (GO Feature Flag\'s "undefined-targetingKey"): an evaluation without one is no subject',
    before,
  );
});

t.test(
  'the client key with the events use is what authenticates: a wrong key 401, a key without the use 403, nothing counted',
  async (t) => {
    // The first provider closed and dropped first: its apiKey, on axios' shared defaults, is about to change.
    await OpenFeature.clearProviders();
    const before = await experiments();
    const frontend = must(
      await call(base, 'POST', '/api/v1/client-keys', { token: secrets.write, body: { name: 'web', uses: ['frontend'] } }),
      201,
    );
    for (const [name, apiKey, status] of [
      ['wrong', `fwc_${'x'.repeat(40)}`, 401],
      ['frontend-only', frontend.secret as string, 403],
    ] as const) {
      const { logger, errors } = keptErrors();
      // No timer flush: the send is the close's, once (a refused one goes back into the hook's buffer, and
      // the provider is dropped with it).
      const provider = new GoFeatureFlagProvider({ endpoint: relay.url, apiKey, dataFlushInterval: 600_000 }, logger);
      await OpenFeature.setProviderAndWait(`goff-${name}`, provider);
      const client = OpenFeature.getClient(`goff-${name}`);
      for (let round = 0; round < 2; round++) {
        for (const subject of [`goff-${name}-1`, `goff-${name}-2`])
          await client.getBooleanDetails('new-checkout', false, { targetingKey: subject });
      }
      const sent = relay.exchanges.length;
      await OpenFeature.clearProviders();
      const refused = relay.exchanges.slice(sent);
      t.equal(refused.length, 1, `${name}: one send`);
      t.equal(refused[0]?.headers.authorization, `Bearer ${apiKey}`);
      t.equal(bodyOf(refused[0]!).events.length, 2, `${name}: the two cached evaluations`);
      t.equal(refused[0]?.status, status, `${name}: ${refused[0]?.answer}`);
      t.match(errors, [new RegExp(`impossible to send the data to the collector: .*status code ${status}`)], `${name}: the hook logged it`);
    }
    t.strictSame(await experiments(), before, 'the statistics unchanged');
  },
);
