// In-process: the rules of Unleash's front-end API's answers (src/unleash/frontend-answer.ts) and of
// reading Unleash's context (src/unleash/context.ts): the toggle for each kind of answer, payloads by
// type, and the context's mapping from a query or a body onto Flagwire's targeting key, cohort and
// attributes.
import t from 'tap';
import { compileVariants } from '../../src/evaluation/engine/variants.js';
import { kUnleashFields, UnleashContext } from '../../src/unleash/context.js';
import { payloadOf, toggleOf } from '../../src/unleash/frontend-answer.js';
import { random } from '../helpers/seeded-random.js';

t.test('payloads: a string as it is, a number by its digits, an object or a boolean as JSON', async (t) => {
  t.same(payloadOf('#f00'), { type: 'string', value: '#f00' });
  t.same(payloadOf(''), { type: 'string', value: '' });
  t.same(payloadOf(1000.5), { type: 'number', value: '1000.5' });
  t.same(payloadOf(-3), { type: 'number', value: '-3' });
  t.same(payloadOf({ cols: 2, tags: ['a'] }), { type: 'json', value: '{"cols":2,"tags":["a"]}' });
  t.same(payloadOf(true), { type: 'json', value: 'true' });
  t.same(payloadOf(false), { type: 'json', value: 'false' });
});

t.test("toggles: a boolean flag has Unleash's disabled variant; a typed one its variant where it has a value", async (t) => {
  t.same(toggleOf('banner', true, null), {
    name: 'banner',
    enabled: true,
    variant: { name: 'disabled', enabled: false },
    impressionData: false,
  });
  t.same(toggleOf('banner', false, null).variant, { name: 'disabled', enabled: false });
  const variants = compileVariants({ variants: { red: '#f00', green: '#0f0' }, defaultVariant: 'red', targeting: {} }, 'colour');
  t.same(toggleOf('colour', true, variants.flag.answers.static), {
    name: 'colour',
    enabled: true,
    variant: { name: 'red', enabled: true, payload: { type: 'string', value: '#f00' } },
    impressionData: false,
  });
  t.same(
    toggleOf('colour', false, variants.split).variant,
    { name: 'red', enabled: true, payload: { type: 'string', value: '#f00' } },
    "out of the split: the default variant, as the Evaluation API's value",
  );
  t.same(toggleOf('colour', false, variants.flag.answers.disabled).variant, { name: 'disabled', enabled: false }, 'disabled: no value');
  const bare = compileVariants({ variants: { x: 'x' }, defaultVariant: null, targeting: {} }, 'bare');
  t.same(toggleOf('bare', true, bare.flag.answers.static).variant, { name: 'disabled', enabled: false }, 'no default variant: no value');
});

t.test('a query as unleash-proxy-client writes it: userId the key, properties[] the attributes, cohort the cohort', async (t) => {
  const ctx = new UnleashContext();
  t.ok(
    ctx.parseQuery('appName=web&environment=default&userId=u+1&sessionId=77&properties%5Bplan%5D=beta&properties[cohort]=vip&tier=gold'),
  );
  t.equal(ctx.targetingKey, 'u 1', 'form-decoded: "+" is a space');
  t.equal(ctx.cohort, 'vip');
  t.equal(ctx.attribute('plan'), 'beta');
  t.equal(ctx.attribute('tier'), 'gold', "a name that is none of Unleash's fields is a property");
  t.equal(ctx.attribute('cohort'), undefined, 'the cohort is never an attribute');
  t.equal(ctx.attribute('userId'), undefined, "Unleash's own fields are not attributes");
  t.equal(ctx.attribute('environment'), undefined);
  t.equal(ctx.attribute('toString'), undefined, "no Object.prototype's member");
  ctx.env = 'staging';
  t.same(ctx.ruleData(), { targetingKey: 'u 1', cohort: 'vip', env: 'staging', plan: 'beta', tier: 'gold' });

  t.ok(ctx.parseQuery('sessionId=77&properties[plan]=beta&properties[plan]=free&userId='));
  t.equal(ctx.targetingKey, '77', "no userId (an empty one is none): the sessionId, as Unleash's default stickiness");
  t.equal(ctx.attribute('plan'), 'beta', 'the first of a repeated name counts');
  t.equal(ctx.env, null, 'a parse starts over');
  t.ok(ctx.parseQuery(''));
  t.equal(ctx.targetingKey, null);
  t.equal(ctx.cohort, null);
  t.same(ctx.ruleData(), {});
  t.ok(ctx.parseQuery('properties[targetingKey]=x&properties[env]=prod'));
  t.equal(ctx.attribute('targetingKey'), undefined, 'never attributes in Flagwire');
  t.equal(ctx.attribute('env'), undefined);
  t.equal(ctx.targetingKey, null, 'a property is never the targeting key');
  t.same(ctx.ruleData(), {}, "nor what a flagd rule reads as the key or the environment, as on the Evaluation API's query");
  t.ok(ctx.parseBody(JSON.stringify({ context: { targetingKey: 'x', env: 'prod', properties: { plan: 'pro' } } })));
  t.same(ctx.ruleData(), { plan: 'pro' }, 'a body the same');
});

