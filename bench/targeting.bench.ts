// Micro-benchmark of flagd targeting, in one process: ns per evaluation of one five-rule targeting tree
// (sem_ver, in, starts_with, ends_with + and, fractional by an attribute) by
//   flagd-core         FlagdCore.resolveStringEvaluation, and FeatureFlag.evaluate (rule + variant only)
//   json-logic-engine  the engine flagd-core pins, the rule built once (engine.build), the same operators
//                      registered as functions (ours), each context with $flagd made once beforehand:
//                      the engine alone, without the per-evaluation context copy flagd-core makes
//   ours               evaluateFlag (src/targeting), and the compiled rule alone
// and, as the baseline, a boolean flag of the Evaluation API (src/evaluation/engine evaluateState: an audience rule
// and a 50% split). 1,024 contexts, cycled, reach every branch. Each variant runs once per round, in
// turn, for 7 rounds (a change in the machine's load falls on all); the median round is reported.
// Run: npm run build && node dist/bench/targeting.bench.js
import { FeatureFlag, FlagdCore } from '@openfeature/flagd-core';
import { LogicEngine } from 'json-logic-engine';
import { compileState, evaluateState, type EvalContext } from '../src/evaluation/engine/evaluate.js';
import { compileFlagSet } from '../src/targeting/compiled-flag.js';
import { evaluateFlag } from '../src/targeting/evaluate.js';
import { fractional } from '../src/targeting/fractional.js';
import { parseFlagDefinition } from '../src/targeting/parse.js';
import { newScope } from '../src/targeting/scope.js';
import { semVer } from '../src/targeting/sem-ver.js';
import { resetWorkBudget } from '../src/targeting/work-budget.js';
import { fiveRuleContexts, kFiveRuleTargeting, kFiveRuleVariants } from './five-rule-flag.js';

const kRule = kFiveRuleTargeting;
const kVariants = kFiveRuleVariants;
const kDocument = { flags: { checkout: { state: 'ENABLED', variants: kVariants, defaultVariant: 'control', targeting: kRule } } };

const contexts = fiveRuleContexts(1024);

const kQuiet = { error() {}, warn() {}, info() {}, debug() {} };
let sink = 0;

// flagd-core, whole and its flag alone.
const core = new FlagdCore(undefined, kQuiet);
core.setConfigurations(JSON.stringify(kDocument));
const featureFlag = new FeatureFlag('checkout', kDocument.flags.checkout as never, kQuiet);

// json-logic-engine with the same operators as functions (args arrive evaluated, as flagd-core's do).
const engine = new LogicEngine();
engine.addMethod('sem_ver', (args: unknown[]) => semVer(args));
engine.addMethod('starts_with', ([a, b]: unknown[]) => (typeof a === 'string' && typeof b === 'string' ? a.startsWith(b) : null));
engine.addMethod('ends_with', ([a, b]: unknown[]) => (typeof a === 'string' && typeof b === 'string' ? a.endsWith(b) : null));
// Ours charges its key to the evaluation's work budget (src/targeting/work-budget.ts), set here as
// evaluateFlag sets it: the engine has no evaluation of ours around it.
engine.addMethod('fractional', (args: unknown[], context: Record<string, { flagKey: string }>) => {
  resetWorkBudget();
  return fractional(args, context.$flagd!.flagKey, (context as Record<string, unknown>).targetingKey);
});
const built = engine.build(kRule) as (context: unknown) => unknown;

// Ours.
const parsed = parseFlagDefinition(kDocument);
if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
const flag = compileFlagSet(parsed.definition).flags.get('checkout')!;
const rule = flag.rule!;
const scope = newScope();
scope.flagd.flagKey = 'checkout';

// Baseline: the Evaluation API's boolean flag with an audience and a 50% split.
const state = compileState(
  'flg_cHQLsDzwqQaBEiBh',
  { enabled: true, trafficPercentage: 50, audienceId: 'aud', cohorts: [] },
  {
    id: 'aud',
    projectId: 'p',
    name: 'EU',
    rules: [{ attribute: 'country', values: ['NL', 'DE', 'BE', 'FR', 'LU', 'US', 'JP', 'BR'] }],
    updatedAt: 0,
  },
  undefined,
);
const evalContexts: EvalContext[] = contexts.map((c) => ({
  cohort: null,
  targetingKey: c.targetingKey,
  attribute: (name: string) => (name === 'country' ? c.country : undefined),
}));

const contextsWithFlagd = contexts.map((c) => ({ ...c, $flagd: { flagKey: 'checkout', timestamp: 1 } }));

// Every variant must agree before it is timed.
for (let i = 0; i < contexts.length; i++) {
  const c = contexts[i]!;
  const expected = core.resolveStringEvaluation('checkout', 'x', c).variant;
  const ts = Math.floor(Date.now() / 1000);
  const viaEngine = built({ ...c, $flagd: { flagKey: 'checkout', timestamp: ts } });
  if (evaluateFlag(flag, c, ts).variant !== expected || viaEngine !== expected) throw new Error(`variants differ for ${JSON.stringify(c)}`);
}

const kIterations = 200_000;
const variants: [string, (i: number) => void][] = [
  [
    'flagd-core: FlagdCore.resolveStringEvaluation',
    (i) => {
      sink += core.resolveStringEvaluation('checkout', 'x', contexts[i & 1023]!).value.length;
    },
  ],
  [
    'flagd-core: FeatureFlag.evaluate (rule + variant)',
    (i) => {
      sink += (featureFlag.evaluate(contexts[i & 1023]!, kQuiet).variant ?? '').length;
    },
  ],
  [
    'json-logic-engine: built rule alone (context prepared)',
    (i) => {
      sink += (built(contextsWithFlagd[i & 1023]!) as string).length;
    },
  ],
  [
    'ours: evaluateFlag (rule + variant + answer)',
    (i) => {
      sink += (evaluateFlag(flag, contexts[i & 1023]!, 1).variant ?? '').length;
    },
  ],
  [
    'ours: compiled rule alone',
    (i) => {
      scope.data = contexts[i & 1023]!;
      // Each evaluation has its own work budget (src/targeting/work-budget.ts): set as evaluateFlag does.
      resetWorkBudget();
      sink += (rule(scope) as string).length;
    },
  ],
  [
    'baseline: src/evaluation/engine evaluateState (audience + 50%)',
    (i) => {
      sink += evaluateState(state, evalContexts[i & 1023]!) ? 1 : 0;
    },
  ],
];

const nsPerOp = new Map<string, number[]>(variants.map(([name]) => [name, []]));
for (const [, fn] of variants) for (let i = 0; i < 20_000; i++) fn(i);
for (let round = 0; round < 7; round++) {
  for (const [name, fn] of variants) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < kIterations; i++) fn(i);
    nsPerOp.get(name)!.push(Number(process.hrtime.bigint() - start) / kIterations);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const ours = median(nsPerOp.get('ours: evaluateFlag (rule + variant + answer)')!);
console.log(`| variant | ns/evaluation (median of 7) | range | ÷ ours: evaluateFlag |`);
console.log(`|---|---:|---:|---:|`);
for (const [name] of variants) {
  const xs = nsPerOp.get(name)!;
  console.log(
    `| ${name} | ${median(xs).toFixed(0)} | ${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)} | ${(median(xs) / ours).toFixed(2)} |`,
  );
}
if (sink === 42) console.log('');
