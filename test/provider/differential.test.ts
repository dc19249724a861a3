// In-process differential: generated flags (enabled or not, percentages, cohorts, audiences, typed
// variants with and without rules and default variants, design §2's modulo bucketing and flagd's
// fractional) in a real store, and generated contexts; every answer of the provider (a snapshot built
// from the store, compiled, resolved: src/snapshots/build.ts, src/provider) equals the eval workers'
// OFREP route set's over the same store (src/ofrep/evaluate.ts over src/evaluation/engine/engine.ts). The
// black-box test (provider.test.ts) does the same through HTTP and the packed provider on fewer.
import { rmSync } from 'node:fs';
import type { EvaluationContext, OpenFeatureError } from '@openfeature/server-sdk';
import t from 'tap';
import { EvalEngine } from '../../src/evaluation/engine/engine.js';
import { ResultReader, ResultWriter } from '../../src/evaluation/engine/protocol.js';
import type { FlagCreate } from '../../src/model/schemas.js';
import { OfrepContext } from '../../src/ofrep/context.js';
import { OfrepEvaluator } from '../../src/ofrep/evaluate.js';
import { compileSnapshot } from '../../src/provider/compile.js';
import { resolveFlag } from '../../src/provider/resolve.js';
import { buildSnapshot } from '../../src/snapshots/build.js';
import { kOperator } from '../../src/actor/audit-actor.js';
import { buildEvalWorld } from '../evaluation/engine/eval-world.js';
import { getFlag, listFlags, putFlag } from '../../src/flags/records/flag-store.js';
import { getOrg } from '../../src/model/records/org-records.js';
import { getProject } from '../../src/model/records/project-records.js';

const kFlags = 120;
const kContexts = 1000;
const world = buildEvalWorld();
const { ids } = world;
t.teardown(async () => {
  await world.store.close();
  rmSync(world.dataDir, { recursive: true, force: true });
});

// A seeded generator (mulberry32): the same flags and contexts on every run, so a failure reproduces.
let seed = 0x5eed44;
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
  return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
}
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const kCohorts = ['alice', 'bob', 'carol', 'vip', 'qa'];
const kPlans = ['beta', 'alpha', 'free', 'pro'];
const kCountries = ['NL', 'DE', 'FR', 'JP'];

function generatedFlag(i: number): FlagCreate {
  const body: Record<string, unknown> = {
    name: `gen-${i}`,
    enabled: random() < 0.85,
    trafficPercentage: pick([0, 100, 1 + Math.floor(random() * 99)]),
    cohorts: kCohorts.filter(() => random() < 0.3),
    audienceId: random() < 0.3 ? ids.audience : null,
  };
  const typed = pick(['none', 'string', 'number', 'object']);
  if (typed === 'string') {
    body.variants = { red: '#d33', green: '#2a2', blue: '#22d' };
    body.defaultVariant = pick(['red', null]);
    body.targeting = pick([
      {},
      { if: [{ '==': [{ var: 'plan' }, 'beta'] }, 'green', null] },
      {
        fractional: [
          ['red', 30],
          ['green', 30],
          ['blue', 40],
        ],
      },
      { if: [{ in: [{ var: 'country' }, ['NL', 'DE']] }, 'blue', 'red'] },
    ]);
  } else if (typed === 'number') {
    body.variants = { low: 1, high: 99.5 };
    body.defaultVariant = pick(['low', 'high', null]);
    body.targeting = pick([{}, { if: [{ '>': [{ var: 'age' }, 30] }, 'high', null] }]);
  } else if (typed === 'object') {
    body.variants = { a: { theme: 'dark', size: 2 }, b: { theme: 'light' } };
    body.defaultVariant = pick(['a', null]);
    body.targeting = pick([{}, { if: [{ ends_with: [{ var: 'email' }, '@example.com'] }, 'b', 'a'] }]);
  }
  return body as FlagCreate;
}

function generatedContext(): EvaluationContext {
  const context: Record<string, string | number> = {};
  if (random() < 0.8) context.targetingKey = `user-${Math.floor(random() * 1e6)}`;
  if (random() < 0.3) context.cohort = pick(kCohorts);
  if (random() < 0.6) context.plan = pick(kPlans);
  if (random() < 0.6) context.country = pick(kCountries);
  if (random() < 0.3) context.age = Math.floor(random() * 80);
  if (random() < 0.3) context.email = pick(['a@example.com', 'b@other.org']);
  return context;
}

const flagIds: string[] = [];
for (let i = 0; i < kFlags; i++) {
  const id = world.run('flagCreate', { projectId: ids.single, principal: kOperator, body: generatedFlag(i) }).id;
  flagIds.push(id);
  // Bucketing is chosen when a flag is made; no command makes a fractional one yet, so half are written so.
  if (i % 2 === 1) {
    world.store.transact((w) => {
      putFlag(w, { ...getFlag(w, id)!, bucketing: 'fractional' });
    });
  }
}

const engine = new EvalEngine(world.store, () => Date.now());
const ofrep = new OfrepEvaluator(engine);

function viaOfrep(key: string, context: EvaluationContext) {
  engine.beginBatch();
  const out = new ResultWriter(new ArrayBuffer(16), 1);
  ofrep.evaluateFlag(key, JSON.stringify({ context }), ids.single, out);
  const body = JSON.parse(new ResultReader(out.finish()).bodyText(0));
  if (body.errorCode !== undefined) return { errorCode: body.errorCode, message: body.errorDetails };
  return { value: body.value ?? null, variant: body.variant ?? null, reason: body.reason, metadata: body.metadata };
}

t.test(`${kFlags} generated flags x ${kContexts} generated contexts: the provider answers as OFREP`, async (t) => {
  world.store.resetReadTxn();
  const project = getProject(world.store, ids.single)!;
  const snapshot = compileSnapshot(buildSnapshot(world.store, project, null, getOrg(world.store, project.orgId!)!, Date.now()));
  const fractional = listFlags(world.store, ids.single).filter((f) => f.bucketing === 'fractional').length;
  t.equal(fractional, kFlags / 2, 'half the generated flags bucket as flagd does');
  const ctx = new OfrepContext();
  const contexts = Array.from({ length: kContexts }, generatedContext);
  let compared = 0;
  let mismatches = 0;
  for (const id of flagIds) {
    for (const context of contexts) {
      const expected = viaOfrep(id, context);
      let got: object;
      try {
        // The type the flag's value has: what OFREP gives is compared, not a type check.
        const type = expected.value === null || expected.value === undefined ? 'boolean' : (typeof expected.value as 'boolean');
        const d = resolveFlag(snapshot, ctx, id, type, null as never, context, Date.now());
        got = { value: d.value ?? null, variant: d.variant ?? null, reason: d.reason, metadata: d.flagMetadata };
      } catch (err) {
        got = { errorCode: (err as OpenFeatureError).code, message: (err as Error).message };
      }
      compared++;
      if (JSON.stringify(got) !== JSON.stringify(expected) && mismatches++ < 5) t.same(got, expected, `${id} ${JSON.stringify(context)}`);
    }
  }
  t.equal(mismatches, 0, `${compared} answers compared`);
});
