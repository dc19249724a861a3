// The flagd flag set of a project environment (src/sync/flag-set.ts, docs/design.md §2c): each rule of the
// translation on a small case, asked of @openfeature/flagd-core (the evaluator of the stock Node flagd
// provider) on the built document, then the differential check over generated projects and contexts
// (flag-set-differential.ts; a million contexts in bench/flag-set.bench.ts).
import fc from 'fast-check';
import t from 'tap';
import { fractionalBucket } from '../../src/evaluation/engine/bucket.js';
import type { EnvState, Flag, FlagState, GroupFlag, SingleFlag } from '../../src/model/flags.js';
import type { Audience } from '../../src/model/projects.js';
import { exposureMarker } from '../../src/flags/flagd-flag.js';
import { buildFlagSet, type FlagSetInput } from '../../src/sync/flag-set.js';
import type { FlagValueType } from '../../src/targeting/definition.js';
import { singleFlagRecord } from '../helpers/flag-record.js';
import { type Answer, FlagdCoreOracle } from '../targeting/flagd-core-oracle.js';
import { checkProject, kNowMs, newTally, projectArb } from './flag-set-differential.js';

const kProject = 'prj_1';

function single(name: string, state: Partial<FlagState>, extra: Partial<SingleFlag> = {}): SingleFlag {
  return singleFlagRecord(`flg_${name}`, kProject, name, state, extra);
}

function audience(id: string, rules: Audience['rules']): Audience {
  return { id, projectId: kProject, name: id, rules, updatedAt: 0 };
}

function setOf(flags: Flag[], more: Partial<FlagSetInput> = {}) {
  const input: FlagSetInput = {
    projectId: kProject,
    environment: null,
    flags,
    audiences: [],
    audiencesAllowed: true,
    revision: 7,
    ...more,
  };
  const set = buildFlagSet(input);
  const document = JSON.parse(set.json);
  const oracle = new FlagdCoreOracle();
  oracle.load(document);
  return {
    set,
    document,
    ask: (name: string, context: Record<string, unknown>, type: FlagValueType = 'boolean'): Answer =>
      oracle.resolve(name, type, context, kNowMs),
  };
}

t.test('metadata: the set id, project, environment, revision, and the flags left out', async (t) => {
  const ok = single('ok', {});
  const modulo = single('modulo', { trafficPercentage: 30 });
  const single1 = setOf([ok, modulo]);
  t.same(single1.document.metadata, {
    flagSetId: kProject,
    scope: kProject,
    flagwireProject: kProject,
    flagwireRevision: 7,
    flagwireOmitted: 'modulo',
  });
  t.same(
    single1.set.omitted.map((o) => [o.flagId, o.name]),
    [['flg_modulo', 'modulo']],
  );
  t.match(single1.set.omitted[0]!.reason, /modulo bucketing/);
  t.same(Object.keys(single1.document.flags), ['ok'], 'keyed by name; the omitted flag is not in it');
  const multi = setOf([ok], { environment: 'prod' });
  t.same(multi.document.metadata, {
    flagSetId: `${kProject}/prod`,
    scope: `${kProject}/prod`,
    flagwireProject: kProject,
    flagwireEnvironment: 'prod',
    flagwireRevision: 7,
  });
  t.equal(multi.ask('ok', {}).value, true);
  t.same(
    multi.ask('ok', {}).flagMetadata,
    { ...multi.document.metadata, id: 'flg_ok', name: 'ok' },
    "OFREP's id and name are the flag's metadata",
  );
});

t.test('boolean flags: 0 % and 100 % are STATIC without targeting, whatever the bucketing', async (t) => {
  const { document, ask } = setOf([single('on', {}), single('off', { trafficPercentage: 0 })]);
  t.notOk('targeting' in document.flags.on);
  t.match(ask('on', { targetingKey: 'u1' }), { value: true, variant: 'on', reason: 'STATIC' });
  t.notOk('targeting' in document.flags.off);
  t.match(ask('off', {}), { value: false, variant: 'off', reason: 'STATIC' });
});

t.test('a disabled boolean flag is false, variant "off" (STATIC): OFREP answers false, "off", DISABLED', async (t) => {
  const { ask } = setOf([single('d', { enabled: false }, { cohorts: ['vip'] })]);
  t.match(ask('d', { cohort: 'vip' }), { value: false, variant: 'off', reason: 'STATIC' });
});

