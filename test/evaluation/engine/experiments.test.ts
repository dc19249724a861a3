// Experiments on a flag state (issue 58, item 1), in-process over the real engine and store: while a
// state carries an experiment key, every answer names it (OFREP `metadata`, the Evaluation API beside the
// answer) and says whether it counts as an exposure: true for the percentage split (in or out) and for a
// rule's variant; false for a disabled state, a listed cohort, a static 0 or 100%, an audience, a key
// missing, a plan that blocks the audience, and a rule's error. A state without one answers byte for
// byte as before; a group flag's environments carry their own. The Flagwire provider, answering from a
// snapshot in-process, says the same as OFREP.
import { rmSync } from 'node:fs';
import t from 'tap';
import { kOperator } from '../../../src/actor/audit-actor.js';
import { Clock } from '../../../src/clock.js';
import { EvalEngine } from '../../../src/evaluation/engine/engine.js';
import { ResultReader, ResultWriter } from '../../../src/evaluation/engine/protocol.js';
import type { FlagCreate } from '../../../src/model/schemas.js';
import { OfrepContext } from '../../../src/ofrep/context.js';
import { OfrepEvaluator } from '../../../src/ofrep/evaluate.js';
import { compileSnapshot } from '../../../src/provider/compile.js';
import { resolveFlag } from '../../../src/provider/resolve.js';
import { buildSnapshot } from '../../../src/snapshots/build.js';
import { buildEvalWorld } from './eval-world.js';
import { getOrg } from '../../../src/model/records/org-records.js';
import { getProject } from '../../../src/model/records/project-records.js';

const world = buildEvalWorld();
const clock = Clock.create();
const engine = new EvalEngine(world.store, () => clock.now());
const ofrepEvaluator = new OfrepEvaluator(engine);
t.teardown(async () => {
  await world.store.close();
  rmSync(world.dataDir, { recursive: true, force: true });
});
const { ids } = world;
const create = (projectId: string, body: FlagCreate) => world.run('flagCreate', { projectId, body, principal: kOperator }).id;

const split = create(ids.single, {
  name: 'exp-split',
  enabled: true,
  trafficPercentage: 50,
  cohorts: ['vip'],
  experiment: 'checkout-2026',
});
const disabled = create(ids.single, { name: 'exp-off', enabled: false, trafficPercentage: 50, experiment: 'off-test' });
const everyone = create(ids.single, { name: 'exp-all', enabled: true, trafficPercentage: 100, experiment: 'all-test' });
const typed = create(ids.single, {
  name: 'exp-colour',
  enabled: true,
  trafficPercentage: 100,
  cohorts: ['vip'],
  variants: { red: '#f00', green: '#0f0' },
  defaultVariant: 'red',
  targeting: {
    fractional: [
      ['red', 50],
      ['green', 50],
    ],
  },
  experiment: 'colour',
});
const typedHalf = create(ids.single, {
  name: 'exp-colour-half',
  enabled: true,
  trafficPercentage: 50,
  variants: { red: '#f00', green: '#0f0' },
  defaultVariant: 'red',
  experiment: 'colour-half',
});
const groupFlag = create(ids.multi, {
  name: 'exp-group',
  environments: {
    staging: { enabled: true, trafficPercentage: 50, experiment: 'stg' },
    production: { enabled: true, trafficPercentage: 50 },
  },
});
world.run('flagPatch', { flagId: ids.freeAud, env: null, principal: kOperator, patch: { experiment: 'blocked' } });

function ofrep(key: string, context: object) {
  engine.beginBatch();
  const out = new ResultWriter(new ArrayBuffer(16), 1);
  ofrepEvaluator.evaluateFlag(key, JSON.stringify({ context }), '', out);
  const r = new ResultReader(out.finish());
  return { status: r.status(0), json: JSON.parse(r.bodyText(0)) };
}

function evaluation(id: string, query: string) {
  engine.beginBatch();
  const out = new ResultWriter(new ArrayBuffer(16), 1);
  engine.evaluateFlag(id, query, out);
  const r = new ResultReader(out.finish());
  return { status: r.status(0), json: JSON.parse(r.bodyText(0)) };
}