/**
 * The context a query gives, read as the front-end API read it with URLSearchParams: each pair as
 * URLSearchParams yields it; `properties[name]` a property, Unleash's own fields fields, any other name a
 * property; the first of a repeated name counts; an empty value is absent.
 */
function readWithUrlSearchParams(raw: string) {
  const fields = new Map<string, string>();
  const properties = new Map<string, string>();
  const put = (into: Map<string, string>, name: string, value: string) => {
    if (value !== '' && !into.has(name)) into.set(name, value);
  };
  for (const [name, value] of new URLSearchParams(raw)) {
    const property = /^properties\[(.*)\]$/.exec(name);
    if (property !== null) put(properties, property[1]!, value);
    else if (kUnleashFields.has(name)) put(fields, name, value);
    else put(properties, name, value);
  }
  return { fields: [...fields], properties: [...properties] };
}

const ascii = (text: string) => text.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** What a flagd rule reads of such a context (UnleashContext#ruleData): the key, the cohort, then each other property but targetingKey and env. */
function ruleData(targetingKey: string | null, properties: Map<string, string>): Record<string, string> {
  const data: Record<string, string> = {};
  const put = (name: string, value: string | null | undefined) => {
    if (value === null || value === undefined || Object.hasOwn(data, name)) return;
    Object.defineProperty(data, name, { value, enumerable: true, writable: true, configurable: true });
  };
  put('targetingKey', targetingKey);
  put('cohort', properties.get('cohort'));
  for (const [name, value] of properties) if (name !== 'targetingKey' && name !== 'env') put(name, value);
  return data;
}

t.test('a query reads as URLSearchParams reads it, whatever its escapes, "+", "=", "&" and names', async (t) => {
  const next = random(61);
  // Pieces a query is made of: Unleash's fields, property names, separators, escapes valid and not
  // (a lone "%", "%zz", a cut sequence, overlong forms, an encoded surrogate), "+", non-ASCII text, a
  // leading "?", names Object.prototype has, line terminators inside brackets, as sent and escaped. The
  // queries are those written out first (each line terminator a pattern's "." does not match), then
  // random ones.
  const pieces = [
    'userId',
    'sessionId',
    'appName',
    'environment',
    'remoteAddress',
    'currentTime',
    'properties[',
    ']',
    'properties%5B',
    '%5D',
    'plan',
    'cohort',
    'targetingKey',
    'env',
    '__proto__',
    'toString',
    'constructor',
    '=',
    '=',
    '&',
    '&',
    '&&',
    '+',
    '%20',
    '%2B',
    '%25',
    '%',
    '%z',
    '%zz',
    '%4',
    '%C3%A9',
    '%C3',
    '%E2%82%AC',
    '%E2%82',
    '%F0%9F%98%80',
    '%ED%A0%80',
    '%C0%AF',
    '%FF',
    'é',
    '€',
    '😀',
    '?',
    '#',
    ';',
    'a',
    'b',
    '1',
    '\n',
    '\r',
    '\u2028',
    '%0A',
    '[',
    'x',
  ];
  const ctx = new UnleashContext();
  let differ = 0;
  let refused = 0;
  let first = '';
  const written = [
    '?userId=u1&properties[plan]=pro',
    'properties[a\nb]=1&properties[a\rb]=2&properties[a\u2028b]=3&properties[a\u2029b]=4&properties[a\tb]=5',
    'properties%5Ba%0Ab%5D=1&properties%5Ba%0Db%5D=2&properties%5Ba%E2%80%A8b%5D=3&properties[]=4&properties]=5',
  ];
  const kQueries = 20_000;
  for (let i = 0; i < kQueries; i++) {
    let raw = written[i] ?? '';
    const length = i < written.length ? 0 : Math.floor(next() * 24);
    for (let j = 0; j < length; j++) raw += pieces[Math.floor(next() * pieces.length)];
    const expected = readWithUrlSearchParams(raw);
    if (!ctx.parseQuery(raw)) refused++;
    const names = [...new Set([...kUnleashFields, ...expected.properties.map(([name]) => name), 'plan', 'cohort', '__proto__'])];
    const got = {
      fields: [...kUnleashFields].filter((name) => ctx.unleashField(name) !== undefined).map((name) => [name, ctx.unleashField(name)]),
      properties: names
        .filter((name) => !kUnleashFields.has(name) && ctx.unleashValue(name) !== undefined)
        .map((name) => [name, ctx.unleashValue(name)]),
      targetingKey: ctx.targetingKey,
      cohort: ctx.cohort,
      ruleData: Object.entries(ctx.ruleData()),
    };
    const fields = new Map(expected.fields);
    const properties = new Map(expected.properties);
    const want = {
      fields: [...kUnleashFields].filter((name) => fields.has(name)).map((name) => [name, fields.get(name)]),
      properties: names.filter((name) => !kUnleashFields.has(name) && properties.has(name)).map((name) => [name, properties.get(name)]),
      targetingKey: fields.get('userId') ?? fields.get('sessionId') ?? null,
      cohort: properties.get('cohort') ?? null,
      ruleData: Object.entries(ruleData(fields.get('userId') ?? fields.get('sessionId') ?? null, properties)),
    };
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      // Escaped to ASCII: a U+2028 or U+2029 as such would break the report's lines.
      if (differ === 0) first = ascii(`${JSON.stringify(raw)}: ${JSON.stringify(got)} against ${JSON.stringify(want)}`);
      differ++;
    }
  }
  t.equal(refused, 0, 'a query is never refused');
  t.equal(differ, 0, `every query of ${kQueries} read alike${first === '' ? '' : `; the first that is not: ${first}`}`);
});