t.test('a disabled typed flag is DISABLED: the caller’s default, as OFREP gives it', async (t) => {
  const typed = { variants: { red: 'r', blue: 'b' }, defaultVariant: 'red', targeting: {} };
  const { ask } = setOf([single('d', { enabled: false, typed })]);
  t.match(ask('d', {}, 'string'), { value: undefined, variant: undefined, reason: 'DISABLED' });
});

t.test('cohorts: a listed cohort is in (TARGETING_MATCH); "" and non-strings never are', async (t) => {
  const { ask } = setOf([single('c', { trafficPercentage: 0 }, { cohorts: ['vip', ''] })]);
  t.match(ask('c', { cohort: 'vip' }), { value: true, variant: 'on', reason: 'TARGETING_MATCH' });
  t.match(ask('c', { cohort: 'VIP' }), { value: false, variant: 'off' });
  t.match(ask('c', { cohort: '' }), { value: false }, 'an empty cohort is none (OFREP reads it as absent)');
  t.match(ask('c', { cohort: ['vip'] }), { value: false });
});

t.test('audiences: every rule met, strings as they are, numbers and booleans by their JSON text', async (t) => {
  const aud = audience('aud_1', [
    { attribute: 'plan', values: ['beta', '1', '2.5', 'true', '1.0'] },
    { attribute: 'country', values: ['NL'] },
  ]);
  const { ask } = setOf([single('a', { audienceId: 'aud_1' })], { audiences: [aud] });
  t.match(ask('a', { plan: 'beta', country: 'NL' }), { value: true, variant: 'on', reason: 'TARGETING_MATCH' });
  t.match(ask('a', { plan: 'beta' }), { value: false, variant: 'off', reason: 'TARGETING_MATCH' }, 'an absent attribute: out');
  for (const plan of [1, 2.5, true, '1', '1.0']) t.equal(ask('a', { plan, country: 'NL' }).value, true, `${JSON.stringify(plan)} matches`);
  for (const plan of [null, ['beta'], { beta: true }, false, 1.5, 'Beta', ' beta'])
    t.equal(ask('a', { plan, country: 'NL' }).value, false, `${JSON.stringify(plan)} does not`);
  t.equal(ask('a', { plan: 1.0, country: 'NL' }).value, true, '1.0 is the number 1, whose text is "1"');
  const texts = audience('aud_2', [{ attribute: 'n', values: ['1.0', '01', '1e21', '-0', 'True'] }]);
  const other = setOf([single('b', { audienceId: 'aud_2' })], { audiences: [texts] });
  for (const n of [1, 1e21, 0, -0, true])
    t.equal(other.ask('b', { n }).value, false, `${JSON.stringify(n)}: its JSON text is none of the values`);
  t.equal(other.ask('b', { n: '1e21' }).value, true, 'the string itself matches');
});

t.test('an audience that no longer exists never matches; a plan without audiences leaves the flag out', async (t) => {
  const gone = setOf([single('g', { audienceId: 'aud_gone' }, { cohorts: ['vip'] })]);
  t.match(gone.ask('g', { targetingKey: 'u', plan: 'beta' }), { value: false, variant: 'off', reason: 'TARGETING_MATCH' });
  t.match(gone.ask('g', { cohort: 'vip' }), { value: true, variant: 'on' });
  const aud = audience('aud_1', [{ attribute: 'plan', values: ['beta'] }]);
  const noPlan = setOf([single('p', { audienceId: 'aud_1' }), single('q', { audienceId: 'aud_1', enabled: false })], {
    audiences: [aud],
    audiencesAllowed: false,
  });
  t.same(
    noPlan.set.omitted.map((o) => o.name),
    ['p', 'q'],
    'even disabled: OFREP answers GENERAL before it reads the state',
  );
  t.match(noPlan.set.omitted[0]!.reason, /plan has no audiences/);
  t.equal(noPlan.document.metadata.flagwireOmitted, 'p,q');
});

