// Black-box (issue 58, item 3): the stock @openfeature/flagd-provider (npm, unmodified, in-process mode,
// fed by a real Flagwire's sync service) and the stock @openfeature/server-sdk, with FlagwireEvents' hook
// on the client, send exposures: many subjects, each evaluated several times, on a boolean flag whose
// experiment the percentage split allocates and a typed flag whose experiment its rule allocates, with
// cohort-override subjects beside them. The experiments' statistics then hold each subject OFREP calls an
// exposure (inExperiment: true) exactly once, in the variant OFREP gives it, and no other subject: no
// cohort override, nobody the rule gave no variant. flagd answers each as OFREP does in value, and in
// variant once the exposure marker is taken off.
import { FlagdProvider } from '@openfeature/flagd-provider';
import { type EvaluationContext, OpenFeature } from '@openfeature/server-sdk';
import t from 'tap';
import { FlagwireEvents } from '../../src/provider/events.js';
import { must, startExperimentServer } from '../helpers/experiment-server.js';
import { call } from '../helpers/http.js';
import { kFlagdDeadlineMs } from '../helpers/flagd-provider.js';

const { server, base, world, clientKey } = await startExperimentServer(t, {}, 'free');
const { ids, secrets } = world;
t.teardown(() => OpenFeature.close());

const kSplit = { name: 'flagd-checkout', experiment: 'flagd-split' };
const kRule = { name: 'flagd-colour', experiment: 'flagd-rule' };
must(
  await call(base, 'POST', '/api/v1/flags', {
    token: secrets.write,
    body: { ...kSplit, enabled: true, trafficPercentage: 50, bucketing: 'fractional', cohorts: ['vip'] },
  }),
  201,
);
must(
  await call(base, 'POST', '/api/v1/flags', {
    token: secrets.write,
    body: {
      ...kRule,
      enabled: true,
      trafficPercentage: 100,
      cohorts: ['vip'],
      variants: { red: '#d33', blue: '#22d', green: '#2a2' },
      defaultVariant: 'red',
      // Staff get no variant from the rule (DEFAULT): no exposure; everyone else is allocated by it.
      targeting: {
        if: [
          { ends_with: [{ var: 'email' }, '@staff.test'] },
          null,
          {
            fractional: [
              ['red', 34],
              ['blue', 33],
              ['green', 33],
            ],
          },
        ],
      },
    },
  }),
  201,
);

const statistics = async (experiment: string): Promise<Record<string, number>> => {
  const stats = must(await call(base, 'GET', `/api/v1/experiments/${experiment}/statistics`, { token: secrets.read }), 200);
  return Object.fromEntries(
    (stats.variants as { variant: string; subjects: number }[]).filter((v) => v.subjects > 0).map((v) => [v.variant, v.subjects]),
  );
};

/** OFREP's answer for a flag of the single project. */
async function ofrep(name: string, context: EvaluationContext) {
  const r = await call(base, 'POST', `/ofrep/v1/evaluate/flags/${name}`, {
    body: { context },
    headers: { 'X-Flagwire-Project': ids.single },
  });
  return r.json as { value: unknown; variant: string; metadata: { inExperiment: boolean } };
}

t.test('the stock flagd provider with the events hook: each allocated subject exposed once, in its OFREP variant', async (t) => {
  const sent: { kind: string; key: string; targetingKey: string; variant: string }[] = [];
  const events = new FlagwireEvents({
    url: base,
    clientKey,
    onError: (err) => t.fail(err.message),
    fetch: async (input, init) => {
      sent.push(...(JSON.parse(String(init?.body)) as { events: typeof sent }).events);
      return fetch(input, init);
    },
  });
  const provider = new FlagdProvider({
    resolverType: 'in-process',
    deadlineMs: kFlagdDeadlineMs,
    host: '127.0.0.1',
    port: server.syncPort,
    selector: `flagSetId=${ids.single},token=${secrets.read}`,
  });
  await OpenFeature.setProviderAndWait('flagd-events', provider);
  const client = OpenFeature.getClient('flagd-events');
  client.addHooks(events.hook);

  const contexts: EvaluationContext[] = [
    ...Array.from({ length: 60 }, (_, i) => ({ targetingKey: `user-${i}` })),
    ...Array.from({ length: 10 }, (_, i) => ({ targetingKey: `staff-${i}`, email: `s${i}@staff.test` })),
    ...Array.from({ length: 12 }, (_, i) => ({ targetingKey: `vip-${i}`, cohort: 'vip' })),
  ];
  // What OFREP says of each subject: the exposures expected, per flag, as "subject variant".
  const expected: Record<string, string[]> = { [kSplit.name]: [], [kRule.name]: [] };
  const arms: Record<string, Record<string, number>> = { [kSplit.name]: {}, [kRule.name]: {} };
  for (const context of contexts) {
    for (const name of [kSplit.name, kRule.name]) {
      const answer = await ofrep(name, context);
      if (answer.metadata.inExperiment) {
        expected[name]!.push(`${context.targetingKey} ${answer.variant}`);
        arms[name]![answer.variant] = (arms[name]![answer.variant] ?? 0) + 1;
      }
      for (let round = 0; round < 3; round++) {
        const details =
          name === kSplit.name
            ? await client.getBooleanDetails(name, false, context)
            : await client.getStringDetails(name, 'caller-default', context);
        t.equal(details.value, answer.value, `${name} ${JSON.stringify(context)}: OFREP's value`);
        t.equal(details.variant?.replace(/~$/, ''), answer.variant, "OFREP's variant, the marker taken off");
        t.equal(details.variant?.endsWith('~'), answer.metadata.inExperiment, 'marked exactly where OFREP says inExperiment');
      }
    }
  }
  await events.close();

  for (const name of [kSplit.name, kRule.name]) {
    const exposures = sent.filter((e) => e.kind === 'exposure' && e.key === name).map((e) => `${e.targetingKey} ${e.variant}`);
    t.same(exposures.sort(), expected[name]!.sort(), `${name}: one exposure per allocated subject, in its variant`);
  }
  t.equal(expected[kSplit.name]!.length, 70, 'the split allocates every subject with a key but the cohort overrides');
  t.equal(expected[kRule.name]!.length, 60, 'the rule allocates all but the staff (no variant) and the cohort overrides');
  t.equal(Object.keys(arms[kSplit.name]!).length, 2, 'both arms of the split were served');
  t.equal(Object.keys(arms[kRule.name]!).length, 3, 'every variant of the rule was served');
  t.same(await statistics(kSplit.experiment), arms[kSplit.name], "the split's statistics: each subject once, in its OFREP variant");
  t.same(await statistics(kRule.experiment), arms[kRule.name], "the rule's statistics: each subject once, in its OFREP variant");
});
