// A flag's type, owner and lifetime in flags as code, over the Management API against a real server
// (issue 99; docs/flags-as-code.md): export writes them only where set; a file that sets them creates
// and changes flags with them; leaving one out returns it to its default; the exported file applies to
// itself with no change (the round trip); an archived flag is in no export, and its name is refused.
import t from 'tap';
import { call } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const { secrets } = world;
const exported = async () => (await call(server.baseUrl, 'GET', '/api/v1/export', { token: secrets.read })).json;
const apply = (file: unknown) => call(server.baseUrl, 'POST', '/api/v1/apply', { token: secrets.write, body: file });
const lifecycleOf = async (name: string) => {
  const list = (await call(server.baseUrl, 'GET', '/api/v1/lifecycle', { token: secrets.read })).json.flags as { name: string }[];
  return list.find((f) => f.name === name);
};

t.test('set, exported, round trip, returned to defaults', async (t) => {
  const file = await exported();
  t.notOk(
    Object.values(file.flags).some((f) => 'type' in (f as object)),
    'flags without them export as before',
  );
  file.flags['owned-switch'] = { type: 'kill-switch', owner: 'team-ops', lifetimeDays: 90, enabled: true, trafficPercentage: 100 };
  file.flags.banner = { ...file.flags.banner, type: 'experiment', owner: 'team-web' };
  const applied = await apply(file);
  t.equal(applied.status, 200, applied.text);
  t.match(await lifecycleOf('owned-switch'), { type: 'kill-switch', owner: 'team-ops', lifetimeDays: 90 });
  t.match(await lifecycleOf('banner'), { type: 'experiment', owner: 'team-web', lifetimeDays: 40 });

  const again = await exported();
  t.match(again.flags['owned-switch'], { type: 'kill-switch', owner: 'team-ops', lifetimeDays: 90 });
  t.match(again.flags.banner, { type: 'experiment', owner: 'team-web' });
  const noop = await apply(again);
  t.equal(noop.status, 200);
  t.equal(noop.json.changed, false, 'the export applies to itself with no change');

  const { type: _type, owner: _owner, ...plain } = again.flags.banner;
  again.flags.banner = plain;
  const planned = await call(server.baseUrl, 'POST', '/api/v1/plan', { token: secrets.read, body: again });
  t.match(
    JSON.stringify(planned.json.changes),
    /"path":"type","before":"experiment","after":null/,
    'plan shows the type returning to its default',
  );
  t.equal((await apply(again)).status, 200);
  t.match(await lifecycleOf('banner'), { type: 'release', owner: null, lifetimeDays: 40 });
});

t.test('an archived flag: in no export, its name refused to a file', async (t) => {
  const id = (await call(server.baseUrl, 'GET', '/api/v1/flags?name=owned-switch', { token: secrets.read })).json.flags[0].id;
  t.equal((await call(server.baseUrl, 'POST', `/api/v1/flags/${id}/archive`, { token: secrets.write })).status, 200);
  const file = await exported();
  t.notOk('owned-switch' in file.flags, 'left out of the export');
  file.flags['owned-switch'] = { enabled: false, trafficPercentage: 0 };
  const refused = await apply(file);
  t.equal(refused.status, 400);
  t.match(refused.json.detail, /owned-switch.*archived/);
});
