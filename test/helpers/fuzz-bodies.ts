// Generated request bodies for fuzzing the Management API's flag creates and patches
// (test/reliability/fuzz-management.test.ts): JSON written out as text, so keys may repeat and "__proto__"
// is an ordinary own key; wrong types, numbers and strings JSON.stringify never writes, deep nesting, raw
// bytes, bodies around the 1 MiB limit, and near-valid ones, so that a good share of requests write.
import fc from 'fast-check';

/** Names of Object.prototype's members (and their kin), as keys, ids and environment names. */
export const kProtoWords = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__'];
/** Environment names: the data set's own, Object.prototype's members, a wrong case and an empty one. */
export const kEnvNames = ['staging', 'production', 'constructor', 'toString', 'valueOf', '__proto__', 'Staging', ''];
/** Percent-escapes that decode to nothing valid (truncated, not hex, overlong, a lone surrogate, NUL). */
export const kBadEscapes = [
  '%',
  '%%',
  '%z',
  '%zz',
  '%G1',
  '%C3',
  '%C3%28',
  '%ED%A0%80',
  '%F4%90%80%80',
  '%C0%AF',
  '%E2%82',
  '%00',
  '%FF',
  '+%2B+',
];

/** The code points fast-check's `unit: 'binary'` leaves out: the surrogate halves, U+D800 to U+DFFF. */
const kSurrogates = 0x800;

/**
 * fast-check's `unit: 'binary'` (any code point but a surrogate half), without the reverse map of all
 * 1,112,064 code points that fast-check builds for it the first time it tokenises its slices of
 * dangerous strings (1.1 CPU s in every file that imports this one): the same index drawn and the same
 * character made of it, so the same strings, slices and shrinks for a seed; the way back from a
 * character to its index is computed instead of looked up.
 */
const anyCodePoint = fc.nat({ max: 0x10ffff - kSurrogates }).map(
  (i) => String.fromCodePoint(i < 0xd800 ? i : i + kSurrogates),
  (value) => {
    const cp = typeof value === 'string' ? value.codePointAt(0) : undefined;
    if (cp === undefined || (cp >= 0xd800 && cp <= 0xdfff) || String.fromCodePoint(cp) !== value) throw new Error('not one code point');
    return cp < 0xd800 ? cp : cp - kSurrogates;
  },
);

/** Any string of at most `maxLength` Unicode code points, U+0000 and the astral planes included: fast-check's 'binary' strings. */
export const binaryString = (maxLength: number) => fc.string({ unit: anyCodePoint, maxLength });

export const unicode = binaryString(24);

/**
 * Eight hex digits that keep a generated name apart from the others, drawn by fast-check: a run is replayed
 * whole from its seed (a random id here made each replay send other names).
 */
const uniqueSuffix = fc.integer({ min: 0, max: 0xffff_ffff }).map((n) => n.toString(16).padStart(8, '0'));

/** What the bodies pick names from: the data set's flag names and audience ids. */
export interface BodyData {
  flagNames: readonly string[];
  audienceIds: readonly string[];
}

