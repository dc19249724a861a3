// The differential check of src/sync/flag-set.ts: generated project environments (single and group flags,
// both bucketings, boolean and typed flags of every value type, cohorts, audiences, the plan on and off,
// disabled states) become flagd documents; generated contexts are then asked of @openfeature/flagd-core on
// the document and of Flagwire's OFREP rules (OfrepContext, compileState and src/ofrep/answer.ts's
// ofrepAnswer, the code the server's OFREP routes run). Used by test/sync/flag-set.test.ts
// and, with a million contexts, by bench/flag-set.bench.ts.
//
// Contexts are made by a seeded generator rather than fast-check (a million fast-check records would be
// most of the run): targetingKey and cohort ASCII (flagd-core hashes UTF-16 code units, Flagwire UTF-8),
// the audiences' attributes as strings, numbers, booleans, absent and the values OFREP never takes as an
// attribute; the attributes typed rules read come from a pool of definition-arbitraries.ts contexts.
//
// Some states run an experiment (issue 58): flagd's variant, its marker removed, must be OFREP's, and the
// marker (the flag metadata's flagwireExposureMarker) must end it exactly where OFREP says inExperiment:
// true of an answer with a variant (an answer without one, the caller's default, has nothing to mark).
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { compileState, decidedBy, decisionInExperiment, decisionValue } from '../../src/evaluation/engine/evaluate.js';
import { compileVariants, inExperiment } from '../../src/evaluation/engine/variants.js';
import { effectiveState } from '../../src/flags/records/flag-state.js';
import { type EnvState, type Flag, type FlagState, kExposureMarkerField, type TypedVariants } from '../../src/model/flags.js';
import { typedProblems } from '../../src/flags/variant-rules.js';
import type { Audience } from '../../src/model/projects.js';
import { OfrepContext } from '../../src/ofrep/context.js';
import { kReasons, kSlotAudiencePlan, kSlotKeyMissing, ofrepAnswer, type OfrepState } from '../../src/ofrep/answer.js';
import { flagdInexpressible } from '../../src/flags/flagd-flag.js';
import { buildFlagSet, type FlagSetInput } from '../../src/sync/flag-set.js';
import { type FlagValueType, type VariantValue, variantType } from '../../src/targeting/definition.js';
import { contextArb, kVariantSets, ruleArb } from '../targeting/definition-arbitraries.js';
import { FlagdCoreOracle } from '../targeting/flagd-core-oracle.js';

export const kNowMs = Date.UTC(2026, 10, 24, 12, 0, 0, 500);

export const kAttributes = ['plan', 'region', 'score', 'beta', 'country', 'tier'];
/** Names flagd's `var` cannot read as Flagwire does: their audiences' flags are left out. */
export const kBadAttributes = ['user.plan', 'a\\b'];
export const kValues = ['beta', 'gold', 'NL', '1', '2.5', '0', '-1', 'true', 'false', '1.0', '01', '1e21', 'a b', ''];
export const kCohorts = ['c1', 'c2', 'vip', 'beta-users', 'a b', ''];
const kEnvironments = ['prod', 'dev'];

/** One generated project environment: what buildFlagSet is given. */
export interface GeneratedProject {
  input: FlagSetInput;
  /** The seed of its contexts. */
  seed: number;
}

const ruleAttributePool: Record<string, unknown>[] = fc
  .sample(contextArb, { numRuns: 512, seed: 44 })
  .map((c) => JSON.parse(JSON.stringify(c)) as Record<string, unknown>);