t.test('an audience attribute flagd would read as a path, or not at all, leaves the flag out', async (t) => {
  for (const attribute of ['user.plan', 'a\\b', '__proto__', '$flagd']) {
    const aud = audience('aud_1', [{ attribute, values: ['beta'] }]);
    const { set } = setOf([single('x', { audienceId: 'aud_1' })], { audiences: [aud] });
    t.equal(set.omitted.length, 1, attribute);
    t.match(set.omitted[0]!.reason, attribute);
  }
  const aud = audience('aud_1', [{ attribute: 'user.plan', values: ['beta'] }]);
  t.same(
    setOf([single('x', { audienceId: 'aud_1', enabled: false })], { audiences: [aud] }).set.omitted,
    [],
    'a disabled flag reads no audience',
  );
});

t.test('the split: fractional bucketing over id:key, key = targetingKey, else cohort; neither: out', async (t) => {
  const flag = single('s', { trafficPercentage: 37 }, { bucketing: 'fractional' });
  const { ask, document } = setOf([flag]);
  t.match(JSON.stringify(document.flags.s.targeting), /"fractional"/);
  let on = 0;
  for (let i = 0; i < 400; i++) {
    const key = `user-${i}`;
    const expected = fractionalBucket(flag.id, key) < 37;
    on += expected ? 1 : 0;
    t.equal(ask('s', { targetingKey: key }).value, expected);
    t.equal(ask('s', { cohort: key }).value, expected, 'the cohort is the key without a targetingKey');
    t.equal(ask('s', { targetingKey: '', cohort: key }).value, expected, 'an empty targetingKey is none');
    t.equal(ask('s', { targetingKey: key, cohort: 'zzz' }).value, expected, 'targetingKey first');
  }
  t.ok(on > 100 && on < 200, `${on} of 400 in`);
  t.match(ask('s', { targetingKey: 'u' }), { reason: 'TARGETING_MATCH' }, 'flagd has no SPLIT');
  t.match(ask('s', {}), { value: false, variant: 'off' }, 'no key: out (OFREP: TARGETING_KEY_MISSING)');
  t.match(ask('s', { targetingKey: 42 }), { value: false }, 'a number is no key (OFREP refuses it)');
  for (let i = 0; i < 100; i++) {
    const key = `user-${i}`;
    const expected = fractionalBucket(flag.id, key) < 37;
    for (const targetingKey of [42, true, ['x'], { k: 'x' }, null])
      t.equal(
        ask('s', { targetingKey, cohort: key }).value,
        expected,
        'only a non-empty string is a targetingKey, as OfrepContext reads it',
      );
  }
});

t.test('modulo bucketing splits only at 0 % and 100 %', async (t) => {
  const { set } = setOf([
    single('a', { trafficPercentage: 1 }),
    single('b', { trafficPercentage: 99 }),
    single('c', { trafficPercentage: 0 }),
  ]);
  t.same(
    set.omitted.map((o) => o.name),
    ['a', 'b'],
  );
  t.same(setOf([single('d', { trafficPercentage: 50, enabled: false })]).set.omitted, [], 'a disabled flag splits nothing');
});

t.test('typed flags: the gate in front of the rule; out is the default variant (DEFAULT)', async (t) => {
  const aud = audience('aud_1', [{ attribute: 'plan', values: ['beta'] }]);
  const typed = {
    variants: { red: '#f00', blue: '#00f' },
    defaultVariant: 'red',
    targeting: { if: [{ '==': [{ var: 'country' }, 'NL'] }, 'blue', null] },
    metadata: { team: 'web' },
  };
  const { ask, document } = setOf([single('t', { audienceId: 'aud_1', typed })], { audiences: [aud] });
  t.match(ask('t', { plan: 'beta', country: 'NL' }, 'string'), { value: '#00f', variant: 'blue', reason: 'TARGETING_MATCH' });
  t.match(ask('t', { plan: 'beta', country: 'DE' }, 'string'), { value: '#f00', variant: 'red', reason: 'DEFAULT' });
  t.match(ask('t', { country: 'NL' }, 'string'), { value: '#f00', variant: 'red', reason: 'DEFAULT' }, 'out of the audience');
  t.same(document.flags.t.metadata, { team: 'web', id: 'flg_t', name: 't' });
  t.same(ask('t', {}, 'string').flagMetadata, { ...document.metadata, team: 'web', id: 'flg_t', name: 't' });
});

