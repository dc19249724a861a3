// fast-check generators of flagd flag definitions and evaluation contexts for the differential tests.
// Rules are schema-valid (flagd's targeting.json: known operators, their arities) and built from every
// operator we support, nested; values are chosen to hit the coercion corners (null, "", "0", numbers in
// strings, arrays, objects, versions with and without "v"). Strings are ASCII: see fractional.test.ts
// for non-ASCII bucketing keys, where flagd-core and flagd differ.
import fc from 'fast-check';
import type { FlagValueType } from '../../src/targeting/definition.js';

const kStrings = ['', '0', '1', '10', '2.5', 'a', 'abc', 'NL', 'DE', 'gold', 'free', 'true', 'null', 'a@faas.com', 'b@example.org'];
const kVersions = [
  '1.2.3',
  'v1.2.3',
  'V2.0.0',
  '2.0.0-beta.1',
  '2.0.0-beta.2',
  '2.0.0-alpha',
  '1.2',
  '1',
  '0.9.9',
  '10.0.0+build.5',
  '1.2.3.4',
  'x',
];
const kNumbers = [0, 1, -1, 2, 2.5, 10, 100, 1.5e3];
const kNames = [
  'email',
  'version',
  'tier',
  'age',
  'country',
  'targetingKey',
  'user',
  'user.plan',
  'user.tags',
  'user.tags.0',
  'user.id',
  'list',
  'n',
  'absent',
  'absent.deep',
  '$flagd.flagKey',
  '$flagd.timestamp',
  '$flagd',
];

export const kVariantSets: Readonly<Record<FlagValueType, readonly Record<string, unknown>[]>> = {
  boolean: [
    { on: true, off: false },
    { true: true, false: false },
  ],
  string: [{ red: '#f00', blue: '#00f', green: '#0f0' }],
  number: [{ one: 1, two: 2, '10': 10 }],
  object: [{ small: { rows: 10 }, large: { rows: 100, tags: ['x'] } }],
};

/**
 * Short free text, without "$": flagd-core pastes each evaluator into the document with
 * String#replaceAll, which reads "$&", "$'" and "$$" in it as replacement patterns and breaks the
 * document (we resolve references as values, so any text is fine here).
 */
const text = (maxLength: number) => fc.string({ maxLength, unit: 'grapheme-ascii' }).map((s) => s.replaceAll('$', 'S'));

const primitive = fc.oneof(
  fc.constantFrom(...kStrings),
  fc.constantFrom(...kVersions),
  fc.constantFrom(...kNumbers),
  fc.boolean(),
  fc.constant(null),
  text(4),
);

/** A context value: primitives, small arrays, nested objects. */
const contextValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: primitive },
  { weight: 1, arbitrary: fc.array(primitive, { maxLength: 3 }) },
  {
    weight: 1,
    arbitrary: fc.record({ plan: primitive, tags: fc.array(primitive, { maxLength: 2 }), id: primitive }, { requiredKeys: [] }),
  },
);

export const contextArb: fc.Arbitrary<Record<string, unknown>> = fc.record(
  {
    email: fc.oneof(fc.constantFrom('a@faas.com', 'someone@example.org', 'x@FAAS.com'), contextValue),
    version: fc.oneof(fc.constantFrom(...kVersions), contextValue),
    tier: contextValue,
    age: fc.oneof(fc.integer({ min: -5, max: 120 }), contextValue),
    country: fc.oneof(fc.constantFrom('NL', 'DE', 'US'), contextValue),
    targetingKey: fc.oneof(text(12), fc.uuid(), contextValue),
    user: fc.oneof(
      fc.record({ plan: primitive, tags: fc.array(primitive, { maxLength: 3 }), id: primitive }, { requiredKeys: [] }),
      contextValue,
    ),
    list: fc.oneof(fc.array(primitive, { maxLength: 4 }), contextValue),
    n: fc.oneof(fc.integer({ min: -3, max: 3 }), contextValue),
    $flagd: contextValue,
  },
  { requiredKeys: [] },
);

function varArb(names: readonly string[]): fc.Arbitrary<unknown> {
  const name = fc.constantFrom(...names);
  return fc.oneof(
    name.map((n) => ({ var: n })),
    name.map((n) => ({ var: [n] })),
    fc.tuple(name, primitive).map(([n, d]) => ({ var: [n, d] })),
  );
}

