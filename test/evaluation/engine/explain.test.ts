// The playground's explanation (src/evaluation/engine/explain.ts) against a real store, in-process: every rule that can
// decide, named with what it read, and its answer equal to the engine's own (GET /v1/flags/{id}) for the
// same query string, over many targeting keys and attribute sets, boolean and typed flags alike.
import t from 'tap';
import { bucket } from '../../../src/evaluation/engine/bucket.js';
import { type EvalState, stateInEnv } from '../../../src/evaluation/engine/engine.js';
import { explainState } from '../../../src/evaluation/engine/explain.js';
import { EvalQuery } from '../../../src/evaluation/engine/query.js';
import { kOperator } from '../../../src/actor/audit-actor.js';
import { engineOverWorld } from './eval-world.js';

const { world, ids, engine, answer } = engineOverWorld(t);
const create = (body: Record<string, unknown>) =>
  world.run('flagCreate', { projectId: ids.single, body: body as never, principal: kOperator }).id;
const tier = create({
  name: 'tier',
  enabled: true,
  trafficPercentage: 100,
  variants: { free: 'F', gold: 'G' },
  defaultVariant: 'free',
  targeting: { if: [{ in: [{ var: 'plan' }, ['beta']] }, 'gold', null] },
});
const tierHalf = create({
  name: 'tier-half',
  enabled: true,
  trafficPercentage: 40,
  variants: { small: 1, large: 2 },
  defaultVariant: 'small',
  targeting: { if: [{ '==': [{ var: 'country' }, 'NL'] }, 'large', null] },
});
const broken = create({
  name: 'broken',
  enabled: true,
  trafficPercentage: 100,
  variants: { a: true, b: false },
  defaultVariant: 'a',
  targeting: { var: 'pick' },
});

const q = new EvalQuery();
function explain(flagId: string, query: string, roll?: () => number) {
  engine.beginBatch();
  const entry = engine.lookupFlag(flagId);
  if (!entry.found || !q.parse(query)) throw new Error(`${flagId}?${query}`);
  const state = stateInEnv(entry, q.env) as EvalState;
  return explainState(state, q, engine.audiencesAllowed(entry.org), engine.batchTime, roll);
}
const evaluated = (flagId: string, query: string) => answer('flag', flagId, query);

const plans = create({
  name: 'plans',
  enabled: true,
  trafficPercentage: 100,
  variants: { free: 'F', pro: 'P', ent: 'E' },
  defaultVariant: 'free',
  targeting: { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'pro', { in: [{ var: 'country' }, ['NL', 'DE']] }, 'ent', 'free'] },
});
/** The variant each branch of `plans`' rule gives (null: its else). */
const kPlansBranches = new Map<number | null, string>([
  [1, 'pro'],
  [2, 'ent'],
  [null, 'free'],
]);

t.test('every rule that decides, with what it read', async (t) => {
  t.same(explain(ids.off, 'cohort=alice'), { enabled: false, decision: 0, why: { by: 'disabled' }, resolution: null, ruleBranch: null });
  t.match(explain(ids.half, 'cohort=alice&targetingKey=zz'), { enabled: true, why: { by: 'cohort', cohort: 'alice' } });
  t.match(explain(ids.aud, 'plan=alpha&country=NL'), {
    enabled: true,
    why: { by: 'audience', audienceId: ids.audience, matched: true, unmatched: null, percentage: 100 },
  });
  t.match(explain(ids.aud, 'plan=beta&country=DE'), {
    enabled: false,
    why: { by: 'audience', matched: false, unmatched: { attribute: 'country', values: ['NL'] } },
  });
  t.match(
    explain(ids.aud, 'country=NL'),
    { why: { unmatched: { attribute: 'plan', values: ['beta', 'alpha'] } } },
    'an absent attribute is the unmatched rule',
  );
  t.same(explain(ids.on, '').why, { by: 'static', percentage: 100 });
  t.match(explain(ids.zero, 'targetingKey=k'), { enabled: false, why: { by: 'static', percentage: 0 } });
  for (const key of ['u1', 'u2', 'u3']) {
    t.same(explain(ids.half, `targetingKey=${key}`).why, {
      by: 'split',
      key,
      keyFrom: 'targetingKey',
      bucket: bucket(ids.half, key),
      percentage: 50,
    });
  }
  t.match(explain(ids.half, 'cohort=carol').why, { by: 'split', key: 'carol', keyFrom: 'cohort', bucket: bucket(ids.half, 'carol') });
  t.match(
    explain(ids.half, '', () => 49),
    { enabled: true, why: { by: 'roll', roll: 49, percentage: 50 } },
  );
  t.match(
    explain(ids.half, '', () => 50),
    { enabled: false, why: { by: 'roll', roll: 50 } },
  );
  t.match(explain(ids.freeAud, 'plan=beta'), { enabled: null, decision: null, why: { by: 'plan', audienceId: String }, resolution: null });
  t.match(explain(ids.group, 'env=production&cohort=qa'), { enabled: true, why: { by: 'cohort', cohort: 'qa' } });
  t.match(explain(ids.groupAud, 'env=production&plan=beta'), { enabled: true, why: { by: 'audience', matched: true } });
});