export const typedArb: fc.Arbitrary<TypedVariants> = fc
  .constantFrom<FlagValueType>('boolean', 'string', 'number', 'object')
  .chain((type) => {
    const variants = kVariantSets[type][0] as Record<string, VariantValue>;
    const names = Object.keys(variants);
    return fc.record({
      variants: fc.constant(variants),
      defaultVariant: fc.oneof(fc.constantFrom(...names), fc.constant(null)),
      targeting: fc.oneof(
        fc.constant({}),
        ruleArb(names).map((r) => (r !== null && typeof r === 'object' && !Array.isArray(r) ? r : { if: [true, r, null] })),
      ) as fc.Arbitrary<Record<string, unknown>>,
      metadata: fc.option(fc.dictionary(fc.constantFrom('team', 'owner', 'id'), fc.oneof(fc.string({ maxLength: 4 }), fc.integer())), {
        nil: undefined,
      }),
    });
  })
  .map((typed) => {
    const stored: TypedVariants = { variants: typed.variants, defaultVariant: typed.defaultVariant, targeting: typed.targeting };
    if (typed.metadata !== undefined && Object.keys(typed.metadata).length > 0) stored.metadata = typed.metadata;
    // Only what the store takes (src/flags/variant-rules.ts): a rule Flagwire refuses is dropped.
    if (typedProblems(stored).length > 0) stored.targeting = {};
    return stored;
  });

function stateArb(audienceIds: readonly string[]): fc.Arbitrary<FlagState> {
  return fc
    .record({
      enabled: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      trafficPercentage: fc.oneof(fc.constantFrom(0, 100), fc.integer({ min: 1, max: 99 })),
      audienceId: fc.oneof(fc.constant(null), fc.constantFrom(...audienceIds, 'aud_deleted')),
      typed: fc.option(typedArb, { nil: undefined, freq: 2 }),
      experiment: fc.option(fc.constantFrom('exp-1', 'exp-2'), { nil: undefined, freq: 2 }),
    })
    .map(({ typed, experiment, ...state }) => ({
      ...state,
      ...(typed === undefined ? {} : { typed }),
      ...(experiment === undefined ? {} : { experiment }),
    }));
}

const cohortsArb = fc.array(fc.constantFrom(...kCohorts), { maxLength: 4 }).map((list) => [...new Set(list)]);

const audienceArb = (projectId: string, i: number): fc.Arbitrary<Audience> =>
  fc
    .array(
      fc.record({
        attribute: fc.oneof(
          { weight: 12, arbitrary: fc.constantFrom(...kAttributes) },
          { weight: 1, arbitrary: fc.constantFrom(...kBadAttributes) },
        ),
        values: fc.uniqueArray(fc.constantFrom(...kValues), { minLength: 1, maxLength: 3 }),
      }),
      { minLength: 1, maxLength: 3 },
    )
    .map((rules) => ({ id: `aud_${i}`, projectId, name: `Audience ${i}`, rules, updatedAt: 0 }));

export const projectArb: fc.Arbitrary<GeneratedProject> = fc
  .record({ multi: fc.boolean(), audienceCount: fc.integer({ min: 0, max: 3 }), flagCount: fc.integer({ min: 1, max: 6 }) })
  .chain(({ multi, audienceCount, flagCount }) => {
    const projectId = multi ? 'prj_multi' : 'prj_single';
    const audiences = fc.tuple(...Array.from({ length: audienceCount }, (_, i) => audienceArb(projectId, i)));
    const ids = Array.from({ length: audienceCount }, (_, i) => `aud_${i}`);
    const flag = (i: number): fc.Arbitrary<Flag> =>
      fc
        .record({
          fractional: fc.boolean(),
          cohorts: cohortsArb,
          state: stateArb(ids),
          // Mostly set: an environment never set is disabled (kDefaultEnvState).
          environments: fc.tuple(
            ...kEnvironments.map(() =>
              fc.option(fc.record({ state: stateArb(ids), cohorts: fc.option(cohortsArb, { nil: null }) }), { nil: undefined, freq: 6 }),
            ),
          ),
          salt: fc.integer({ min: 0, max: 1e9 }),
        })
        .map(({ fractional, cohorts, state, environments, salt }) => {
          const base = {
            id: `flg_${i}x${salt.toString(36)}`,
            projectId,
            name: `flag-${i}`,
            description: '',
            tags: [],
            cohorts,
            createdAt: 0,
            updatedAt: 0,
            ...(fractional ? { bucketing: 'fractional' as const } : {}),
          };
          if (!multi) return { ...base, kind: 'flag', state };
          const envs: Record<string, EnvState> = {};
          environments.forEach((e, i) => {
            if (e !== undefined) envs[kEnvironments[i]!] = { ...e.state, cohorts: e.cohorts };
          });
          return { ...base, kind: 'groupflag', environments: envs };
        });
    return fc.record({
      audiences,
      flags: fc.tuple(...Array.from({ length: flagCount }, (_, i) => flag(i))),
      audiencesAllowed: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      environment: multi ? fc.constantFrom(...kEnvironments) : fc.constant(null),
      revision: fc.nat(),
      seed: fc.integer(),
    }) as fc.Arbitrary<{
      audiences: Audience[];
      flags: Flag[];
      audiencesAllowed: boolean;
      environment: string | null;
      revision: number;
      seed: number;
    }>;
  })
  .map(({ seed, audiences, flags, audiencesAllowed, environment, revision }) => ({
    seed,
    input: {
      projectId: flags[0]!.projectId,
      environment,
      flags,
      audiences,
      audiencesAllowed,
      revision,
    },
  }));