/**
 * json-logic-engine 5.0.7 compiles `and`, `or`, `missing` and `missing_some` to unparenthesised
 * conditional expressions, so as an operand of `cat` (or `and` as the list of `in`) flagd-core's
 * answer is an artefact of JavaScript's operator precedence, not JsonLogic's (compile-rule.test.ts
 * shows one). We answer as JsonLogic (and flagd's own evaluator) does; here such an operand is wrapped
 * in an `if`, which the engine does parenthesise, so that both evaluators are asked the same question.
 */
function parenthesised(rule: unknown): unknown {
  if (rule === null || typeof rule !== 'object' || Array.isArray(rule)) return rule;
  const op = Object.keys(rule)[0];
  return op === 'and' || op === 'or' || op === 'missing' || op === 'missing_some' ? { if: [true, rule, null] } : rule;
}

/** Rules whose values are often variant names of `variants` (so that many evaluations match). */
export function ruleArb(variantNames: readonly string[]): fc.Arbitrary<unknown> {
  const variantName = fc.oneof(fc.constantFrom(...variantNames), fc.constantFrom('nope', true, false, 1));
  const leaf = fc.oneof(
    { weight: 3, arbitrary: varArb(kNames) },
    { weight: 2, arbitrary: primitive },
    { weight: 2, arbitrary: variantName },
  );
  const { rule } = fc.letrec<{ rule: unknown; op: unknown }>((tie) => {
    const r = tie('rule');
    const args = (min: number, max: number) => fc.array(r, { minLength: min, maxLength: max });
    const opWith = (op: string, a: fc.Arbitrary<unknown>) => a.map((x) => ({ [op]: x }));
    return {
      rule: fc.oneof({ depthSize: 'small', maxDepth: 4, withCrossShrink: true }, leaf, tie('op')),
      op: fc.oneof(
        fc.constantFrom('==', '===', '!=', '!==', '>', '>=').chain((op) => opWith(op, args(2, 2))),
        fc.constantFrom('<', '<=').chain((op) => opWith(op, args(2, 3))),
        fc.constantFrom('and', 'or').chain((op) => opWith(op, args(1, 3))),
        fc.constantFrom('!', '!!').chain((op) => opWith(op, fc.oneof(args(1, 1), r))),
        opWith('if', fc.array(fc.oneof(r, variantName), { minLength: 1, maxLength: 5 })),
        opWith(
          'in',
          fc.tuple(r, fc.oneof(r.map(parenthesised), fc.array(primitive, { maxLength: 3 }), varArb(['list', 'email', 'user.tags']))),
        ),
        opWith(
          'cat',
          args(1, 3).map((xs) => xs.map(parenthesised)),
        ),
        opWith(
          'substr',
          fc
            .tuple(r, fc.integer({ min: -3, max: 3 }), fc.option(fc.integer({ min: -3, max: 3 }), { nil: undefined }))
            .map(([s, a, b]) => (b === undefined ? [s, a] : [s, a, b])),
        ),
        fc.constantFrom('+', '-').chain((op) => opWith(op, args(1, 3))),
        opWith('*', args(2, 3)),
        fc.constantFrom('/', '%').chain((op) => opWith(op, args(2, 2))),
        fc.constantFrom('max', 'min', 'merge').chain((op) => opWith(op, args(1, 3))),
        opWith('missing', fc.array(fc.constantFrom(...kNames), { maxLength: 2 })),
        opWith('missing_some', fc.tuple(fc.integer({ min: 0, max: 2 }), fc.array(fc.constantFrom(...kNames), { maxLength: 3 }))),
        fc
          .constantFrom('starts_with', 'ends_with')
          .chain((op) =>
            opWith(op, fc.tuple(fc.oneof(r, varArb(['email', 'country'])), fc.oneof(r, fc.constantFrom('@faas.com', 'a', '')))),
          ),
        opWith(
          'sem_ver',
          fc.tuple(
            fc.oneof(varArb(['version', 'user.plan']), fc.constantFrom(...kVersions.slice(0, 10))),
            fc.constantFrom('=', '!=', '<', '<=', '>', '>=', '^', '~'),
            fc.oneof(varArb(['version']), fc.constantFrom(...kVersions.slice(0, 10))),
          ),
        ),
        opWith('fractional', fractionalArgs(variantName, r)),
      ),
    };
  });
  return rule;
}

