// Shared fragments (issue 47) over the Management API, OFREP and the Evaluation API against a real
// server: made, listed, changed and deleted in the token's project only (another project's is not
// found); a flag's rule names one with {"$ref": NAME} and is refused, in PATCH's words, when it names
// none; OFREP and the Evaluation API answer as the fragment says, and a fragment changed changes every
// flag that uses it; a fragment in use is not deleted, the refusal naming the flags; bad input changes
// nothing; every change audited as the token.
import t from 'tap';
import { call } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';
import { kFragmentRecords } from '../../src/flags/records/fragment-records.js';
import { auditView } from '../../src/model/audit.js';

const { server, world } = await startWorldServer(t);
const { ids, secrets } = world;
const base = server.baseUrl;
const api = (method: string, path: string, body?: unknown, token = secrets.write) => call(base, method, path, { token, body });
const ofrep = async (key: string, context: Record<string, unknown>, project = ids.single) => {
  const r = await call(base, 'POST', `/ofrep/v1/evaluate/flags/${key}`, { body: { context }, headers: { 'X-Flagwire-Project': project } });
  t.equal(r.status, 200, r.text);
  return r.json as { value: unknown; variant: string; reason: string };
};

/** Every record a refused request could change, fragments included, read fresh. */
const state = () => world.snapshot() + JSON.stringify(world.store.listKeyed(kFragmentRecords));

const kPro = { '==': [{ var: 'plan' }, 'pro'] };
const kFree = { '==': [{ var: 'plan' }, 'free'] };
const kTiered = { variants: { big: 100, small: 1 }, defaultVariant: 'small', targeting: { if: [{ $ref: 'paying' }, 'big', 'small'] } };

t.test('made, listed, used by a flag: OFREP and the Evaluation API answer as the fragment says, and follow its change', async (t) => {
  const made = await api('POST', '/api/v1/fragments', { name: 'paying', rule: kPro });
  t.equal(made.status, 201, made.text);
  t.match(made.json, { name: 'paying', rule: kPro, createdAt: Number, updatedAt: Number });
  const listed = await api('GET', '/api/v1/fragments', undefined, secrets.read);
  t.equal(listed.status, 200);
  t.match(listed.json, { fragments: [{ name: 'paying', rule: kPro }] });

  const flag = await api('POST', '/api/v1/flags', { name: 'tiered', enabled: true, trafficPercentage: 100, ...kTiered });
  t.equal(flag.status, 201, flag.text);
  t.same(flag.json.targeting, kTiered.targeting, 'the flag keeps its $ref as written');
  t.match(await ofrep('tiered', { targetingKey: 'u1', plan: 'pro' }), { value: 100, variant: 'big', reason: 'TARGETING_MATCH' });
  t.match(await ofrep('tiered', { targetingKey: 'u1', plan: 'free' }), { value: 1, variant: 'small' });
  const evaluated = await call(base, 'GET', `/v1/flags/${flag.json.id}?targetingKey=u1&plan=pro`);
  t.match(evaluated.json, { enabled: true, variant: 'big', value: 100 });

  const changed = await api('PATCH', '/api/v1/fragments/paying', { rule: kFree });
  t.equal(changed.status, 200, changed.text);
  t.same(changed.json.rule, kFree);
  t.match(await ofrep('tiered', { targetingKey: 'u1', plan: 'free' }), { value: 100, variant: 'big' }, 'every flag using it follows');
  t.match(await ofrep('tiered', { targetingKey: 'u1', plan: 'pro' }), { value: 1, variant: 'small' });
  const again = await api('PATCH', '/api/v1/fragments/paying', { rule: kFree });
  t.equal(again.json.updatedAt, changed.json.updatedAt, 'the same rule changes nothing');

  world.store.resetReadTxn();
  const [update, , create] = world.store.listAudit(ids.single, { limit: 3, before: null }).map(auditView);
  t.match(update, {
    action: 'fragment.update',
    actor: `token:${world.tokenIds.write}`,
    flagId: null,
    changes: { 'fragments.paying': { before: kPro, after: kFree } },
  });
  t.match(create, { action: 'fragment.create', changes: { 'fragments.paying': { before: null, after: kPro } } }, 'audited as the token');
});

