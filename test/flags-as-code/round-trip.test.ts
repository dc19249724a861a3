// Flags as code round trip (issue 26), a property over generated projects, in process through the
// writer's own commands: a generated Flagwire file F applied to an empty project A; A exported (E1);
// E1 applied to another empty project B; B exported (E2). Then E1 and E2 are the same bytes, F and E1
// both plan no change against A and B (applying a file twice changes nothing), and applying E1 to A
// again writes nothing, not one audit entry.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { flagsPlan } from '../../src/flags-as-code/apply-commands.js';
import { jsonBody } from '../../src/model/request-body.js';
import { fileText } from '../../src/flags-as-code/flag-file.js';
import { buildWorld } from '../helpers/world.js';
import { exportedFile } from '../helpers/flag-file-export.js';
import { listFlags } from '../../src/flags/records/flag-store.js';
import { getProject, listAudiences } from '../../src/model/records/project-records.js';

const kRuns = Number(process.env.FLAGWIRE_ROUND_TRIP_RUNS ?? 40);
const kSeed = Number(process.env.FLAGWIRE_ROUND_TRIP_SEED ?? Date.now() % 2 ** 31);

const dataDir = mkdtempSync(join(tmpdir(), 'flagwire-round-trip-'));
const world = buildWorld(dataDir);
t.teardown(async () => {
  await world.store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

// ---- generators --------------------------------------------------------------------------------

type Json = Record<string, unknown>;
type VariantType = 'boolean' | 'string' | 'number' | 'object';

// Names in mixed case and beyond ASCII: the file's order is code-point order, whatever order things were
// made in. Names are data: one that is also a property of every JavaScript object is a name like any other.
const kFlagNames = [
  'checkout',
  'search',
  'Beta-banner',
  'dark_mode',
  'zeta',
  'Éclair',
  '日本',
  'a.b',
  'new checkout',
  '__proto__',
  'constructor',
];
const kAudienceNames = ['beta-testers', 'Staff', 'eu users', 'Ünïcode', '__proto__', 'toString'];
const kEnvNames = ['staging', 'production', 'qa', 'dev.eu', 'Preview-1', 'constructor'];
// Repeats included: the API keeps one of each (a file that repeats one must still apply once).
const kCohorts = ['alice', 'bob', 'qa-team', 'carol', 'alice'];
const kTags = ['ui', 'backend', 'experiment', 'ui'];

const kVariantValues: Readonly<Record<VariantType, readonly unknown[]>> = {
  boolean: [true, false],
  string: ['#f00', '#0f0', '', 'blue'],
  number: [0, 1, -2.5, 100],
  object: [{ rows: 10 }, { rows: 100, tags: ['x'] }, {}],
};

const percentage = fc.oneof(fc.constantFrom(0, 50, 100), fc.integer({ min: 0, max: 100 }));

const rules = fc.array(
  fc.record({
    attribute: fc.constantFrom('plan', 'country', 'email'),
    values: fc.array(fc.constantFrom('beta', 'pro', 'NL', 'DE', 'pro'), { minLength: 1, maxLength: 3 }),
  }),
  { minLength: 1, maxLength: 2 },
);

/** Typed variants of one type: 1-3 variants, a default variant or none, a rule naming a variant or none, metadata or none. */
function typedFields(type: VariantType): fc.Arbitrary<Json> {
  return fc.uniqueArray(fc.constantFrom('v1', 'v2', 'v3', 'Other'), { minLength: 1, maxLength: 3 }).chain((names) =>
    fc.record(
      {
        variants: fc
          .tuple(...names.map(() => fc.constantFrom(...kVariantValues[type])))
          .map((values) => Object.fromEntries(names.map((n, i) => [n, values[i]]))),
        defaultVariant: fc.option(fc.constantFrom(...names), { nil: null }),
        targeting: fc.constantFrom(...names).map((v) => ({ if: [{ '==': [{ var: 'plan' }, 'x'] }, v] })),
        metadata: fc.constantFrom({ owner: 'growth' }, { version: 2, team: 'web' }),
      },
      { requiredKeys: ['variants'] },
    ),
  );
}

/** Unleash's models a boolean state may carry (issue 60): carried by export and apply as written. */
const kUnleashModels: readonly Json[] = [
  { strategies: [] },
  {
    strategies: [
      {
        name: 'flexibleRollout',
        parameters: { rollout: '40', stickiness: 'default', groupId: 'g' },
        constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro'], caseInsensitive: true }],
        segments: [3],
        variants: [{ name: 'x', weight: 1, payload: { type: 'csv', value: 'a,b' } }],
      },
    ],
    segments: [{ id: 3, name: 'eu', constraints: [{ contextName: 'country', operator: 'STR_ENDS_WITH', values: ['EU'] }] }],
    variants: [{ name: 'a', weight: 2, stickiness: 'sessionId' }],
    dependencies: [{ feature: 'checkout', enabled: false }],
    impressionData: true,
  },
];

function state(audiences: readonly string[], type: VariantType | null): fc.Arbitrary<Json> {
  const gate = fc.record(
    {
      enabled: fc.boolean(),
      trafficPercentage: percentage,
      cohorts: fc.array(fc.constantFrom(...kCohorts), { maxLength: 3 }),
      audience: audiences.length === 0 ? fc.constant(null) : fc.option(fc.constantFrom(...audiences), { nil: null }),
    },
    { requiredKeys: ['enabled', 'trafficPercentage'] },
  );
  if (type === null) {
    return fc
      .tuple(gate, fc.option(fc.constantFrom(...kUnleashModels), { nil: undefined, freq: 3 }))
      .map(([g, unleash]) => (unleash === undefined ? g : { ...g, unleash }));
  }
  return fc.tuple(gate, typedFields(type)).map(([g, typed]) => ({ ...g, ...typed }));
}

const variantType = fc.option(fc.constantFrom<VariantType>('boolean', 'string', 'number', 'object'), { nil: null, freq: 2 });
const flagBase = fc.record(
  { description: fc.string({ maxLength: 20 }), tags: fc.array(fc.constantFrom(...kTags), { maxLength: 3 }) },
  { requiredKeys: [] },
);

function singleFlag(audiences: readonly string[]): fc.Arbitrary<Json> {
  return variantType.chain((type) => fc.tuple(flagBase, state(audiences, type)).map(([base, s]) => ({ ...base, ...s })));
}

function groupFlag(audiences: readonly string[], environments: readonly string[]): fc.Arbitrary<Json> {
  return variantType.chain((type) =>
    fc
      .tuple(
        flagBase,
        fc.option(fc.array(fc.constantFrom(...kCohorts), { maxLength: 3 }), { nil: undefined }),
        // An environment the file leaves out is at its default: off, 0%, inheriting.
        fc.tuple(...environments.map(() => fc.option(state(audiences, type), { nil: undefined }))),
      )
      .map(([base, cohorts, states]) => {
        const envs: Json = {};
        environments.forEach((env, i) => {
          if (states[i] !== undefined) envs[env] = states[i];
        });
        return { ...base, ...(cohorts === undefined ? {} : { cohorts }), environments: envs };
      }),
  );
}

interface Generated {
  file: Json;
  /** The environments A and B are created with (the file adds the others). */
  created: string[];
}

const generatedFile: fc.Arbitrary<Generated> = fc
  .record({
    kind: fc.constantFrom<'single' | 'multi'>('single', 'multi'),
    environments: fc.uniqueArray(fc.constantFrom(...kEnvNames), { minLength: 1, maxLength: 3 }),
    created: fc.integer({ min: 1, max: 3 }),
    audiences: fc.option(
      fc
        .uniqueArray(fc.constantFrom(...kAudienceNames), { maxLength: 3, selector: (n) => n.toLowerCase() })
        .chain((names) =>
          fc.tuple(...names.map(() => rules)).map((lists) => Object.fromEntries(names.map((n, i) => [n, { rules: lists[i] }]))),
        ),
      { nil: undefined, freq: 4 },
    ),
    flagNames: fc.uniqueArray(fc.constantFrom(...kFlagNames), { maxLength: 5 }),
  })
  .chain(({ kind, environments, created, audiences, flagNames }) => {
    const audienceNames = Object.keys(audiences ?? {});
    const flag = kind === 'single' ? singleFlag(audienceNames) : groupFlag(audienceNames, environments);
    return fc.tuple(...flagNames.map(() => flag)).map((flags): Generated => {
      const file: Json = { flagwire: 1, kind };
      if (kind === 'multi') file.environments = environments;
      if (audiences !== undefined) file.audiences = audiences;
      file.flags = Object.fromEntries(flagNames.map((n, i) => [n, flags[i]]));
      return { file, created: kind === 'multi' ? environments.slice(0, created) : [] };
    });
  });

// ---- the property ------------------------------------------------------------------------------

let projects = 0;

function emptyProject(kind: 'single' | 'multi', environments: string[]): string {
  projects++;
  return world.run('projectCreate', { principal: kOperator, name: `Round trip ${projects}`, orgId: world.ids.orgA, kind, environments }).id;
}

function exported(projectId: string): string {
  return fileText(exportedFile(world, projectId));
}

function plan(projectId: string, document: unknown) {
  world.store.resetReadTxn();
  return flagsPlan(world.store, { projectId, document, prune: true });
}

function apply(projectId: string, document: unknown) {
  const received = jsonBody(typeof document === 'string' ? document : JSON.stringify(document));
  return world.run('flagsApply', { principal: kOperator, projectId, received, prune: false, ifProjectRevision: null, ifPlan: null });
}

/** What applying a file could change in the project: its flags, audiences, environments and audit. */
function projectRecords(projectId: string): string {
  world.store.resetReadTxn();
  return JSON.stringify({
    project: getProject(world.store, projectId),
    flags: listFlags(world.store, projectId),
    audiences: listAudiences(world.store, projectId),
    audit: world.store.listAudit(projectId, { limit: 1000, before: null }),
  });
}

t.test(`a generated file, applied and exported, exports again to the same bytes (${kRuns} runs, seed ${kSeed})`, async (t) => {
  let failure = '';
  const details = fc.check(
    fc.property(generatedFile, ({ file, created }) => {
      const kind = file.kind as 'single' | 'multi';
      const a = emptyProject(kind, created);
      const first = apply(a, file);
      if (!first.changed && Object.keys(file.flags as Json).length > 0) return fail('applying F to an empty project changed nothing');
      const again = plan(a, file);
      if (again.changed) return fail(`F plans changes against A once applied: ${JSON.stringify(again.changes)}`);
      const e1 = exported(a);

      const b = emptyProject(kind, created);
      apply(b, JSON.parse(e1));
      const e2 = exported(b);
      if (e1 !== e2) return fail(`E1 and E2 differ\nE1:\n${e1}\nE2:\n${e2}`);
      const onB = plan(b, file);
      if (onB.changed) return fail(`F plans changes against B, made from E1: ${JSON.stringify(onB.changes)}`);

      const onA = plan(a, JSON.parse(e1));
      if (onA.changed || onA.changes.length > 0 || onA.notInFile.length > 0)
        return fail(`E1 plans changes against A: ${JSON.stringify(onA)}`);
      const before = projectRecords(a);
      const reapplied = apply(a, JSON.parse(e1));
      if (reapplied.changed) return fail('applying E1 to A again reports a change');
      if (reapplied.revision !== onA.revision) return fail(`the revision moved: ${onA.revision} -> ${reapplied.revision}`);
      if (projectRecords(a) !== before) return fail('applying E1 to A again wrote something');
      return true;

      function fail(why: string): boolean {
        failure = `${why}\nF:\n${fileText(file)}`;
        return false;
      }
    }),
    { numRuns: kRuns, seed: kSeed },
  );
  if (details.failed) t.fail(`${failure}\n${fc.defaultReportMessage(details)}`);
  else t.equal(details.numRuns, kRuns, 'every run held');
});

t.test('the generator reaches what the property is about', async (t) => {
  // A seeded sample of the same generator: the runs above saw these shapes too (not a tautology of 40 empty files).
  const sample = fc.sample(generatedFile, { numRuns: 200, seed: 7 }).map((g) => g.file);
  const flags = sample.flatMap((f) => Object.values(f.flags as Json) as Json[]);
  const states = flags.flatMap((f) => (f.environments === undefined ? [f] : (Object.values(f.environments as Json) as Json[])));
  t.ok(
    sample.some((f) => f.kind === 'multi'),
    'multi files',
  );
  t.ok(
    sample.some((f) => f.kind === 'single'),
    'single files',
  );
  t.ok(
    sample.some((f) => f.audiences !== undefined && Object.keys(f.audiences as Json).length > 0),
    'files with audiences',
  );
  t.ok(
    sample.some((f) => f.audiences === undefined),
    'files leaving audiences unmanaged',
  );
  t.ok(
    states.some((s) => typeof s.audience === 'string'),
    'states with an audience',
  );
  t.ok(
    states.some((s) => s.variants !== undefined && s.defaultVariant !== null && s.targeting !== undefined),
    'typed states with a default variant and a rule',
  );
  t.ok(
    flags.some((f) => Array.isArray(f.cohorts) && (f.cohorts as unknown[]).length > 0 && f.environments !== undefined),
    'group flags with a flag-wide list',
  );
  t.ok(
    flags.some((f) => Array.isArray(f.tags) && new Set(f.tags).size < (f.tags as unknown[]).length),
    'flags whose tags repeat',
  );
  t.ok(
    sample.some((f) => Object.hasOwn(f.flags as Json, '__proto__')) &&
      sample.some((f) => f.audiences !== undefined && Object.hasOwn(f.audiences as Json, '__proto__')),
    'a flag and an audience named __proto__',
  );
});