/** mulberry32: a small seeded generator, so a failing context can be made again from its project's seed. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(rnd: () => number, list: readonly T[]): T {
  return list[Math.floor(rnd() * list.length)]!;
}

/** Printable ASCII, 1..12 characters. */
function asciiKey(rnd: () => number): string {
  const length = 1 + Math.floor(rnd() * 12);
  let key = '';
  for (let i = 0; i < length; i++) key += String.fromCharCode(32 + Math.floor(rnd() * 95));
  return key;
}

/** An attribute's value in every form OFREP may be sent it: the value, its number or boolean, or one it never matches. */
function attributeValue(rnd: () => number, values: readonly string[]): unknown {
  const value = pick(rnd, values);
  const r = rnd();
  if (r < 0.45) return value;
  if (r < 0.7) {
    const n = Number(value);
    if (value === 'true' || value === 'false') return value === 'true';
    return Number.isFinite(n) ? n : value;
  }
  return pick(rnd, [null, [value], { value }, 1.5, -0, 1e21, true, false, `${value} `, value.toUpperCase(), 0]);
}

/** A context as an OFREP caller may send it, in `environment` (null: a single-environment project's). */
export function makeContext(
  rnd: () => number,
  environment: string | null,
  values: readonly string[],
  cohorts: readonly string[],
): Record<string, unknown> {
  const context: Record<string, unknown> = { ...pick(rnd, ruleAttributePool) };
  delete context.targetingKey;
  const k = rnd();
  if (k < 0.65) context.targetingKey = rnd() < 0.5 ? `user-${Math.floor(rnd() * 100000)}` : asciiKey(rnd);
  else if (k < 0.72) context.targetingKey = '';
  const c = rnd();
  if (c < 0.35) context.cohort = pick(rnd, cohorts);
  else if (c < 0.55) context.cohort = asciiKey(rnd);
  else if (c < 0.6) context.cohort = '';
  for (const name of [...kAttributes, ...kBadAttributes]) if (rnd() < 0.6) context[name] = attributeValue(rnd, values);
  if (environment !== null) context.env = environment;
  return context;
}

/** What an OpenFeature client gets, in flagd-core's terms. `value` undefined: the caller's default. */
export interface Answer {
  value: unknown;
  variant: string | undefined;
  reason: string;
  errorCode: string | undefined;
}

/** OFREP's answer, with whether it is an exposure of the state's experiment (false without one). */
interface OfrepAnswer extends Answer {
  inExperiment: boolean;
}

interface Compiled {
  flag: Flag;
  type: FlagValueType;
  state: OfrepState;
  typed: TypedVariants | undefined;
}