t.test('a body: {context} or the context itself; numbers and booleans by their text; refusals say the shape', async (t) => {
  const ctx = new UnleashContext();
  const context = { userId: 'u1', appName: 'web', properties: { plan: 'beta', seats: 5, trial: true, nested: { a: 1 }, gone: null } };
  for (const body of [{ context }, context]) {
    t.ok(ctx.parseBody(JSON.stringify(body)));
    t.equal(ctx.targetingKey, 'u1');
    t.equal(ctx.attribute('plan'), 'beta');
    t.equal(ctx.attribute('seats'), '5');
    t.equal(ctx.attribute('trial'), 'true');
    t.equal(ctx.attribute('nested'), undefined, 'an object is no attribute');
    t.equal(ctx.attribute('gone'), undefined);
    t.equal(ctx.attribute('appName'), undefined);
  }
  t.ok(ctx.parseBody(JSON.stringify({ context: { sessionId: 9, tier: 'gold', properties: null } })));
  t.equal(ctx.targetingKey, '9');
  t.equal(ctx.attribute('tier'), 'gold');
  t.ok(ctx.parseBody(''), 'an empty body is an empty context');
  t.equal(ctx.targetingKey, null);
  t.ok(ctx.parseBody('{"__proto__": "x", "properties": {"__proto__": "y"}}'));
  t.equal(ctx.attribute('__proto__'), 'x', '"__proto__" is data, the first one counting');
  t.equal(Object.getOwnPropertyDescriptor(ctx.ruleData(), '__proto__')?.value, 'x');
  for (const [body, detail] of [
    ['{"context":', /not valid JSON/],
    ['[1]', /must be a JSON object/],
    ['"u1"', /must be a JSON object/],
    ['{"context": [1]}', /"context" must be a JSON object/],
    ['{"context": {"properties": "plan=beta"}}', /"properties" must be a JSON object/],
  ] as const) {
    t.notOk(ctx.parseBody(body), body);
    t.match(ctx.error, detail);
  }
});