t.test('typed flags without a rule: the default variant by name inside, and none without a default variant', async (t) => {
  const typed = (defaultVariant: string | null) => ({ variants: { one: 1, two: 2 }, defaultVariant, targeting: {} });
  const { ask, document } = setOf([
    single('all', { typed: typed('two') }, { cohorts: ['vip'] }),
    single('cohort', { trafficPercentage: 0, typed: typed('two') }, { cohorts: ['vip'] }),
    single('none', { trafficPercentage: 0, typed: typed(null) }, { cohorts: ['vip'] }),
    single('zero', { trafficPercentage: 0, typed: typed('one') }),
  ]);
  t.notOk('targeting' in document.flags.all, 'everyone in: STATIC');
  t.match(ask('all', {}, 'number'), { value: 2, variant: 'two', reason: 'STATIC' });
  t.match(ask('cohort', { cohort: 'vip' }, 'number'), { value: 2, variant: 'two', reason: 'TARGETING_MATCH' });
  t.match(ask('cohort', {}, 'number'), { value: 2, variant: 'two', reason: 'DEFAULT' });
  t.match(ask('none', { cohort: 'vip' }, 'number'), { value: undefined, variant: undefined, reason: 'DEFAULT' });
  t.equal(document.flags.none.defaultVariant, null);
  t.match(ask('zero', {}, 'number'), { value: 1, variant: 'one', reason: 'DEFAULT' }, 'nobody in: DEFAULT, as OFREP says');
});

t.test('a rule flagd-core reads by JavaScript precedence leaves the flag out; wrapped in an `if`, it is served', async (t) => {
  const typed = (targeting: Record<string, unknown>) => ({ variants: { yes: 'yes', true: 'true' }, defaultVariant: 'yes', targeting });
  const and = { and: [{ var: 'x' }, 'es'] };
  const { set, ask } = setOf([
    single('cat', { typed: typed({ cat: ['y', and] }) }),
    single('in', { typed: typed({ if: [{ in: ['a', { or: [{ var: 'l' }, ['a']] }] }, 'yes', 'true'] }) }),
    single('deep', { typed: typed({ if: [true, { cat: [{ missing: ['a'] }] }, null] }) }),
    single('wrapped', { typed: typed({ cat: ['y', { if: [true, and, null] }] }) }),
    single('disabled', { enabled: false, typed: typed({ cat: ['y', and] }) }),
  ]);
  t.same(
    set.omitted.map((o) => o.name),
    ['cat', 'in', 'deep'],
  );
  t.match(set.omitted[0]!.reason, /JavaScript precedence/);
  t.match(ask('wrapped', { x: true }, 'string'), { value: 'yes', variant: 'yes' }, 'answered as JsonLogic (and Flagwire) answers it');
});

t.test('an experiment names its exposures in the variant: twins marked "~" exactly where OFREP says inExperiment', async (t) => {
  const aud = audience('aud_1', [{ attribute: 'plan', values: ['beta'] }]);
  const flag = single(
    's',
    { trafficPercentage: 40, audienceId: 'aud_1', experiment: 'exp' },
    { bucketing: 'fractional', cohorts: ['vip'] },
  );
  const { ask, document } = setOf([flag], { audiences: [aud] });
  t.same(document.flags.s.variants, { on: true, off: false, 'on~': true, 'off~': false });
  t.same(document.flags.s.metadata, { id: 'flg_s', name: 's', experimentKey: 'exp', flagwireExposureMarker: '~' });
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const key = `user-${i}`;
    const inSplit = fractionalBucket(flag.id, key) < 40;
    const split = ask('s', { targetingKey: key, plan: 'beta' });
    t.match(split, { value: inSplit, variant: inSplit ? 'on~' : 'off~' }, 'the split allocates, in or out');
    seen.add(split.variant!);
    t.match(ask('s', { cohort: key, plan: 'beta' }), { value: inSplit, variant: inSplit ? 'on~' : 'off~' }, 'the cohort as the key');
    t.match(ask('s', { targetingKey: key, plan: 'beta', cohort: 'vip' }), { value: true, variant: 'on' }, 'a cohort override is none');
    t.match(ask('s', { targetingKey: key }), { value: false, variant: 'off' }, 'out of the audience: none');
  }
  t.same([...seen].sort(), ['off~', 'on~']);
  t.match(ask('s', { plan: 'beta' }), { value: false, variant: 'off' }, 'no key (OFREP: TARGETING_KEY_MISSING): none');
});

