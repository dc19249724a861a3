// Evaluation outcomes, one per line of flagd-core's resolution (evaluate.ts's table), each checked
// against flagd-core too; and the answers are the flag's prebuilt ones (nothing allocated per evaluation).
import t from 'tap';
import { compileFlagSet } from '../../src/targeting/compiled-flag.js';
import type { FlagValueType } from '../../src/targeting/definition.js';
import { evaluateFlag, evaluateInSet } from '../../src/targeting/evaluate.js';
import { parseFlagDefinition } from '../../src/targeting/parse.js';
import { bothAnswers } from './flagd-core-oracle.js';

const kVariants = { on: true, off: false };

function doc(flag: Record<string, unknown>) {
  return {
    metadata: { flagSetId: 'set', version: '1' },
    flags: { f: { state: 'ENABLED', variants: kVariants, ...flag, metadata: { version: '2' } } },
  };
}

const cases: [
  string,
  Record<string, unknown>,
  Record<string, unknown>,
  FlagValueType,
  Partial<{ value: unknown; variant: string; reason: string; errorCode: string }>,
][] = [
  ['disabled', { state: 'DISABLED', defaultVariant: 'on' }, {}, 'boolean', { reason: 'DISABLED', value: undefined }],
  ['no rule', { defaultVariant: 'on' }, {}, 'boolean', { reason: 'STATIC', variant: 'on', value: true }],
  ['empty rule', { defaultVariant: 'on', targeting: {} }, {}, 'boolean', { reason: 'STATIC', variant: 'on' }],
  ['no rule, no default variant', {}, {}, 'boolean', { reason: 'DEFAULT', value: undefined, variant: undefined }],
  [
    'rule gives null',
    { defaultVariant: 'off', targeting: { if: [{ var: 'x' }, 'on', null] } },
    {},
    'boolean',
    { reason: 'DEFAULT', variant: 'off' },
  ],
  [
    'rule gives null, no default variant',
    { defaultVariant: null, targeting: { var: 'x' } },
    {},
    'boolean',
    { reason: 'DEFAULT', value: undefined },
  ],
  [
    'rule names a variant',
    { defaultVariant: 'off', targeting: { var: 'x' } },
    { x: 'on' },
    'boolean',
    { reason: 'TARGETING_MATCH', variant: 'on' },
  ],
  [
    'rule gives a boolean: its text names the variant',
    { targeting: { '==': [1, { var: 'x' }] } },
    { x: 1 },
    'boolean',
    { reason: 'TARGETING_MATCH', variant: 'true' },
  ],
  [
    'rule names no variant',
    { defaultVariant: 'off', targeting: { var: 'x' } },
    { x: 'maybe' },
    'boolean',
    { reason: 'ERROR', errorCode: 'GENERAL' },
  ],
  [
    'rule throws',
    { defaultVariant: 'off', targeting: { '/': [1, { var: 'x' }] } },
    { x: 0 },
    'boolean',
    { reason: 'ERROR', errorCode: 'GENERAL' },
  ],
  ['another type asked', { defaultVariant: 'off' }, {}, 'string', { reason: 'ERROR', errorCode: 'TYPE_MISMATCH' }],
  ['another type asked, disabled', { state: 'DISABLED', defaultVariant: 'off' }, {}, 'string', { reason: 'DISABLED' }],
];

t.test('each outcome, as flagd-core gives it (flag metadata over the set metadata)', async (t) => {
  for (const [name, flag, context, type, expected] of cases) {
    const document = name.includes('boolean') ? doc({ ...flag, variants: { true: 'yes', false: 'no' } }) : doc(flag);
    const askedType = name.includes('boolean') ? 'string' : type;
    const { ours, theirs } = bothAnswers(document, 'f', askedType, context);
    t.match(ours, expected, name);
    t.same(ours.flagMetadata, { flagSetId: 'set', version: '2' }, `${name}: metadata`);
    t.same(ours, theirs, `${name}: flagd-core agrees`);
  }
});

t.test('a flag not in the set: FLAG_NOT_FOUND with the set metadata', async (t) => {
  const { ours, theirs } = bothAnswers(doc({ defaultVariant: 'on' }), 'g', 'boolean', {});
  t.match(ours, { reason: 'ERROR', errorCode: 'FLAG_NOT_FOUND', flagMetadata: { flagSetId: 'set', version: '1' } });
  t.same(ours, theirs);
});

t.test('answers are prebuilt: the same object for the same outcome; the context is not kept', async (t) => {
  const parsed = parseFlagDefinition(
    doc({ defaultVariant: 'off', targeting: { if: [{ in: [{ var: 'country' }, ['NL']] }, 'on', 'off'] } }),
  );
  if (!parsed.ok) throw new Error('parse');
  const flag = compileFlagSet(parsed.definition).flags.get('f')!;
  const a = evaluateFlag(flag, { country: 'NL' }, 0);
  t.equal(evaluateFlag(flag, { country: 'NL' }, 1), a);
  t.equal(a, flag.answers.matches.get('on'));
  t.ok(Object.isFrozen(a));
  t.equal(evaluateInSet(compileFlagSet(parsed.definition), 'f', 'boolean', { country: 'DE' }, 0).variant, 'off');
});

t.test(
  'a rule whose result has no name (a list holding an object without a prototype) answers the rule failed, never throws',
  async (t) => {
    const parsed = parseFlagDefinition(doc({ defaultVariant: 'off', targeting: { merge: [{ merge: [{ var: 'version' }] }, ''] } }));
    if (!parsed.ok) throw new Error('parse');
    const flag = compileFlagSet(parsed.definition).flags.get('f')!;
    // An application's own context, as the in-process provider passes it: nothing from HTTP is built so.
    const answer = evaluateFlag(flag, { version: Object.create(null) }, 0);
    t.equal(answer, flag.answers.ruleFailed);
    t.match(answer, { reason: 'ERROR', errorCode: 'GENERAL' });
  },
);