/** Flagwire's OFREP answer: src/ofrep/answer.ts's own (the plan's refusal aside: such flags are left out). */
function ofrepAnswerOf(c: Compiled, ctx: OfrepContext): OfrepAnswer | 'TARGETING_KEY_MISSING' {
  const answer = ofrepAnswer(c.state, ctx, true, kNowMs);
  if (answer === kSlotKeyMissing) return 'TARGETING_KEY_MISSING';
  if (answer === kSlotAudiencePlan) throw new Error(`${c.flag.name}: refused by the plan, yet served`);
  const experiment = c.state.experiment !== null;
  if (typeof answer === 'number') {
    const value = decisionValue(answer);
    const reason = kReasons[decidedBy(answer)]!;
    return { value, variant: value ? 'on' : 'off', reason, errorCode: undefined, inExperiment: experiment && decisionInExperiment(answer) };
  }
  return {
    value: answer.value,
    variant: answer.variant,
    reason: answer.reason,
    errorCode: answer.errorCode,
    inExperiment: experiment && inExperiment(answer),
  };
}

/**
 * flagd's variant with the exposure marker removed, and whether it carried it: a variant ending in the
 * marker its flag metadata names (kExposureMarkerField) is the twin of the variant before it.
 */
export function unmarked(variant: string | undefined, flagMetadata: unknown): { variant: string | undefined; exposure: boolean } {
  const marker = (flagMetadata as Record<string, unknown> | undefined)?.[kExposureMarkerField];
  if (variant === undefined || typeof marker !== 'string' || !variant.endsWith(marker)) return { variant, exposure: false };
  return { variant: variant.slice(0, -marker.length), exposure: true };
}

/** What flagd answers a context without a key on a split (docs/design.md §2c): the flag's answer for "out". */
function outAnswer(c: Compiled): Pick<Answer, 'value' | 'variant'> {
  if (c.typed === undefined) return { value: false, variant: 'off' };
  const name = c.typed.defaultVariant;
  return name === null ? { value: undefined, variant: undefined } : { value: c.typed.variants[name], variant: name };
}

/**
 * Reasons flagd cannot give as OFREP does (docs/design.md §2c), as "OFREP>flagd": a split is SPLIT only in
 * Flagwire; a disabled boolean flag is STATIC "off"; STATIC and TARGETING_MATCH trade places for a listed
 * cohort of a flag on (or off) for everyone else.
 */
export const kDocumentedReasons = new Set([
  'SPLIT>TARGETING_MATCH',
  'SPLIT>DEFAULT',
  'DISABLED>STATIC',
  'STATIC>TARGETING_MATCH',
  'TARGETING_MATCH>STATIC',
]);

export interface Tally {
  projects: number;
  flags: number;
  omitted: number;
  contexts: number;
  evaluations: number;
  /** Contexts without a key on a split: flagd's answer checked against design §2c, not OFREP's. */
  keyMissing: number;
  /** "OFREP>flagd" reason pairs that differ, with their counts. */
  reasonPairs: Record<string, number>;
  /** OFREP's reasons (or error codes), with their counts: every kind must be exercised. */
  byReason: Record<string, number>;
  /** Answers of a state with an experiment, and those OFREP says are exposures (flagd's twins). */
  experimentAnswers: number;
  exposures: number;
}

export function newTally(): Tally {
  return {
    projects: 0,
    flags: 0,
    omitted: 0,
    contexts: 0,
    evaluations: 0,
    keyMissing: 0,
    reasonPairs: {},
    byReason: {},
    experimentAnswers: 0,
    exposures: 0,
  };
}

