// The provider's snapshot compile and resolution, in-process (src/provider/compile.ts, resolve.ts): a
// snapshot built from the store (src/snapshots/build.ts) and compiled answers as the eval workers' OFREP
// route set does over the same store, for what the black-box test cannot reach through a token (a plan
// without audiences, a trial's end) and for a flag with fractional bucketing; which flags a change names.
import { rmSync } from 'node:fs';
import { ErrorCode, type EvaluationContext, type OpenFeatureError } from '@openfeature/server-sdk';
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { Clock } from '../../src/clock.js';
import { bucket, fractionalBucket } from '../../src/evaluation/engine/bucket.js';
import { EvalEngine } from '../../src/evaluation/engine/engine.js';
import { ResultReader, ResultWriter } from '../../src/evaluation/engine/protocol.js';
import { OfrepContext } from '../../src/ofrep/context.js';
import { OfrepEvaluator } from '../../src/ofrep/evaluate.js';
import { changedFlags, compileSnapshot } from '../../src/provider/compile.js';
import { resolveFlag } from '../../src/provider/resolve.js';
import { buildSnapshot } from '../../src/snapshots/build.js';
import type { Snapshot } from '../../src/model/snapshot-shape.js';
import { buildEvalWorld } from '../evaluation/engine/eval-world.js';
import { getOrg } from '../../src/model/records/org-records.js';
import { getProject } from '../../src/model/records/project-records.js';

const world = buildEvalWorld();
const { ids } = world;
const clock = Clock.create();
const engine = new EvalEngine(world.store, () => clock.now());
const ofrep = new OfrepEvaluator(engine);
t.teardown(async () => {
  await world.store.close();
  rmSync(world.dataDir, { recursive: true, force: true });
});

function viaOfrep(key: string, context: EvaluationContext, project: string) {
  engine.beginBatch();
  const out = new ResultWriter(new ArrayBuffer(16), 1);
  ofrep.evaluateFlag(key, JSON.stringify({ context }), project, out);
  return JSON.parse(new ResultReader(out.finish()).bodyText(0));
}

function snapshotOf(projectId: string, env: string | null, now = Date.now()): Snapshot {
  const project = getProject(world.store, projectId)!;
  return buildSnapshot(world.store, project, env, getOrg(world.store, project.orgId!)!, now);
}

/** The provider's answer as OFREP's body shape ({value?, reason, variant?} or {errorCode, errorDetails}). */
function viaProvider(snapshot: Snapshot, key: string, context: EvaluationContext, nowMs = Date.now()) {
  try {
    const d = resolveFlag(compileSnapshot(snapshot), new OfrepContext(), key, 'boolean', false, context, nowMs);
    return { value: d.value, reason: d.reason, variant: d.variant };
  } catch (err) {
    return { errorCode: (err as OpenFeatureError).code, errorDetails: (err as Error).message };
  }
}

t.test("a plan without audiences: the flag applying one is GENERAL with OFREP's detail; the others answer", async (t) => {
  const snapshot = snapshotOf(ids.freeProject, null);
  t.equal(snapshot.audiencesAllowed, false);
  for (const key of ['aud', 'plain']) {
    const expected = viaOfrep(key, { targetingKey: 'u1', plan: 'beta' }, ids.freeProject);
    const { key: _key, metadata: _metadata, ...rest } = expected;
    t.same(viaProvider(snapshot, key, { targetingKey: 'u1', plan: 'beta' }), rest, key);
  }
  t.match(viaProvider(snapshot, 'aud', { targetingKey: 'u1' }), { errorCode: ErrorCode.GENERAL, errorDetails: /audiences need the Teams/ });
});

t.test("a trial's end: audiences stop applying at audiencesUntil, with no new snapshot", async (t) => {
  const snapshot = { ...snapshotOf(ids.single, null), audiencesUntil: 1_000 };
  t.match(viaProvider(snapshot, 'aud', { targetingKey: 'u1', plan: 'beta', country: 'NL' }, 999), {
    value: true,
    reason: 'TARGETING_MATCH',
  });
  t.match(viaProvider(snapshot, 'aud', { targetingKey: 'u1', plan: 'beta', country: 'NL' }, 1_000), { errorCode: ErrorCode.GENERAL });
});