t.test("typed variants: the gate's reason, then the rule's answer", async (t) => {
  t.match(explain(tier, 'plan=beta'), {
    enabled: true,
    why: { by: 'static' },
    resolution: { variant: 'gold', value: 'G', reason: 'TARGETING_MATCH' },
  });
  t.match(explain(tier, 'plan=free'), { resolution: { variant: 'free', value: 'F', reason: 'DEFAULT' } });
  const key = Array.from({ length: 100 }, (_, i) => `k${i}`).find((k) => bucket(tierHalf, k) >= 40)!;
  t.match(explain(tierHalf, `targetingKey=${key}&country=NL`), {
    enabled: false,
    why: { by: 'split', bucket: bucket(tierHalf, key) },
    resolution: { variant: 'small', reason: 'SPLIT' },
  });
  t.match(explain(broken, 'pick=c'), { enabled: true, resolution: { errorCode: 'GENERAL', value: undefined } });
});

t.test('typed variants: which condition of a rule whose top is an `if` held', async (t) => {
  t.same(explain(tier, 'plan=beta').ruleBranch, { held: 1, conditions: 1 });
  t.same(explain(tier, 'plan=free').ruleBranch, { held: null, conditions: 1 }, 'none held: the rule gave no variant');
  t.match(
    explain(plans, 'plan=pro&country=NL'),
    { ruleBranch: { held: 1, conditions: 2 }, resolution: { variant: 'pro' } },
    'the first that holds',
  );
  t.match(explain(plans, 'plan=free&country=DE'), { ruleBranch: { held: 2, conditions: 2 }, resolution: { variant: 'ent' } });
  t.match(explain(plans, 'country=FR'), { ruleBranch: { held: null, conditions: 2 }, resolution: { variant: 'free' } }, 'its else');
  t.equal(explain(broken, 'pick=a').ruleBranch, null, 'a rule whose top is not an `if` has no branches to name');
  const key = Array.from({ length: 100 }, (_, i) => `k${i}`).find((k) => bucket(tierHalf, k) >= 40)!;
  t.equal(explain(tierHalf, `targetingKey=${key}&country=NL`).ruleBranch, null, 'the gate kept the caller out: no rule ran');
  t.equal(explain(ids.on, '').ruleBranch, null, 'a boolean flag has no rule');
});

t.test("the explanation's answer is the engine's, over many keys and contexts", async (t) => {
  const flags = [ids.on, ids.off, ids.half, ids.zero, ids.aud, ids.audHalf, tier, tierHalf, broken, ids.freePlain, plans];
  const contexts = ['', 'plan=beta&country=NL', 'plan=alpha&country=DE', 'cohort=insider&plan=beta&country=NL', 'cohort=alice', 'plan=pro'];
  let checked = 0;
  for (let i = 0; i < 300; i++) {
    for (const extra of contexts) {
      const query = `targetingKey=user-${i}${extra === '' ? '' : `&${extra}`}`;
      for (const flag of flags) {
        const explained = explain(flag, query);
        const answer = evaluated(flag, query).json;
        if (explained.enabled !== answer.enabled) t.fail(`${flag}?${query}: ${explained.enabled} but the engine says ${answer.enabled}`);
        // A typed state's value and variant; an error's (the caller's default) has neither, as the engine's body.
        const resolution = explained.resolution;
        if (
          resolution !== null &&
          (resolution.value !== answer.value || (resolution.value !== undefined && resolution.variant !== answer.variant))
        )
          t.fail(`${flag}?${query}: ${resolution.variant} but the engine says ${answer.variant}`);
        // The branch named is the one whose variant the engine gave.
        if (flag === plans && kPlansBranches.get(explained.ruleBranch!.held) !== answer.variant)
          t.fail(`${flag}?${query}: branch ${explained.ruleBranch!.held} named, but the engine gave ${answer.variant}`);
        checked++;
      }
    }
  }
  t.equal(checked, 300 * contexts.length * flags.length, 'every answer the same');
  t.equal(evaluated(ids.freeAud, 'plan=beta').status, 403, 'where the explanation has no value, the flag route refuses');
});

t.test("a flag in Unleash's model: its strategies decided, the variant named, the answer the engine's", async (t) => {
  const model = create({
    name: 'unleash-tier',
    enabled: true,
    trafficPercentage: 0,
    unleash: {
      strategies: [
        {
          name: 'default',
          constraints: [{ contextName: 'plan', operator: 'IN', values: ['beta'] }],
          variants: [{ name: 'gold', weight: 1 }],
        },
      ],
    },
  });
  const beta = explain(model, 'targetingKey=u1&plan=beta');
  t.same(beta.why, { by: 'unleash', variant: 'gold' });
  t.equal(beta.enabled, true, 'its percentage (0) is not read');
  t.match(evaluated(model, 'targetingKey=u1&plan=beta').json, { enabled: true, variant: 'gold' });
  const free = explain(model, 'targetingKey=u1&plan=free');
  t.same([free.enabled, free.why], [false, { by: 'unleash', variant: 'disabled' }]);
  t.match(evaluated(model, 'targetingKey=u1&plan=free').json, { enabled: false });
});
