// A flag's bucketing in flags as code (issue 44), over the Management API against the real server: the
// file carries `bucketing` for a fractional flag only, export, plan and apply round-trip it (a new flag
// is made with it), flagd's export names it as `x-flagwire-bucketing`, and a file that would change a
// stored flag's bucketing is refused by plan and by apply, changing nothing.
import t, { type Test } from 'tap';
import { call, type Reply } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);

const exportFile = (token: string, query = '') => call(server.baseUrl, 'GET', `/api/v1/export${query}`, { token });
const plan = (token: string, body: unknown) => call(server.baseUrl, 'POST', '/api/v1/plan', { token, body });
const apply = (token: string, body: unknown) => call(server.baseUrl, 'POST', '/api/v1/apply', { token, body });
const flagByName = async (name: string, token: string) =>
  (await call(server.baseUrl, 'GET', `/api/v1/flags?name=${encodeURIComponent(name)}`, { token })).json.flags[0];

async function refused(t: Test, request: () => Promise<Reply>): Promise<string> {
  const before = world.snapshot();
  const r = await request();
  t.equal(r.status, 400, r.text);
  t.same(Object.keys(r.json ?? {}), ['error', 'detail', 'docs'], "the spec's error envelope");
  t.equal(world.snapshot(), before, 'nothing changed');
  return r.json?.detail;
}

const made = await call(server.baseUrl, 'POST', '/api/v1/flags', {
  token: world.secrets.write,
  body: { name: 'frac', bucketing: 'fractional', enabled: true, trafficPercentage: 25 },
});
const groupMade = await call(server.baseUrl, 'POST', '/api/v1/flags', {
  token: world.secrets.multiWrite,
  body: { name: 'g-frac', bucketing: 'fractional' },
});

t.test('export writes bucketing for a fractional flag only; plan and apply of it change nothing', async (t) => {
  t.equal(made.status, 201);
  const file = (await exportFile(world.secrets.read)).json;
  t.same(Object.keys(file.flags.frac).slice(0, 3), ['description', 'tags', 'bucketing']);
  t.equal(file.flags.frac.bucketing, 'fractional');
  for (const [name, flag] of Object.entries<Record<string, unknown>>(file.flags))
    if (name !== 'frac') t.notOk(Object.hasOwn(flag, 'bucketing'), `${name}: a modulo flag's entry is as before`);
  const planned = await plan(world.secrets.read, file);
  t.same([planned.status, planned.json.changed], [200, false]);
  const applied = await apply(world.secrets.write, file);
  t.same([applied.status, applied.json.changed], [200, false]);
  const multi = (await exportFile(world.secrets.multiRead)).json;
  t.equal(multi.flags['g-frac'].bucketing, 'fractional', 'a group flag too');
  t.equal(groupMade.status, 201);
});

t.test('a new flag of the file is made with its bucketing; the export gives the file back', async (t) => {
  const file = (await exportFile(world.secrets.read)).json;
  file.flags['frac-new'] = {
    description: '',
    tags: [],
    bucketing: 'fractional',
    enabled: true,
    trafficPercentage: 40,
    cohorts: [],
    audience: null,
  };
  file.flags['mod-new'] = {
    description: '',
    tags: [],
    bucketing: 'modulo',
    enabled: true,
    trafficPercentage: 40,
    cohorts: [],
    audience: null,
  };
  const planned = await plan(world.secrets.read, file);
  t.equal(planned.status, 200, planned.text);
  const created = planned.json.changes.find((c: { name: string }) => c.name === 'frac-new');
  t.same(
    created.fields.find((f: { path: string }) => f.path === 'bucketing'),
    { path: 'bucketing', before: null, after: 'fractional' },
  );
  const applied = await apply(world.secrets.write, file);
  t.equal(applied.status, 200, applied.text);
  t.equal((await flagByName('frac-new', world.secrets.read)).bucketing, 'fractional');
  t.notOk(Object.hasOwn(await flagByName('mod-new', world.secrets.read), 'bucketing'), '"modulo" is no bucketing stored');
  const again = (await exportFile(world.secrets.read)).json;
  delete file.flags['mod-new'].bucketing;
  t.same(again, file, 'export, edit, apply, export: the same file');
  t.same([(await plan(world.secrets.read, again)).json.changed], [false]);
});

t.test("flagd's export names a fractional flag's bucketing in x-flagwire-bucketing (what flags import reads)", async (t) => {
  const flagd = (await exportFile(world.secrets.read, '?format=flagd')).json;
  t.equal(flagd.flags.frac['x-flagwire-bucketing'], 'fractional');
  t.notOk(Object.hasOwn(flagd.flags.banner, 'x-flagwire-bucketing'), 'a modulo flag as before');
});

t.test('a file that changes a stored bucketing is refused by plan and apply, naming the flag and why', async (t) => {
  const file = (await exportFile(world.secrets.read)).json;
  delete file.flags.frac.bucketing;
  file.flags.banner.bucketing = 'fractional';
  file.flags.banner.trafficPercentage = 77;
  for (const request of [() => plan(world.secrets.read, file), () => apply(world.secrets.write, file)]) {
    const detail = await refused(t, request);
    t.match(detail, /^The file cannot be applied, nothing changed: /);
    t.match(
      detail,
      /flags\.banner\.bucketing: the flag's bucketing is "modulo" and cannot become "fractional": a flag's bucketing is fixed when the flag is made, since changing it would move users between buckets; make a new flag with "bucketing": "fractional" instead/,
    );
    t.match(
      detail,
      /flags\.frac\.bucketing: the flag's bucketing is "fractional" and cannot become "modulo": .* \(a flag the file writes without "bucketing" is a modulo flag: write "bucketing": "fractional" to keep this one\)/,
    );
  }
  file.flags.frac.bucketing = 'nearest';
  delete file.flags.banner.bucketing;
  t.match(
    await refused(t, () => plan(world.secrets.read, file)),
    /flags\.frac\.bucketing must be "modulo" \(the default\) or "fractional"/,
  );
});