t.test('bucketing: design §2 modulo by default, flagd fractional for a flag made with it', async (t) => {
  const snapshot = snapshotOf(ids.single, null);
  const half = snapshot.flags.find((f) => f.id === ids.half)!;
  const fractional: Snapshot = { ...snapshot, flags: [{ ...half, bucketing: 'fractional' }] };
  let differ = 0;
  for (let i = 0; i < 400; i++) {
    const key = `key-${i}`;
    t.equal(viaProvider(snapshot, ids.half, { targetingKey: key }).value, bucket(ids.half, key) < 50);
    t.equal(viaProvider(fractional, ids.half, { targetingKey: key }).value, fractionalBucket(ids.half, key) < 50);
    if (bucket(ids.half, key) < 50 !== fractionalBucket(ids.half, key) < 50) differ++;
  }
  t.ok(differ > 0, 'the two bucketings split these keys differently: the test tells them apart');
});

t.test('before the first snapshot, a missing flag, a value of another type: the OpenFeature codes', async (t) => {
  const ctx = new OfrepContext();
  t.throws(() => resolveFlag(null, ctx, 'on', 'boolean', false, {}, 0), { code: ErrorCode.PROVIDER_NOT_READY });
  const compiled = compileSnapshot(snapshotOf(ids.single, null));
  t.throws(() => resolveFlag(compiled, ctx, 'nope', 'boolean', false, {}, 0), { code: ErrorCode.FLAG_NOT_FOUND });
  t.throws(() => resolveFlag(compiled, ctx, 'on', 'string', 'x', { targetingKey: 'u' }, 0), {
    code: ErrorCode.TYPE_MISMATCH,
    message: 'Flag "on" has a boolean value; it was asked for a string.',
  });
  t.same(resolveFlag(compiled, ctx, ids.on, 'boolean', false, { targetingKey: 'u' }, 0), {
    value: true,
    reason: 'STATIC',
    variant: 'on',
    flagMetadata: { id: ids.on, name: 'on' },
  });
});

t.test('changedFlags: each flag that differs, by id and by name; an audience change names the flags applying it', async (t) => {
  const before = snapshotOf(ids.single, null);
  const same = compileSnapshot(before);
  t.same(changedFlags(same, compileSnapshot(structuredClone(before))), [], 'nothing changed');
  const zero = before.flags.findIndex((f) => f.id === ids.zero);
  const edited = structuredClone(before);
  edited.flags[zero]!.state.trafficPercentage = 7;
  edited.flags[zero]!.name = 'zero-renamed';
  t.same(changedFlags(same, compileSnapshot(edited)).sort(), [ids.zero, 'zero', 'zero-renamed'].sort(), 'a rename names both names');
  const audience = structuredClone(before);
  audience.audiences[0]!.rules = [{ attribute: 'plan', values: ['gamma'] }];
  t.same(changedFlags(same, compileSnapshot(audience)).sort(), [ids.aud, 'aud', ids.audHalf, 'aud-half'].sort());
  const removed = { ...before, flags: before.flags.filter((f) => f.id !== ids.on) };
  t.same(changedFlags(same, compileSnapshot(removed)).sort(), [ids.on, 'on'].sort(), 'a deleted flag');
});

t.test("flags in Unleash's model: the provider answers as OFREP does, dependencies read from the same snapshot", async (t) => {
  const make = (name: string, unleash: Record<string, unknown>) =>
    world.run('flagCreate', { projectId: ids.empty, principal: kOperator, body: { name, enabled: true, unleash } });
  make('u-parent', {
    strategies: [
      {
        name: 'flexibleRollout',
        parameters: { rollout: '50', stickiness: 'default', groupId: 'u-parent' },
        constraints: [{ contextName: 'plan', operator: 'IN', values: ['beta', 'pro'] }],
        variants: [
          { name: 'a', weight: 1, payload: { type: 'string', value: 'A' } },
          { name: 'b', weight: 1 },
        ],
      },
    ],
  });
  make('u-child', { strategies: [{ name: 'default' }], dependencies: [{ feature: 'u-parent', variants: ['a'] }] });
  const snapshot = snapshotOf(ids.empty, null);
  let on = 0;
  for (let i = 0; i < 200; i++) {
    const context = { targetingKey: `user-${i}`, plan: ['beta', 'pro', 'free'][i % 3]! };
    for (const key of ['u-parent', 'u-child']) {
      const { key: _key, metadata: _metadata, ...expected } = viaOfrep(key, context, ids.empty);
      t.same(viaProvider(snapshot, key, context), expected, `${key} ${JSON.stringify(context)}`);
      if (expected.value === true && key === 'u-child') on++;
    }
  }
  t.ok(on > 10 && on < 100, `the child is on for some callers only (${on} of 200)`);
});
