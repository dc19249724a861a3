// GET /api/v1/flags/{flag_id}/flagd against the real server: whether flagd's flag sets serve a flag, per
// environment, and why not (issue 44, item 3), with the Management API's token rules.
import t from 'tap';
import { call } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const flagd = (token: string | undefined, id: string) =>
  call(server.baseUrl, 'GET', `/api/v1/flags/${id}/flagd`, token === undefined ? {} : { token });
const create = async (token: string, body: unknown): Promise<string> => {
  const r = await call(server.baseUrl, 'POST', '/api/v1/flags', { token, body });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json.id as string;
};

t.test('a modulo split is left out with its reason; fractional and whole percentages are served', async (t) => {
  const modulo = await create(world.secrets.write, { name: 'serving-modulo', enabled: true, trafficPercentage: 30 });
  const fractional = await create(world.secrets.write, {
    name: 'serving-fractional',
    bucketing: 'fractional',
    enabled: true,
    trafficPercentage: 30,
  });
  const whole = await create(world.secrets.write, { name: 'serving-whole', enabled: true, trafficPercentage: 100 });

  const left = await flagd(world.secrets.read, modulo);
  t.equal(left.status, 200);
  t.same(Object.keys(left.json), ['id', 'name', 'flagd']);
  t.same({ id: left.json.id, name: left.json.name }, { id: modulo, name: 'serving-modulo' });
  t.equal(left.json.flagd.length, 1, 'a single-environment project has one flag set');
  t.same({ environment: left.json.flagd[0].environment, served: left.json.flagd[0].served }, { environment: null, served: false });
  t.match(left.json.flagd[0].reason, /modulo|bucketing/i, 'the reason names the bucketing');

  for (const id of [fractional, whole]) {
    const served = await flagd(world.secrets.read, id);
    t.same(served.json.flagd, [{ environment: null, served: true, reason: null }]);
  }
});

t.test('an experiment leaves a flag served: its exposures are named in the variant (issue 58)', async (t) => {
  const split = await create(world.secrets.write, {
    name: 'serving-experiment',
    bucketing: 'fractional',
    enabled: true,
    trafficPercentage: 30,
    experiment: 'serving-exp',
  });
  const rule = await create(world.secrets.write, {
    name: 'serving-experiment-rule',
    enabled: true,
    trafficPercentage: 100,
    experiment: 'serving-exp-rule',
    variants: { a: 'A', b: 'B' },
    defaultVariant: 'a',
    targeting: {
      fractional: [
        ['a', 50],
        ['b', 50],
      ],
    },
  });
  for (const id of [split, rule]) {
    const served = await flagd(world.secrets.read, id);
    t.same(served.json.flagd, [{ environment: null, served: true, reason: null }]);
  }
  const set = await call(server.baseUrl, 'GET', `/v1/flag-sets/${world.ids.single}`, { token: world.secrets.read });
  const flags = JSON.parse(set.text).flags;
  t.same(Object.keys(flags['serving-experiment'].variants), ['on', 'off', 'on~', 'off~']);
  t.same(Object.keys(flags['serving-experiment-rule'].variants), ['a', 'b', 'a~', 'b~']);
  t.equal(flags['serving-experiment-rule'].metadata.flagwireExposureMarker, '~');
});

t.test('a multi-environment project answers per environment', async (t) => {
  const r = await flagd(world.secrets.multiRead, world.ids.groupFlag);
  t.equal(r.status, 200);
  const project = await call(server.baseUrl, 'GET', '/api/v1/flags', { token: world.secrets.multiRead });
  t.equal(project.status, 200);
  t.ok(r.json.flagd.length > 1, 'one entry per environment');
  for (const entry of r.json.flagd) {
    t.type(entry.environment, 'string');
    t.equal(entry.served, entry.reason === null);
  }
});

t.test("another project's flag is not found, and the token rules are the Management API's", async (t) => {
  const other = await flagd(world.secrets.read, world.ids.flagB);
  const unknown = await flagd(world.secrets.read, 'flg_nosuch');
  t.equal(other.status, 404);
  t.equal(unknown.status, 404);
  t.same(other.json, unknown.json, 'identical to a flag that does not exist (spec: a flag of another project)');
  const none = await flagd(undefined, world.ids.flag);
  t.equal(none.status, 401);
});