/** A request body as the text sent. */
export function flagBodies({ flagNames, audienceIds }: BodyData): fc.Arbitrary<string> {
  // JSON text for one value: anything JSON can carry, plus number and string forms JSON.stringify never writes.
  const valueText = fc.oneof(
    { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v) ?? 'null') },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '1e400',
        '-1e400',
        '1e308',
        '-0',
        '0.0',
        '100.0',
        '50.5',
        '1E2',
        '123456789012345678901234567890',
        '-1',
        '101',
        '9007199254740993',
        '0x10',
        'NaN',
        'Infinity',
        '"50"',
        '"true"',
        '[]',
        '{}',
        '"\\ud800"',
        '"\\udc00x"',
        '"\\u0000"',
        '""',
        '"   "',
        'null',
        'true',
      ),
    },
  );
  const stateValue = (key: string) => {
    switch (key) {
      case 'enabled':
        return fc.oneof({ weight: 3, arbitrary: fc.boolean().map(String) }, { weight: 1, arbitrary: valueText });
      case 'trafficPercentage':
        return fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 0, max: 100 }).map(String) }, { weight: 1, arbitrary: valueText });
      case 'cohorts':
        return fc.oneof(
          fc.array(unicode, { maxLength: 6 }).map((a) => JSON.stringify(a)),
          valueText,
        );
      case 'audienceId':
        return fc.oneof(
          fc.constantFrom(...audienceIds, 'aud_nope').map((a) => JSON.stringify(a)),
          fc.constant('null'),
          valueText,
        );
      default:
        return valueText;
    }
  };
  // An object written as text, so keys may repeat and "__proto__" is an ordinary own key.
  const objectText = (keys: fc.Arbitrary<string>, maxKeys: number) =>
    fc
      .array(
        keys.chain((k) => stateValue(k).map((v) => `${JSON.stringify(k)}:${v}`)),
        { maxLength: maxKeys },
      )
      .map((parts) => `{${parts.join(',')}}`);
  const stateKey = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom('enabled', 'trafficPercentage', 'cohorts', 'audienceId') },
    { weight: 1, arbitrary: fc.constantFrom(...kProtoWords, 'Enabled', 'enabled ', 'name', 'environments', '') },
    { weight: 1, arbitrary: unicode },
  );
  const patchBody = objectText(stateKey, 5);
  const nameText = fc
    .oneof(
      fc.tuple(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }), uniqueSuffix).map(([s, suffix]) => `${s}-${suffix}`),
      fc.constantFrom('', ' ', '\t', 'x'.repeat(200), 'x'.repeat(201), ...flagNames),
      unicode,
    )
    .map((s) => JSON.stringify(s));
  const environmentsText = fc
    .array(fc.tuple(fc.oneof(fc.constantFrom(...kEnvNames), unicode), fc.oneof(patchBody, valueText)), { maxLength: 3 })
    .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`);
  const createKey = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constantFrom('name', 'description', 'tags', 'environments', 'enabled', 'trafficPercentage', 'cohorts', 'audienceId'),
    },
    { weight: 1, arbitrary: fc.constantFrom(...kProtoWords) },
  );
  const createBody = fc
    .array(
      createKey.chain((k) => {
        const v =
          k === 'name'
            ? nameText
            : k === 'environments'
              ? fc.oneof(environmentsText, valueText)
              : k === 'tags'
                ? fc.oneof(
                    fc.array(unicode, { maxLength: 60 }).map((a) => JSON.stringify(a)),
                    valueText,
                  )
                : k === 'description'
                  ? fc.oneof(
                      unicode.map((s) => JSON.stringify(s)),
                      fc.constant(JSON.stringify('d'.repeat(2001))),
                      valueText,
                    )
                  : stateValue(k);
        return v.map((text) => `${JSON.stringify(k)}:${text}`);
      }),
      { maxLength: 6 },
    )
    .map((parts) => `{${parts.join(',')}}`);
  const deepNesting = fc.tuple(fc.integer({ min: 1, max: 200_000 }), fc.constantFrom('[', '{"a":', '{"cohorts":')).map(([depth, open]) => {
    const close = open === '[' ? ']' : '}';
    const inner = `${open.repeat(depth)}1${close.repeat(depth)}`;
    return open === '[' ? `{"cohorts":${inner}}` : inner;
  });
  // Near-valid bodies, so a good share of requests are accepted and write (and the 4xx around them
  // are checked against a store that keeps changing).
  const validPatch = fc
    .record(
      {
        enabled: fc.boolean(),
        trafficPercentage: fc.integer({ min: 0, max: 100 }),
        cohorts: fc.array(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }), { maxLength: 4 }),
      },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(Object.keys(v).length === 0 ? { enabled: true } : v));
  const validCreate = fc
    .record(
      {
        name: fc.tuple(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }), uniqueSuffix).map(([n, suffix]) => `${n}-${suffix}`),
        description: fc.string({ maxLength: 40 }),
        tags: fc.array(fc.string({ minLength: 1, maxLength: 10 }), { maxLength: 3 }),
      },
      { requiredKeys: ['name'] },
    )
    .map((v) => JSON.stringify(v));
  const body = fc.oneof(
    { weight: 3, arbitrary: validPatch },
    { weight: 2, arbitrary: validCreate },
    { weight: 5, arbitrary: patchBody },
    { weight: 4, arbitrary: createBody },
    { weight: 2, arbitrary: fc.json({ maxDepth: 4 }) },
    { weight: 1, arbitrary: valueText },
    { weight: 1, arbitrary: deepNesting },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        ' ',
        '\n',
        '{',
        '}',
        '{"enabled":true',
        '\ufeff{"enabled":true}',
        '{"enabled":true}garbage',
        '{"enabled":true}{"enabled":false}',
        'null',
      ),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString('latin1')) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(1024 * 1024 - 20, 1024 * 1024 + 1, 2 * 1024 * 1024)
        .map((n) => `{"cohorts":["${'c'.repeat(Math.max(0, n - 16))}"]}`),
    },
  );
  return body;
}
