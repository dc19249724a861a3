// Every flag shape a project can hold, generated from a seed into the single-environment project of a
// test/evaluation/engine/eval-world.ts world, for the edge's differential (differential.test.ts and
// bench/edge.bench.ts): boolean flags with percentages, cohorts and audiences; typed variants with and
// without flagd rules and default variants; rules that name the project's shared fragments; boolean flags
// running an experiment; flags in Unleash's model (strategies, constraints, segments, variants); design
// §2's modulo bucketing and flagd's fractional. And contexts drawn from the same seed.
import { kOperator } from '../../src/actor/audit-actor.js';
import { getFlag, putFlag } from '../../src/flags/records/flag-store.js';
import { jsonBody } from '../../src/model/request-body.js';
import type { EvalWorld } from '../evaluation/engine/eval-world.js';
import { experimentPlan } from '../helpers/experiment-plan.js';
import { random as seeded } from '../helpers/seeded-random.js';

const kCohorts = ['alice', 'bob', 'carol', 'vip', 'qa'];
const kPlans = ['beta', 'alpha', 'free', 'pro'];
const kCountries = ['NL', 'DE', 'FR', 'JP'];

export interface EdgeFlags {
  readonly ids: readonly string[];
  /** How many of each shape were made. */
  readonly shapes: Readonly<Record<string, number>>;
}

/** Makes `count` flags of every shape in turn (and two fragments, one experiment per 10 flags). */
export function makeEdgeFlags(world: EvalWorld, count: number, seed = 0x5eed101): EdgeFlags {
  const random = seeded(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const { ids } = world;
  const projectId = ids.single;
  for (const name of ['paying', 'dutch']) {
    const rule = name === 'paying' ? { in: [{ var: 'plan' }, ['pro', 'beta']] } : { '==': [{ var: 'country' }, 'NL'] };
    world.run('fragmentCreate', { principal: kOperator, projectId, received: jsonBody(JSON.stringify({ name, rule })) });
  }
  const made: string[] = [];
  const shapes: Record<string, number> = {};
  for (let i = 0; i < count; i++) {
    const shape = (['boolean', 'typed', 'fragment', 'experiment', 'unleash'] as const)[i % 5]!;
    shapes[shape] = (shapes[shape] ?? 0) + 1;
    const body: Record<string, unknown> = { name: `edge-${i}`, enabled: random() < 0.85 };
    if (shape === 'boolean' || shape === 'experiment') {
      body.trafficPercentage = pick([0, 100, 1 + Math.floor(random() * 99)]);
      body.cohorts = kCohorts.filter(() => random() < 0.3);
      body.audienceId = random() < 0.3 ? ids.audience : null;
    } else if (shape === 'typed') {
      Object.assign(body, typedBody(pick, random));
    } else if (shape === 'fragment') {
      body.variants = { gold: 'gold', plain: 'plain' };
      body.defaultVariant = pick(['plain', null]);
      body.targeting = pick([
        { if: [{ $ref: 'paying' }, 'gold', 'plain'] },
        { if: [{ and: [{ $ref: 'dutch' }, { $ref: 'paying' }] }, 'gold', null] },
      ]);
    } else {
      body.unleash = unleashModel(pick, random);
    }
    const id = world.run('flagCreate', { projectId, principal: kOperator, body }).id;
    made.push(id);
    if (shape === 'experiment' && random() < 0.7) {
      const key = `exp-${i}`;
      world.run('experimentCreate', {
        principal: kOperator,
        projectId,
        env: null,
        received: jsonBody(JSON.stringify({ ...experimentPlan(id, 1000), key })),
      });
      world.run('experimentStart', { principal: kOperator, projectId, env: null, key });
    }
    // Bucketing is chosen when a flag is made; no command makes a fractional one, so some are written so.
    if (shape !== 'unleash' && random() < 0.5) {
      world.store.transact((w) => {
        putFlag(w, { ...getFlag(w, id)!, bucketing: 'fractional' });
      });
    }
  }
  return { ids: made, shapes };
}

function typedBody(pick: <T>(items: readonly T[]) => T, random: () => number): Record<string, unknown> {
  const kind = pick(['string', 'number', 'object']);
  if (kind === 'string') {
    return {
      variants: { red: '#d33', green: '#2a2', blue: '#22d' },
      defaultVariant: pick(['red', null]),
      targeting: pick([
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
        { if: [{ sem_ver: [{ var: 'version' }, '>=', '2.0.0'] }, 'green', 'red'] },
      ]),
    };
  }
  if (kind === 'number') {
    return {
      variants: { low: 1, high: 99.5 },
      defaultVariant: pick(['low', 'high', null]),
      targeting: pick([{}, { if: [{ '>': [{ var: 'age' }, 30 + Math.floor(random() * 20)] }, 'high', null] }]),
    };
  }
  return {
    variants: { a: { theme: 'dark', size: 2 }, b: { theme: 'light' } },
    defaultVariant: pick(['a', null]),
    targeting: pick([{}, { if: [{ ends_with: [{ var: 'email' }, '@example.com'] }, 'b', 'a'] }]),
  };
}

function unleashModel(pick: <T>(items: readonly T[]) => T, random: () => number): Record<string, unknown> {
  const constraint = pick([
    [],
    [{ contextName: 'plan', operator: 'IN', values: ['beta', 'pro'] }],
    [{ contextName: 'country', operator: 'NOT_IN', values: ['JP'] }],
    [{ contextName: 'age', operator: 'NUM_GT', value: '30' }],
    [{ contextName: 'email', operator: 'STR_ENDS_WITH', values: ['@example.com'] }],
    [{ contextName: 'plan', operator: 'REGEX', value: '^(pro|beta)$' }],
  ]);
  const rollout = String(pick([0, 100, Math.floor(random() * 100)]));
  const strategy = pick([
    { name: 'default', constraints: constraint },
    { name: 'flexibleRollout', parameters: { rollout, stickiness: 'default', groupId: 'edge' }, constraints: constraint },
    { name: 'userWithId', parameters: { userIds: 'user-1,user-2,user-3' }, constraints: constraint },
  ]);
  const variants = pick([
    undefined,
    [
      { name: 'blue', weight: 500, stickiness: 'default', payload: { type: 'string', value: 'b' } },
      { name: 'green', weight: 500, stickiness: 'default' },
    ],
  ]);
  return { strategies: [variants === undefined ? strategy : { ...strategy, variants }] };
}

/** Context `i` of the seed's sequence: the same on every run, so a mismatch reproduces. */
export function edgeContexts(seed = 0x5eed102): () => Record<string, string | number> {
  const random = seeded(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  return () => {
    const context: Record<string, string | number> = {};
    // Unleash's default stickiness rolls at random with neither a userId nor a sessionId, on the server as
    // anywhere: each context has one, so every answer is the flags' and the context's alone.
    if (random() < 0.85) context.targetingKey = `user-${Math.floor(random() * 1e6)}`;
    else context.sessionId = `session-${Math.floor(random() * 1e6)}`;
    if (random() < 0.3) context.cohort = pick(kCohorts);
    if (random() < 0.6) context.plan = pick(kPlans);
    if (random() < 0.6) context.country = pick(kCountries);
    if (random() < 0.3) context.age = Math.floor(random() * 80);
    if (random() < 0.3) context.email = pick(['a@example.com', 'b@other.org']);
    if (random() < 0.2) context.version = pick(['1.9.0', '2.0.0', '2.1.3']);
    return context;
  };
}