/** Builds `project`'s flag set and asks `contexts` generated contexts of it; throws on the first mismatch. */
export function checkProject(project: GeneratedProject, contexts: number, tally: Tally): void {
  const { input } = project;
  const set = buildFlagSet(input);
  const document = JSON.parse(set.json) as { flags: Record<string, unknown>; metadata: Record<string, unknown> };
  tally.projects++;
  tally.flags += input.flags.length;
  tally.omitted += set.omitted.length;
  const expectedOmitted = input.flags
    .filter((f) => flagdInexpressible(f, input.environment, input.audiences, input.audiencesAllowed) !== null)
    .map((f) => f.name);
  const omittedNames = set.omitted.map((o) => o.name);
  if (!isDeepStrictEqual(omittedNames, expectedOmitted)) throw new Error(`omitted ${omittedNames}, expected ${expectedOmitted}`);
  if (document.metadata.flagwireOmitted !== (omittedNames.length === 0 ? undefined : omittedNames.join(',')))
    throw new Error(`flagwireOmitted ${document.metadata.flagwireOmitted}`);
  if (
    !isDeepStrictEqual(
      Object.keys(document.flags).sort(),
      input.flags
        .map((f) => f.name)
        .filter((n) => !omittedNames.includes(n))
        .sort(),
    )
  )
    throw new Error(`served ${Object.keys(document.flags)}`);

  const oracle = new FlagdCoreOracle();
  oracle.load(document);
  const served: Compiled[] = input.flags
    .filter((f) => !omittedNames.includes(f.name))
    .map((flag) => {
      const effective = effectiveState(flag, input.environment);
      const audience = input.audiences.find((a) => a.id === effective.audienceId);
      const typed = effective.typed;
      return {
        flag,
        type: typed === undefined ? 'boolean' : variantType(Object.values(typed.variants)[0]!),
        state: {
          ...compileState(flag.id, effective, audience, flag.bucketing),
          variants: typed === undefined ? null : compileVariants(typed, flag.name, null, effective.experiment ?? null),
        },
        typed,
      };
    });
  const values = [...new Set(input.audiences.flatMap((a) => a.rules.flatMap((r) => r.values)).concat(kValues))];
  const cohorts = [...new Set(input.flags.flatMap((f) => f.cohorts).concat(kCohorts))];
  const rnd = random(project.seed);
  const ctx = new OfrepContext();
  for (let i = 0; i < contexts; i++) {
    const context = makeContext(rnd, input.environment, values, cohorts);
    if (!ctx.parse(JSON.stringify({ context }))) throw new Error(`OFREP refused ${JSON.stringify(context)}: ${ctx.errorDetails}`);
    tally.contexts++;
    for (const c of served) {
      const resolved = oracle.resolve(c.flag.name, c.type, context, kNowMs);
      const { variant, exposure } = unmarked(resolved.variant, resolved.flagMetadata);
      const theirs = { ...resolved, variant };
      const ours = ofrepAnswerOf(c, ctx);
      tally.evaluations++;
      const fail = (what: string) =>
        new Error(
          `${what}: flag ${JSON.stringify(c.flag)} as ${JSON.stringify(document.flags[c.flag.name])}, context ${JSON.stringify(context)}: ` +
            `OFREP ${JSON.stringify(ours)}, flagd-core ${JSON.stringify(theirs)}`,
        );
      if (ours === 'TARGETING_KEY_MISSING') {
        tally.keyMissing++;
        const out = outAnswer(c);
        if (!isDeepStrictEqual(theirs.value, out.value) || theirs.variant !== out.variant)
          throw fail('no key: not the flag\'s "out" answer');
        if (exposure) throw fail('no key: flagd marks an exposure');
        continue;
      }
      if (c.state.experiment !== null) tally.experimentAnswers++;
      const exposed = ours.inExperiment && ours.variant !== undefined;
      if (exposed) tally.exposures++;
      if (exposure !== exposed) throw fail(exposed ? 'an exposure flagd does not mark' : 'flagd marks an answer that is no exposure');
      const label = ours.errorCode ?? ours.reason;
      tally.byReason[label] = (tally.byReason[label] ?? 0) + 1;
      if (!isDeepStrictEqual(ours.value, theirs.value) || ours.variant !== theirs.variant) throw fail('value or variant differ');
      if (ours.errorCode !== theirs.errorCode) throw fail('error codes differ');
      if (ours.reason !== theirs.reason) {
        const pair = `${ours.reason}>${theirs.reason}`;
        if (!kDocumentedReasons.has(pair)) throw fail(`reason ${pair} is not a documented difference`);
        tally.reasonPairs[pair] = (tally.reasonPairs[pair] ?? 0) + 1;
      }
    }
  }
}
