import t from 'tap';
import { Type } from '@sinclair/typebox';
import { FlagCreate, FlagPatch } from '../../src/model/schemas.js';
import { compileValidator, unicodeProblems } from '../../src/model/validation.js';

const patch = compileValidator(FlagPatch, { quoteKeys: true });
const create = compileValidator(FlagCreate, { quoteKeys: false });

t.test('valid patches have no problems', async (t) => {
  t.same(patch.problems({ enabled: true }), []);
  t.same(patch.problems({ trafficPercentage: 0, cohorts: [], audienceId: null }), []);
  t.same(patch.problems({ trafficPercentage: 100, audienceId: 'aud_1' }), []);
});

t.test('spec texts: unknown field, null, percentage', async (t) => {
  t.same(patch.problems({ colour: 'red' }), ['unknown field "colour"']);
  t.same(patch.problems({ enabled: null }), ['"enabled" cannot be null']);
  t.same(patch.problems({ cohorts: null }), ['"cohorts" cannot be null']);
  t.same(patch.problems({ trafficPercentage: null }), ['"trafficPercentage" cannot be null']);
  for (const bad of [101, -1, 50.5, '50', true, 1e300]) {
    t.same(
      patch.problems({ trafficPercentage: bad }),
      ['"trafficPercentage" must be a whole number between 0 and 100'],
      `rejects ${String(bad)}`,
    );
  }
});

t.test('all problems are reported at once, one per path', async (t) => {
  const problems = patch.problems({ a: 1, __proto__x: 2, enabled: 'yes', cohorts: ['ok', 3], audienceId: 7 });
  t.same(problems, [
    'unknown field "a"',
    'unknown field "__proto__x"',
    '"enabled" must be true or false',
    '"cohorts[1]" must be a non-empty string of up to 256 characters',
    '"audienceId" must be an audience id (string) or null',
  ]);
});

t.test('a JSON "__proto__" key is an unknown field, not a prototype', async (t) => {
  t.same(patch.problems(JSON.parse('{"__proto__": {"enabled": true}}')), ['unknown field "__proto__"']);
  t.same(patch.problems(JSON.parse('{"constructor": 1}')), ['unknown field "constructor"']);
});

t.test('create: paths are named, nested environments included', async (t) => {
  t.same(create.problems({ name: 'x' }), []);
  t.same(create.problems({}), ['name is required']);
  t.same(create.problems({ name: '   ' }), [
    'name must be a non-blank string of at most 200 characters, without control characters (U+0000-U+001F, U+007F-U+009F)',
  ]);
  t.same(create.problems({ name: 'x', environments: { prod: { trafficPercentage: 500, colour: 1 } } }), [
    'unknown field "environments.prod.colour"',
    'environments.prod.trafficPercentage must be a whole number between 0 and 100',
  ]);
  t.same(create.problems({ name: 'x', tags: ['a', ''] }), ['tags[1] must be a non-empty string of up to 64 characters']);
  t.same(create.problems({ name: 'x', environments: { prod: null } }), ['environments.prod cannot be null']);
  t.same(create.problems({ name: 'x', audienceId: null }), [], 'audienceId may be null');
});

t.test("a union of objects: the problems of the one branch whose keys the value has, else the union's own text", async (t) => {
  const A = Type.Object({ a: Type.Integer({ 'x-error': 'must be an integer' }) }, { additionalProperties: false });
  const B = Type.Object({ b: Type.String() }, { additionalProperties: false });
  const shape = compileValidator(Type.Object({ x: Type.Union([A, B], { 'x-error': 'must be {a} or {b}' }) }), { quoteKeys: false });
  t.same(shape.problems({ x: { a: 'one' } }), ['x.a must be an integer']);
  t.same(shape.problems({ x: { a: 1, c: 2 } }), ['unknown field "x.c"']);
  t.same(shape.problems({ x: { a: 1, b: 'two' } }), ['x must be {a} or {b}'], 'both keys: either branch');
  t.same(shape.problems({ x: {} }), ['x must be {a} or {b}'], 'neither');
  t.same(shape.problems({ x: 5 }), ['x must be {a} or {b}']);
  const nullable = compileValidator(Type.Object({ y: Type.Union([A, Type.Null()], { 'x-error': 'must be {a} or null' }) }), {
    quoteKeys: false,
  });
  t.same(nullable.problems({ y: {} }), ['y must be {a} or null'], 'a union with a branch that is no object: as before');
});

t.test('unicodeProblems: well-formed text of any script has none', async (t) => {
  const value = JSON.parse('{"name":"pair-\\ud83d\\ude00","tags":["新","e\\u0301","\\ufdd0","\\uffff"],"x":{"😀":["Ω"]}}');
  t.equal(value.name, 'pair-😀', 'an escaped surrogate pair is one character');
  t.same(unicodeProblems(value, { quoteKeys: false }), []);
  t.same(unicodeProblems(null, { quoteKeys: false }), []);
});

t.test('unicodeProblems: every lone surrogate, in values and keys, named by its path', async (t) => {
  const fix = 'send only well-formed text (I-JSON, RFC 7493)';
  const value = JSON.parse('{"a\\ud800":{"b":["ok","\\udc00x\\udbff","\\udfff\\ud800"]},"c":"\\ud83d\\ude00\\ud83d"}');
  t.same(unicodeProblems(value, { quoteKeys: false }), [
    `the key a\\uD800 is not valid Unicode: it has a lone surrogate (\\uD800); ${fix}`,
    `a\\uD800.b[1] is not valid Unicode: it has a lone surrogate (\\uDC00, \\uDBFF); ${fix}`,
    // A low then a high surrogate is two lone ones, not a pair.
    `a\\uD800.b[2] is not valid Unicode: it has a lone surrogate (\\uDFFF, \\uD800); ${fix}`,
    `c is not valid Unicode: it has a lone surrogate (\\uD83D); ${fix}`,
  ]);
  t.same(unicodeProblems({ cohorts: ['\ud800'] }, { quoteKeys: true }), [
    `"cohorts[0]" is not valid Unicode: it has a lone surrogate (\\uD800); ${fix}`,
  ]);
  for (const problem of unicodeProblems(value, { quoteKeys: false }))
    t.notMatch(problem, /[\ud800-\udfff]/, 'the detail itself is well-formed');
});

t.test('unicodeProblems: at most 10 listed, the rest counted; deep nesting does not overflow', async (t) => {
  const many = unicodeProblems({ cohorts: Array.from({ length: 25 }, () => '\ud800') }, { quoteKeys: false });
  t.equal(many.length, 11);
  t.match(many[9], /^cohorts\[9\] /);
  t.equal(many[10], 'and 15 more strings that are not valid Unicode');
  const depth = 100_000;
  const deep = JSON.parse(`{"x":${'['.repeat(depth)}"\\udc00"${']'.repeat(depth)}}`);
  const [problem] = unicodeProblems(deep, { quoteKeys: false });
  t.match(problem, /^x\[0\]\[0\]/);
  t.match(problem, /\.\.\. is not valid Unicode/, 'the path is cut');
  t.ok(problem!.length < 400);
});

t.test('unicodeProblems: only arrays and plain objects are walked (bytes are not text)', async (t) => {
  t.same(unicodeProblems({ received: { bytes: new Uint8Array(1 << 20), contentType: 'x' } }, { quoteKeys: false }), []);
  t.same(unicodeProblems({ when: new Date(0), o: Object.assign(Object.create(null), { k: '\ud800' }) }, { quoteKeys: false }).length, 1);
});