t.test("a typed experiment: the rule's answers twinned, by name or by the text flagd reads; others as the rule gives them", async (t) => {
  const typed = {
    variants: { true: 'T', '7': 'seven', big: 'B' },
    defaultVariant: 'big',
    targeting: {
      if: [
        { '==': [{ var: 'x' }, 'bool'] },
        true,
        { '==': [{ var: 'x' }, 'num'] },
        7,
        { '==': [{ var: 'x' }, 'name'] },
        'big',
        { var: 'x' },
      ],
    },
  };
  const { ask, document } = setOf([
    single('r', { experiment: 'exp', typed }, { cohorts: ['vip'] }),
    single('p', { experiment: 'exp', trafficPercentage: 30, typed: { ...typed, targeting: {} } }, { bucketing: 'fractional' }),
    single('none', { experiment: 'exp', typed: { ...typed, targeting: {} } }),
  ]);
  t.same(Object.keys(document.flags.r.variants), ['7', 'true', 'big', '7~', 'true~', 'big~']);
  t.match(ask('r', { x: 'bool' }, 'string'), { value: 'T', variant: 'true~', reason: 'TARGETING_MATCH' }, 'true names "true"');
  t.match(ask('r', { x: 'num' }, 'string'), { value: 'seven', variant: '7~' }, '7 names "7"');
  t.match(ask('r', { x: 'name' }, 'string'), { value: 'B', variant: 'big~' });
  t.match(
    ask('r', { x: 'name', cohort: 'vip' }, 'string'),
    { value: 'B', variant: 'big', reason: 'TARGETING_MATCH' },
    'a cohort override: none',
  );
  t.match(ask('r', {}, 'string'), { value: 'B', variant: 'big', reason: 'DEFAULT' }, 'no variant from the rule: the default, none');
  t.match(
    ask('r', { x: 'zzz' }, 'string'),
    { variant: undefined, reason: 'ERROR', errorCode: 'GENERAL' },
    'a name of no variant: the error',
  );
  t.match(ask('r', { x: { big: 1 } }, 'string'), { variant: undefined, errorCode: 'GENERAL' });
  const split = document.flags.p;
  t.same(Object.keys(split.variants), ['7', 'true', 'big', 'big~'], 'only what an exposure answers is twinned');
  for (let i = 0; i < 50; i++) t.match(ask('p', { targetingKey: `u${i}` }, 'string'), { value: 'B', variant: 'big~' }, 'in or out: SPLIT');
  t.match(ask('p', {}, 'string'), { value: 'B', variant: 'big', reason: 'DEFAULT' }, 'no key: none');
  t.notOk('targeting' in document.flags.none, 'everyone the default (STATIC): no exposure, no twin');
  t.same(document.flags.none.metadata, { id: 'flg_none', name: 'none', experimentKey: 'exp' });
});

t.test('the marker is one no variant of the flag ends with; without an experiment a document keeps its bytes', async (t) => {
  t.equal(exposureMarker(['on', 'off']), '~');
  t.equal(exposureMarker(['a~', 'b']), '~1');
  t.equal(exposureMarker(['a~', 'b~1', 'c~2']), '~3');
  const typed = { variants: { 'a~': 1, a: 2 }, defaultVariant: 'a', targeting: { var: 'v' } };
  const { ask, document } = setOf([single('m', { experiment: 'exp', typed })]);
  t.equal(document.flags.m.metadata.flagwireExposureMarker, '~1');
  t.match(ask('m', { v: 'a~' }, 'number'), { value: 1, variant: 'a~~1' });
  t.match(ask('m', { v: 'a' }, 'number'), { value: 2, variant: 'a~1' });
  const named = { variants: { null: 'N', x: 'X' }, defaultVariant: 'x', targeting: { var: 'v' } };
  const nulls = setOf([single('n', { experiment: 'exp', typed: named })]);
  t.match(nulls.ask('n', { v: 'null' }, 'string'), { value: 'N', variant: 'null~' }, 'a variant named "null"');
  t.match(nulls.ask('n', {}, 'string'), { value: 'X', variant: 'x', reason: 'DEFAULT' }, 'is not what a null answer names');
  t.match(nulls.ask('n', { v: ['x'] }, 'string'), { value: 'X', variant: 'x~' }, 'a list names the variant of its text');
  t.match(nulls.ask('n', { v: 7 }, 'string'), { variant: undefined, errorCode: 'GENERAL' }, 'a name of no variant: the error');
  // Every kind of state, with and without an experiment: those that allocate nothing differ only in experimentKey.
  const aud = audience('aud_1', [{ attribute: 'plan', values: ['beta'] }]);
  const states: Partial<FlagState>[] = [
    { trafficPercentage: 100 },
    { trafficPercentage: 0, audienceId: 'aud_1' },
    { trafficPercentage: 30, enabled: false },
    { typed: { variants: { a: 1, b: 2 }, defaultVariant: 'a', targeting: {} }, audienceId: 'aud_1' },
    { typed: { variants: { a: 1, b: 2 }, defaultVariant: 'a', targeting: { var: 'v' } }, enabled: false },
    { typed: { variants: { a: 1, b: 2 }, defaultVariant: 'a', targeting: { var: 'v' } }, trafficPercentage: 0 },
  ];
  for (const state of states) {
    const plain = setOf([single('x', state, { bucketing: 'fractional', cohorts: ['vip'] })], { audiences: [aud] }).document.flags.x;
    const running = setOf([single('x', { ...state, experiment: 'exp' }, { bucketing: 'fractional', cohorts: ['vip'] })], {
      audiences: [aud],
    }).document.flags.x;
    t.same(running, { ...plain, metadata: { ...plain.metadata, experimentKey: 'exp' } }, JSON.stringify(state));
  }
});

