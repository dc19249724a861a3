// Shared fragments in flag files (issue 47), over the Management API against a real server: an export
// writes the project's fragments as `$evaluators` and each rule with its `$ref`s (Flagwire's format and
// flagd's); the exported file plans to no change; a file's `$evaluators` are made, changed and (with
// prune) deleted by apply, before the flags that name them (deleted after them), and OFREP answers as
// the applied fragments say; a file without `$evaluators` leaves the fragments as they are and may name
// them; a file naming no fragment is refused naming the place; flagd's export imports back.
import t from 'tap';
import { call } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const { ids, secrets } = world;
const api = (method: string, path: string, body?: unknown, token = secrets.write) => call(server.baseUrl, method, path, { token, body });
const ofrepVariant = async (key: string, context: Record<string, unknown>) =>
  (
    await call(server.baseUrl, 'POST', `/ofrep/v1/evaluate/flags/${key}`, {
      body: { context },
      headers: { 'X-Flagwire-Project': ids.single },
    })
  ).json.variant;

const kPro = { '==': [{ var: 'plan' }, 'pro'] };
const kTeam = { '==': [{ var: 'plan' }, 'team'] };
const typed = (targeting: unknown) => ({ variants: { big: 100, small: 1 }, defaultVariant: 'small', targeting });

t.test('export writes $evaluators and rules as written; the exported file plans to no change', async (t) => {
  t.equal((await api('POST', '/api/v1/fragments', { name: 'paying', rule: kPro })).status, 201);
  const made = await api('POST', '/api/v1/flags', {
    name: 'tiered',
    enabled: true,
    trafficPercentage: 100,
    ...typed({ if: [{ $ref: 'paying' }, 'big', 'small'] }),
  });
  t.equal(made.status, 201, made.text);
  const exported = await api('GET', '/api/v1/export', undefined, secrets.read);
  t.equal(exported.status, 200);
  t.same(exported.json.$evaluators, { paying: kPro });
  t.same(exported.json.flags.tiered.targeting, { if: [{ $ref: 'paying' }, 'big', 'small'] });
  const planned = await api('POST', '/api/v1/plan', exported.json, secrets.read);
  t.equal(planned.status, 200, planned.text);
  t.equal(planned.json.changed, false, 'round trip');

  const flagd = await api('GET', '/api/v1/export?format=flagd', undefined, secrets.read);
  t.same(flagd.json.$evaluators, { paying: kPro }, "flagd's format too");
  t.same(flagd.json.flags.tiered.targeting, { if: [{ $ref: 'paying' }, 'big', 'small'] });
});

t.test('apply makes and changes fragments before the flags that name them, deletes dropped ones (prune) after', async (t) => {
  const file = (await api('GET', '/api/v1/export', undefined, secrets.read)).json;
  file.$evaluators = { paying: kTeam, early: { in: [{ var: 'plan' }, ['beta']] } };
  file.flags.tiered.targeting = { if: [{ $ref: 'early' }, 'big', 'small'] };
  const planned = await api('POST', '/api/v1/plan', file, secrets.read);
  t.match(
    planned.json.changes.map((c: { op: string; kind: string; name: string }) => [c.op, c.kind, c.name]),
    [
      ['create', 'fragment', 'early'],
      ['update', 'fragment', 'paying'],
      ['update', 'flag', 'tiered'],
    ],
  );
  t.same(planned.json.changes[1].fields, [{ path: 'rule', before: kPro, after: kTeam }]);
  const applied = await api('POST', '/api/v1/apply', file);
  t.equal(applied.status, 200, applied.text);
  t.equal(await ofrepVariant('tiered', { targetingKey: 'u', plan: 'beta' }), 'big', 'OFREP answers by the applied fragment');
  t.equal(await ofrepVariant('tiered', { targetingKey: 'u', plan: 'pro' }), 'small');

  delete file.$evaluators.paying;
  const kept = await api('POST', '/api/v1/plan', file, secrets.read);
  t.equal(kept.json.changed, false, 'a fragment the file leaves out is kept without prune');
  const pruned = await api('POST', '/api/v1/apply?prune=true', file);
  t.equal(pruned.status, 200, pruned.text);
  t.match(pruned.json.changes, [{ op: 'delete', kind: 'fragment', name: 'paying' }]);
  t.match((await api('GET', '/api/v1/fragments', undefined, secrets.read)).json.fragments, [{ name: 'early' }]);
});

t.test('a file without $evaluators leaves the fragments alone and may name them; a name of none is refused', async (t) => {
  const file = (await api('GET', '/api/v1/export', undefined, secrets.read)).json;
  delete file.$evaluators;
  const planned = await api('POST', '/api/v1/plan?prune=true', file, secrets.read);
  t.equal(planned.status, 200, planned.text);
  t.equal(planned.json.changed, false, 'the stored fragments are not managed by this file');
  file.flags.tiered.targeting = { if: [{ $ref: 'nope' }, 'big', 'small'] };
  const before = world.snapshot();
  const refused = await api('POST', '/api/v1/apply', file);
  t.equal(refused.status, 400);
  t.match(refused.json.detail, 'flags.tiered.targeting.if[0]: $ref "nope" names no shared fragment of this project (known: "early")');
  t.equal(world.snapshot(), before, 'nothing changed');
  const bad = { ...file, $evaluators: { 'bad.name': kPro }, flags: {} };
  const badName = await api('POST', '/api/v1/plan', bad, secrets.read);
  t.equal(badName.status, 400);
  t.match(badName.json.detail, '$evaluators["bad.name"]: "bad.name" cannot name a shared fragment');
});
