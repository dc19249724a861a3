// In-process: the equivalence the client API rests on (issue 60, item 2; docs/decisions.md: "The same
// bucket, checked, not assumed"), bit for bit. A Flagwire flag at P% is served as Unleash's
// flexibleRollout {rollout: P, stickiness: default, groupId: the flag's id}; the stock Node SDK lets a
// userId in when murmur3(groupId + ":" + userId, 0) % 100 + 1 <= P, and Flagwire when its bucket,
// murmur3(utf8(flagId + ":" + key), 0) % 100, is below P. Here, with the stock SDK's own code
// (unleash-client 6.12: its murmurhash3js, its normalizedStrategyValue and its FlexibleRolloutStrategy):
//   - the 32-bit hash is the same, for generated flag ids (as flagCreate makes them) and ASCII keys;
//   - the strategy Flagwire serves for a flag at every percentage 0-100, given to the SDK's strategy,
//     lets in exactly the keys Flagwire's engine lets in;
//   - Unleash's variant hash (seed 86028157), which Flagwire's model evaluates, is the SDK's too;
//   - beyond ASCII the Node SDK hashes UTF-16 code units cut to a byte, not UTF-8: its hash differs
//     for such keys, as docs/api.md says (Flagwire's UTF-8 hash is checked against independent vectors in
//     test/fixtures/bucket-vectors.json).
import { createRequire } from 'node:module';
import fc from 'fast-check';
import t from 'tap';
import { normalizedStrategyValue, normalizedVariantValue } from 'unleash-client/lib/strategy/util.js';
import { bucketPrefix, keyHash } from '../../src/bytes/bucket-hash.js';
import { bucket } from '../../src/evaluation/engine/bucket.js';
import { compileState, evaluateState, type EvalContext } from '../../src/evaluation/engine/evaluate.js';
import { randomId } from '../../src/model/ids.js';
import { type ClientFeaturesInput, featureInUnleash } from '../../src/unleash/client-features.js';
import { singleFlagRecord } from '../helpers/flag-record.js';

const require = createRequire(import.meta.url);
// The SDK's own hash and strategy, resolved from where the SDK is: the code that runs in an application.
const sdkRequire = createRequire(require.resolve('unleash-client'));
const murmurhash3js = sdkRequire('murmurhash3js') as { x86: { hash32(text: string, seed?: number): number } };
const { default: FlexibleRolloutStrategy } = require('unleash-client/lib/strategy/flexible-rollout-strategy.js') as {
  default: new () => { isEnabled(parameters: Record<string, string>, context: { userId?: string }): boolean };
};

const kVariantSeed = 86028157;
const seed = Number(process.env.FLAGWIRE_FUZZ_SEED ?? Date.now() % 2 ** 31);
const flagId = fc.constant(null).map(() => `flg_${randomId(16)}`);
const asciiKey = fc.string({ unit: 'binary-ascii', maxLength: 64 });

t.test('the 32-bit hash and the bucket: the SDK’s and Flagwire’s agree bit for bit on ASCII keys', async (t) => {
  let checked = 0;
  fc.assert(
    fc.property(flagId, asciiKey, (id, key) => {
      const flagwire = keyHash(bucketPrefix(id), key);
      const sdk = murmurhash3js.x86.hash32(`${id}:${key}`, 0);
      if (flagwire !== sdk) throw new Error(`hash of ${JSON.stringify(`${id}:${key}`)}: Flagwire ${flagwire}, the SDK ${sdk}`);
      // Unleash's normalized value counts from 1, Flagwire's bucket from 0.
      if (normalizedStrategyValue(key, id) !== bucket(id, key) + 1) throw new Error(`bucket of ${id}:${key}`);
      // The variant hash of Unleash's model (src/unleash/rules/feature.ts), whole: % 2^32 leaves it as it is.
      const variant = keyHash(bucketPrefix(id, kVariantSeed), key);
      if (normalizedVariantValue(key, id, 2 ** 32) !== variant + 1) throw new Error(`variant hash of ${id}:${key}`);
      checked++;
    }),
    { numRuns: 20_000, seed },
  );
  t.equal(checked, 20_000, `20,000 generated ids and keys (seed ${seed})`);
});

const kInput: ClientFeaturesInput = {
  environment: null,
  projectId: 'prj_hash',
  flags: [],
  audiences: [],
  audiencesAllowed: true,
  namePrefix: '',
};

const keyed = (targetingKey: string): EvalContext => ({ cohort: null, targetingKey, attribute: () => undefined });
const never = () => {
  throw new Error('a keyed caller is never rolled for');
};

t.test('every percentage: the strategy served, run by the SDK’s FlexibleRolloutStrategy, lets in the keys Flagwire does', async (t) => {
  const strategy = new FlexibleRolloutStrategy();
  const keys = fc.sample(fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 40 }), { numRuns: 300, seed });
  let compared = 0;
  let inBoth = 0;
  for (let run = 0; run < 5; run++) {
    const id = `flg_${randomId(16)}`;
    for (let percentage = 0; percentage <= 100; percentage++) {
      const flag = singleFlagRecord(id, 'prj_hash', 'rollout', { trafficPercentage: percentage });
      const served = featureInUnleash(flag, kInput);
      if (typeof served === 'string') throw new Error(`left out at ${percentage}%: ${served}`);
      const rollout = served.strategies.find((s) => s.name === 'flexibleRollout')?.parameters as Record<string, string> | undefined;
      // 0% is no strategy (the feature disabled), 100% the default strategy; between, one flexibleRollout.
      if (percentage === 0) t.same([served.enabled, served.strategies], [false, []], '0%: disabled');
      else if (percentage === 100) t.same(served.strategies, [{ name: 'default', parameters: {}, constraints: [] }], '100%: default');
      else t.same(rollout, { rollout: String(percentage), stickiness: 'default', groupId: id }, `${percentage}%`);
      const compiled = compileState(
        id,
        { enabled: true, trafficPercentage: percentage, cohorts: [], audienceId: null },
        undefined,
        undefined,
      );
      for (const key of keys) {
        const sdk = !served.enabled ? false : rollout === undefined ? true : strategy.isEnabled(rollout, { userId: key });
        const flagwire = evaluateState(compiled, keyed(key), never);
        if (sdk !== flagwire) throw new Error(`${id} at ${percentage}% for ${JSON.stringify(key)}: the SDK ${sdk}, Flagwire ${flagwire}`);
        if (sdk) inBoth++;
        compared++;
      }
    }
  }
  t.equal(compared, 5 * 101 * keys.length, 'five flags, every percentage, every key');
  // Half the answers on, about: the comparison is not all one value.
  t.ok(inBoth > compared * 0.4 && inBoth < compared * 0.6, `${inBoth} of ${compared} on`);
});

t.test('beyond ASCII the Node SDK hashes otherwise, as docs/api.md says', async (t) => {
  const id = 'flg_cHQLsDzwqQaBEiBh';
  const differs = ['é', 'ünïcode', '用户', '🚀'].filter(
    (key) => keyHash(bucketPrefix(id), key) !== murmurhash3js.x86.hash32(`${id}:${key}`, 0),
  );
  t.same(differs, ['é', 'ünïcode', '用户', '🚀'], 'each such key hashes differently in the Node SDK');
});
