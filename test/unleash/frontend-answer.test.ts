// In-process: the rules of Unleash's front-end API's answers (src/unleash/frontend-answer.ts) and of
// reading Unleash's context (src/unleash/context.ts): the toggle for each kind of answer, payloads by
// type, and the context's mapping from a query or a body onto Flagwire's targeting key, cohort and
// attributes.
import t from 'tap';
import { compileVariants } from '../../src/eval-engine/variants.js';
import { UnleashContext } from '../../src/unleash/context.js';
import { payloadOf, toggleOf } from '../../src/unleash/frontend-answer.js';

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