/** Keys whose bucket of `flagId` is in (true) and out (false) of a 50% split. */
function keysBothSides(flagId: string): { inKey: string; outKey: string } {
  let inKey: string | null = null;
  let outKey: string | null = null;
  for (let i = 0; inKey === null || outKey === null; i++) {
    const key = `user-${i}`;
    const value = evaluation(flagId, `targetingKey=${key}`).json.enabled as boolean;
    if (value) inKey ??= key;
    else outKey ??= key;
  }
  return { inKey, outKey };
}

t.test('a boolean state: the split is an exposure, in or out; disabled, a cohort, a static 100% are not', async (t) => {
  const { inKey, outKey } = keysBothSides(split);
  const meta = (exposed: boolean) => ({ id: split, name: 'exp-split', experimentKey: 'checkout-2026', inExperiment: exposed });
  t.strictSame(ofrep(split, { targetingKey: inKey }).json, {
    key: split,
    value: true,
    reason: 'SPLIT',
    variant: 'on',
    metadata: meta(true),
  });
  t.strictSame(ofrep(split, { targetingKey: outKey }).json, {
    key: split,
    value: false,
    reason: 'SPLIT',
    variant: 'off',
    metadata: meta(true),
  });
  t.strictSame(ofrep(split, { targetingKey: outKey, cohort: 'vip' }).json, {
    key: split,
    value: true,
    reason: 'TARGETING_MATCH',
    variant: 'on',
    metadata: meta(false),
  });
  t.strictSame(ofrep(disabled, { targetingKey: inKey }).json.metadata, {
    id: disabled,
    name: 'exp-off',
    experimentKey: 'off-test',
    inExperiment: false,
  });
  t.match(ofrep(everyone, { targetingKey: inKey }).json, {
    reason: 'STATIC',
    metadata: { experimentKey: 'all-test', inExperiment: false },
  });

  t.strictSame(evaluation(split, `targetingKey=${inKey}`).json, {
    id: split,
    name: 'exp-split',
    enabled: true,
    experimentKey: 'checkout-2026',
    inExperiment: true,
  });
  t.strictSame(evaluation(split, `targetingKey=${outKey}`).json, {
    id: split,
    name: 'exp-split',
    enabled: false,
    experimentKey: 'checkout-2026',
    inExperiment: true,
  });
  t.match(evaluation(split, `targetingKey=${outKey}&cohort=vip`).json, { enabled: true, inExperiment: false });
  t.match(evaluation(disabled, `targetingKey=${inKey}`).json, { enabled: false, experimentKey: 'off-test', inExperiment: false });
  t.match(evaluation(everyone, 'targetingKey=x').json, { enabled: true, experimentKey: 'all-test', inExperiment: false });
});

t.test('errors name the experiment and are no exposure', async (t) => {
  const missing = ofrep(split, {});
  t.equal(missing.status, 400);
  t.strictSame(missing.json, {
    key: split,
    errorCode: 'TARGETING_KEY_MISSING',
    errorDetails: missing.json.errorDetails,
    metadata: { experimentKey: 'checkout-2026', inExperiment: false },
  });
  const blocked = ofrep(ids.freeAud, { targetingKey: 'u1' });
  t.equal(blocked.status, 400);
  t.match(blocked.json, { errorCode: 'GENERAL', metadata: { experimentKey: 'blocked', inExperiment: false } });
});