function fractionalArgs(variantName: fc.Arbitrary<unknown>, rule: fc.Arbitrary<unknown>): fc.Arbitrary<unknown[]> {
  const bucket = fc.oneof(
    variantName.map((v) => [v]),
    fc.tuple(variantName, fc.integer({ min: 0, max: 100 })),
    fc.tuple(variantName, fc.constantFrom({ var: 'n' }, { '-': [{ var: '$flagd.timestamp' }, 1] })),
  );
  const bucketBy = fc.oneof(
    fc.constant({ cat: [{ var: '$flagd.flagKey' }, { var: 'email' }] }),
    fc.constant({ var: 'email' }),
    fc.constant({ var: 'targetingKey' }),
    rule,
  );
  return fc
    .tuple(fc.option(bucketBy, { nil: undefined }), fc.array(bucket, { minLength: 1, maxLength: 4 }))
    .map(([by, buckets]) => (by === undefined ? buckets : [by, ...buckets]));
}

/** A rule where the schema wants an object: a primitive or array result is wrapped as `{"if": [true, x]}`. */
function asRule(x: unknown): unknown {
  return x !== null && typeof x === 'object' && !Array.isArray(x) ? x : { if: [true, x] };
}

export interface GeneratedCase {
  readonly document: Record<string, unknown>;
  readonly key: string;
  readonly type: FlagValueType;
  readonly contexts: Record<string, unknown>[];
  /** The type each context asks for: mostly the flag's, sometimes another (TYPE_MISMATCH). */
  readonly askedTypes: FlagValueType[];
}

const metadataArb = fc.dictionary(fc.constantFrom('team', 'version', 'flagSetId', 'owner'), fc.oneof(text(5), fc.integer(), fc.boolean()), {
  maxKeys: 2,
});

export const caseArb: fc.Arbitrary<GeneratedCase> = fc
  .record({
    type: fc.constantFrom<FlagValueType>('boolean', 'string', 'number', 'object'),
    key: fc.constantFrom('f', 'new-checkout', 'a.b'),
    state: fc.constantFrom('ENABLED', 'ENABLED', 'ENABLED', 'DISABLED'),
    shape: fc.constantFrom('rule', 'rule', 'rule', 'if', 'fractional', 'ref', 'empty', 'none'),
    defaultKind: fc.constantFrom('first', 'first', 'last', 'null', 'absent'),
    flagMetadata: fc.option(metadataArb, { nil: undefined }),
    setMetadata: fc.option(metadataArb, { nil: undefined }),
    seed: fc.integer(),
  })
  .chain((c) => {
    const variants = kVariantSets[c.type][0]!;
    const names = Object.keys(variants);
    const rule = ruleArb(names);
    const targeting: fc.Arbitrary<unknown> =
      c.shape === 'rule'
        ? rule
        : c.shape === 'if'
          ? fc.tuple(rule, fc.constantFrom(...names), fc.constantFrom(...names)).map(([cond, a, b]) => ({ if: [cond, a, b] }))
          : c.shape === 'fractional'
            ? fractionalArgs(fc.constantFrom(...names), rule).map((args) => ({ fractional: args }))
            : c.shape === 'ref'
              ? fc.constant({ if: [{ $ref: 'shared' }, names[0], { $ref: 'pick' }] })
              : fc.constant(c.shape === 'empty' ? {} : undefined);
    return fc
      .record({
        targeting,
        shared: rule,
        pick: rule,
        contexts: fc.array(contextArb, { minLength: 1, maxLength: 4 }),
        askOther: fc.array(
          fc.constantFrom<FlagValueType | null>(null, null, null, null, null, null, 'boolean', 'string', 'number', 'object'),
          { minLength: 4, maxLength: 4 },
        ),
      })
      .map(({ targeting, shared, pick, contexts, askOther }) => {
        const flag: Record<string, unknown> = { state: c.state, variants };
        if (c.defaultKind === 'first') flag.defaultVariant = names[0];
        else if (c.defaultKind === 'last') flag.defaultVariant = names[names.length - 1];
        else if (c.defaultKind === 'null') flag.defaultVariant = null;
        if (targeting !== undefined) flag.targeting = asRule(targeting);
        if (c.flagMetadata !== undefined) flag.metadata = c.flagMetadata;
        const document: Record<string, unknown> = { flags: { [c.key]: flag } };
        if (c.shape === 'ref') document.$evaluators = { shared: asRule(shared), pick: asRule(pick) };
        if (c.setMetadata !== undefined) document.metadata = c.setMetadata;
        return { document, key: c.key, type: c.type, contexts, askedTypes: contexts.map((_, i) => askOther[i] ?? c.type) };
      });
  });