t.test("a rule naming no fragment is refused in PATCH's words, and changes nothing", async (t) => {
  const before = state();
  const created = await api('POST', '/api/v1/flags', {
    name: 'orphan',
    variants: { a: 'A', b: 'B' },
    targeting: { if: [{ $ref: 'nope' }, 'a', 'b'] },
  });
  t.equal(created.status, 400);
  t.match(created.json.detail, 'targeting.if[0]: $ref "nope" names no shared fragment of this project (known: "paying")');
  const listed = (await api('GET', '/api/v1/flags', undefined, secrets.read)).json.flags as { id: string; name: string }[];
  const tiered = listed.find((f) => f.name === 'tiered')!;
  const patched = await api('PATCH', `/api/v1/flags/${tiered.id}`, { targeting: { if: [{ $ref: 'nope' }, 'big', 'small'] } });
  t.equal(patched.status, 400);
  t.match(patched.json.detail, '"targeting.if[0]": $ref "nope" names no shared fragment of this project (known: "paying")');
  t.equal(state(), before, 'nothing changed');
});

t.test('bad fragments are refused with every problem, and change nothing', async (t) => {
  const before = state();
  const cases: [unknown, RegExp][] = [
    [{ name: 'bad name', rule: kPro }, /name must be a letter, then letters, digits, _ or -/],
    [{ name: 'ok', rule: { nope: [1] } }, /rule: unknown operator "nope"/],
    [{ name: 'ok', rule: { if: [{ $ref: 'paying' }, true, false] } }, /may not refer to another/],
    [{ name: 'ok', rule: {} }, /rule must be a JsonLogic rule/],
    [{ name: 'paying', rule: kPro }, /a shared fragment named "paying" already exists/],
    [{ name: 'ok' }, /rule is required/],
  ];
  for (const [body, detail] of cases) {
    const r = await api('POST', '/api/v1/fragments', body);
    t.equal(r.status, 400, JSON.stringify(body));
    t.match(r.json, { error: 'Invalid request', detail });
  }
  const badUpdate = await api('PATCH', '/api/v1/fragments/paying', { rule: { '==': [1] } });
  t.equal(badUpdate.status, 400);
  t.equal(state(), before, 'nothing changed');
});

t.test(
  "the token's project only: another project's fragment is not found; a read token or a token of some environments may not change one",
  async (t) => {
    const other = await api('GET', '/api/v1/fragments', undefined, secrets.writeB);
    t.same(other.json, { fragments: [] }, "another project's token sees none");
    for (const [method, path, body] of [
      ['PATCH', '/api/v1/fragments/paying', { rule: kPro }],
      ['POST', '/api/v1/fragments/paying/delete', undefined],
    ] as const) {
      const r = await api(method, path, body, secrets.writeB);
      t.equal(r.status, 404, `${method} ${path}`);
      t.match(r.json, { error: 'Not found', detail: 'No shared fragment with this name exists in this project.' });
    }
    t.equal((await api('POST', '/api/v1/fragments', { name: 'x', rule: kPro }, secrets.read)).status, 403);
    const limited = await api('POST', '/api/v1/fragments', { name: 'x', rule: kPro }, secrets.stagingWrite);
    t.equal(limited.status, 403);
    t.match(limited.json.detail, 'A shared fragment carries the changes of every environment');
  },
);

t.test('a fragment in use is not deleted, the refusal naming its flags; once unused it is', async (t) => {
  const refused = await api('POST', '/api/v1/fragments/paying/delete');
  t.equal(refused.status, 400);
  t.match(refused.json.detail, 'shared fragment "paying" is used by flag "tiered": change their rules first');
  const listed = (await api('GET', '/api/v1/flags', undefined, secrets.read)).json.flags as { id: string; name: string }[];
  const tiered = listed.find((f) => f.name === 'tiered')!;
  const unhooked = await api('PATCH', `/api/v1/flags/${tiered.id}`, { targeting: { if: [kPro, 'big', 'small'] } });
  t.equal(unhooked.status, 200, unhooked.text);
  const deleted = await api('POST', '/api/v1/fragments/paying/delete');
  t.equal(deleted.status, 200, deleted.text);
  t.same(deleted.json, { name: 'paying', deleted: true });
  t.same((await api('GET', '/api/v1/fragments', undefined, secrets.read)).json, { fragments: [] });
  t.equal((await api('POST', '/api/v1/fragments/paying/delete')).status, 404, 'gone');
});
