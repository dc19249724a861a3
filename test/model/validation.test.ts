import t from 'tap';
import { FlagCreate, FlagPatch } from '../../src/model/schemas.js';
import { compileValidator } from '../../src/model/validation.js';

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
    t.same(patch.problems({ trafficPercentage: bad }), ['"trafficPercentage" must be a whole number between 0 and 100'], `rejects ${String(bad)}`);
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
  t.same(create.problems({ name: '   ' }), ['name must be a non-blank string of at most 200 characters']);
  t.same(create.problems({ name: 'x', environments: { prod: { trafficPercentage: 500, colour: 1 } } }), [
    'unknown field "environments.prod.colour"',
    'environments.prod.trafficPercentage must be a whole number between 0 and 100',
  ]);
  t.same(create.problems({ name: 'x', tags: ['a', ''] }), ['tags[1] must be a non-empty string of up to 64 characters']);
  t.same(create.problems({ name: 'x', environments: { prod: null } }), ['environments.prod cannot be null']);
  t.same(create.problems({ name: 'x', audienceId: null }), [], 'audienceId may be null');
});
