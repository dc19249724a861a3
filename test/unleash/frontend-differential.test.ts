// Black-box, against a real Unleash (unleash-server 7.5.1: test/helpers/unleash-server.ts): the
// differential of issue 60 on its first 2,000 contexts (test/helpers/unleash-differential.ts; the million
// is bench/unleash-differential.bench.ts's): flags of every shape Unleash 7.5 makes, imported with
// `flagwire import unleash --url`, each context asked of Flagwire's front-end API and of the stock
// unleash-client evaluating Unleash's own flags locally; not one answer differs.
import t from 'tap';
import { sharedPostgres } from '../helpers/postgres.js';
import { scratchDir } from '../helpers/scratch-dir.js';
import { startTestServer } from '../helpers/server.js';
import { importForDifferential, kDifferentialEnv, runDifferential, seedDifferentialFlags } from '../helpers/unleash-differential.js';
import { startUnleash } from '../helpers/unleash-server.js';
import { startUnleashSdk } from '../helpers/unleash-sdk.js';

const kContexts = 2_000;

t.test("2,000 generated contexts: Flagwire's front-end API answers every imported flag as the stock SDK on Unleash", async (t) => {
  const unleash = await startUnleash(t, await sharedPostgres(), [{ project: 'default', environment: kDifferentialEnv }]);
  const names = await seedDifferentialFlags(unleash);
  const dir = scratchDir('flagwire-unleash-differential-');
  const { frontendKey } = await importForDifferential(unleash, dir);
  const server = await startTestServer({ dataDir: dir });
  t.teardown(() => server.stop());
  const sdk = await startUnleashSdk(t, unleash.baseUrl, unleash.clientToken('default', kDifferentialEnv), 'differential');
  t.same((sdk.getFeatureToggleDefinitions() ?? []).map((f) => f.name).sort(), [...names].sort(), 'the SDK on Unleash has every flag made');
  const mismatches: string[] = [];
  const trues = new Map<string, number>();
  const { contexts, compared } = await runDifferential({
    baseUrl: server.baseUrl,
    frontendKey,
    sdk,
    names,
    from: 0,
    count: kContexts,
    concurrency: 8,
    onMismatch: (line) => mismatches.push(line),
    onAnswer: (name, enabled) => {
      if (enabled) trues.set(name, (trues.get(name) ?? 0) + 1);
    },
  });
  t.equal(contexts, kContexts);
  t.equal(compared, kContexts * names.length, 'every flag for every context');
  t.same(mismatches.slice(0, 20), [], `no answer differs (${mismatches.length} of ${compared} did)`);
  // Not all one value: every flag on in Unleash lets some contexts in, and each targeted one keeps some out.
  for (const name of names.filter((n) => n !== 'off')) t.ok((trues.get(name) ?? 0) > 0, `${name}: some context gets it`);
  // everyone and variants (a rollout of 100%) are on for every context.
  for (const name of names.filter((n) => !['everyone', 'variants', 'off'].includes(n)))
    t.ok((trues.get(name) ?? 0) < kContexts, `${name}: some context is kept out`);
  t.equal(trues.get('off'), undefined, 'off: no context gets it');
});