t.test("group flags: the environment's effective state, cohorts inherited or overridden", async (t) => {
  const env = (state: Partial<EnvState>): EnvState => ({ enabled: true, trafficPercentage: 0, audienceId: null, cohorts: null, ...state });
  const group: GroupFlag = {
    id: 'flg_g',
    projectId: kProject,
    name: 'g',
    description: '',
    tags: [],
    cohorts: ['vip'],
    createdAt: 0,
    updatedAt: 0,
    kind: 'groupflag',
    environments: { prod: env({}), dev: env({ cohorts: ['dev-team'] }) },
  };
  const prod = setOf([group], { environment: 'prod' });
  t.equal(prod.ask('g', { cohort: 'vip' }).value, true, 'the flag-wide list');
  const dev = setOf([group], { environment: 'dev' });
  t.equal(dev.ask('g', { cohort: 'vip' }).value, false, "the environment's own list replaces it");
  t.equal(dev.ask('g', { cohort: 'dev-team' }).value, true);
  const staging = setOf([group], { environment: 'staging' });
  t.match(staging.ask('g', { cohort: 'vip' }), { value: false, variant: 'off' }, 'an environment never set: disabled');
});

// Sized to take a few seconds on a loaded 2-core machine; bench/flag-set.bench.ts asks a million.
const kProjects = Number(process.env.FLAG_SET_DIFF_PROJECTS ?? 200);
const kContextsPerProject = Number(process.env.FLAG_SET_DIFF_CONTEXTS ?? 250);

t.test(`generated projects: flagd-core on the flag set answers as OFREP (${kProjects * kContextsPerProject} contexts)`, async (t) => {
  const tally = newTally();
  const started = process.hrtime.bigint();
  fc.assert(
    fc.property(projectArb, (project) => checkProject(project, kContextsPerProject, tally)),
    { numRuns: kProjects },
  );
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  t.comment(
    `${tally.projects} projects, ${tally.flags} flags (${tally.omitted} left out), ${tally.contexts} contexts, ` +
      `${tally.evaluations} evaluations (${tally.keyMissing} without a key on a split) in ${ms.toFixed(0)} ms`,
  );
  t.comment(`OFREP answers: ${JSON.stringify(tally.byReason)}; reasons flagd gives otherwise: ${JSON.stringify(tally.reasonPairs)}`);
  t.comment(`${tally.experimentAnswers} answers of states with an experiment, ${tally.exposures} of them exposures (flagd's twins)`);
  t.equal(tally.contexts, kProjects * kContextsPerProject);
  t.ok(tally.omitted > 0 && tally.omitted < tally.flags, 'some flags left out, most served');
  t.ok(tally.keyMissing > 0, 'contexts without a key reached a split');
  t.ok(tally.exposures > 0 && tally.exposures < tally.experimentAnswers, 'exposures marked, and answers of experiments that are none');
  for (const kind of ['TARGETING_MATCH', 'DEFAULT', 'STATIC', 'DISABLED', 'SPLIT', 'GENERAL']) t.ok((tally.byReason[kind] ?? 0) > 0, kind);
});