t.test("typed variants: a rule's variant and the split are exposures; a cohort override is not", async (t) => {
  const ruled = ofrep(typed, { targetingKey: 'u1' });
  t.equal(ruled.json.reason, 'TARGETING_MATCH');
  t.strictSame(ruled.json.metadata, { experimentKey: 'colour', inExperiment: true, id: typed, name: 'exp-colour' });
  const cohort = ofrep(typed, { targetingKey: 'u1', cohort: 'vip' });
  t.equal(cohort.json.variant, ruled.json.variant, "a listed cohort gets the rule's variant");
  t.equal(cohort.json.metadata.inExperiment, false, 'but it is an override, not an allocation');
  t.match(evaluation(typed, 'targetingKey=u1').json, { variant: ruled.json.variant, experimentKey: 'colour', inExperiment: true });
  t.match(evaluation(typed, 'targetingKey=u1&cohort=vip').json, { variant: ruled.json.variant, inExperiment: false });

  const { inKey, outKey } = keysBothSides(typedHalf);
  t.match(ofrep(typedHalf, { targetingKey: outKey }).json, { reason: 'SPLIT', variant: 'red', metadata: { inExperiment: true } });
  t.match(ofrep(typedHalf, { targetingKey: inKey }).json, {
    reason: 'SPLIT',
    metadata: { experimentKey: 'colour-half', inExperiment: true },
  });
});

t.test("a group flag's environments carry their own experiment; a state without one answers as before", async (t) => {
  const staging = ofrep(groupFlag, { targetingKey: 'u1', env: 'staging' }).json;
  t.match(staging.metadata, { experimentKey: 'stg', inExperiment: true });
  const production = ofrep(groupFlag, { targetingKey: 'u1', env: 'production' }).json;
  t.strictSame(production.metadata, { id: groupFlag, name: 'exp-group' }, 'production runs no experiment');
  t.strictSame(Object.keys(evaluation(groupFlag, 'targetingKey=u1&env=production').json), ['id', 'name', 'enabled']);
  t.strictSame(ofrep(ids.half, { targetingKey: 'u1' }).json.metadata, { id: ids.half, name: 'half' }, 'a flag without one: as before');
});

t.test('patching the experiment: set, kept by other patches, ended by null; validated', async (t) => {
  const patch = (body: Record<string, unknown>) =>
    world.run('flagPatch', { flagId: ids.half, env: null, principal: kOperator, patch: body as never });
  t.match(patch({ experiment: 'late' }), { changed: true });
  t.match(ofrep(ids.half, { targetingKey: 'u1' }).json.metadata, { experimentKey: 'late' });
  t.match(patch({ trafficPercentage: 40 }), { changed: true });
  t.match(ofrep(ids.half, { targetingKey: 'u1' }).json.metadata, { experimentKey: 'late' }, 'another patch keeps it');
  t.match(patch({ experiment: 'late' }), { changed: false }, 'the same key changes nothing');
  t.match(patch({ experiment: null }), { changed: true });
  t.strictSame(ofrep(ids.half, { targetingKey: 'u1' }).json.metadata, { id: ids.half, name: 'half' }, 'ended');
  for (const bad of ['', 'Upper', '-lead', 'a'.repeat(65), 'has space', 3]) {
    t.throws(() => patch({ experiment: bad }), { code: 'INVALID_REQUEST' }, JSON.stringify(bad));
  }
});

t.test("the Flagwire provider's in-process answers carry the same metadata as OFREP's", async (t) => {
  const project = getProject(world.store, ids.single)!;
  const snapshot = compileSnapshot(buildSnapshot(world.store, project, null, getOrg(world.store, project.orgId!)!, Date.now()));
  const resolve = (key: string, type: 'boolean' | 'string', context: Record<string, string>) =>
    resolveFlag(snapshot, new OfrepContext(), key, type, type === 'boolean' ? false : 'none', context, Date.now());
  const { inKey } = keysBothSides(split);
  for (const [key, type, context] of [
    [split, 'boolean', { targetingKey: inKey }],
    [split, 'boolean', { targetingKey: inKey, cohort: 'vip' }],
    [disabled, 'boolean', { targetingKey: inKey }],
    [typed, 'string', { targetingKey: 'u1' }],
    [typed, 'string', { targetingKey: 'u1', cohort: 'vip' }],
  ] as const) {
    t.strictSame(resolve(key, type, context).flagMetadata, ofrep(key, context).json.metadata, `${key} ${JSON.stringify(context)}`);
  }
});
