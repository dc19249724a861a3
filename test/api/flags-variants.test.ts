// Typed variants (issue 25) over the Management API, against the real server: create, patch and get carry
// variants, defaultVariant and targeting (per environment on a group flag); a definition that does not
// parse is the spec's 400 envelope naming the field and the place, and changes nothing; a flag without
// variants answers exactly as before.
import t, { type Test } from 'tap';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';
import { kEnvironmentEntryKeys, kFlatFlagKeys } from '../helpers/flag-keys.js';

const { server, world } = await startWorldServer(t);
const post = (token: string, body: unknown) => call(server.baseUrl, 'POST', '/api/v1/flags', { token, body });
const get = (id: string, query = '', token = world.secrets.read) => call(server.baseUrl, 'GET', `/api/v1/flags/${id}${query}`, { token });
const patch = (token: string, id: string, body: unknown, query = '') =>
  call(server.baseUrl, 'PATCH', `/api/v1/flags/${id}${query}`, { token, body });

const kColours = { red: '#f00', green: '#0f0' };
const kRule = { if: [{ in: ['@example.com', { var: 'email' }] }, 'green', null] };

async function refused(t: Test, request: () => Promise<{ status: number; json: any }>): Promise<string> {
  const before = world.snapshot();
  const r = await request();
  t.equal(r.status, 400);
  t.equal(r.json.error, 'Invalid request');
  t.match(r.json.docs, /#invalid-request$/);
  t.equal(world.snapshot(), before, 'nothing changed');
  return r.json.detail;
}

t.test('a flag without variants answers byte for byte as before: no new field, same key order', async (t) => {
  const r = await get(world.ids.flag);
  t.equal(r.status, 200);
  t.strictSame(Object.keys(r.json), kFlatFlagKeys);
  const group = await get(world.ids.groupFlag, '', world.secrets.multiRead);
  t.strictSame(Object.keys(group.json.environments.staging), kEnvironmentEntryKeys);
  const noFields = await patch(world.secrets.write, world.ids.flag, {});
  t.equal(
    noFields.json.detail,
    'No fields to update: send a JSON object with at least one of "enabled", "trafficPercentage", "cohorts", "audienceId".',
    "the spec's text, listing its four keys",
  );
});

t.test('create, get and patch a single flag with variants', async (t) => {
  const created = await post(world.secrets.write, {
    name: 'colour',
    enabled: true,
    variants: kColours,
    defaultVariant: 'red',
    targeting: kRule,
  });
  t.equal(created.status, 201);
  t.match(created.json, { kind: 'flag', enabled: true, variants: kColours, defaultVariant: 'red', targeting: kRule });
  const got = await get(created.json.id);
  t.same(got.json, created.json, 'GET returns what POST returned');

  const patched = await patch(world.secrets.write, created.json.id, { defaultVariant: 'green', targeting: {} });
  t.equal(patched.status, 200);
  t.match(patched.json, { changed: true, flag: { variants: kColours, defaultVariant: 'green', targeting: {} } });
  world.store.resetReadTxn();
  const entry = world.store.listAudit(world.ids.single, { limit: 1, before: null })[0]!;
  t.match(entry, { actor: `token:${world.tokenIds.write}`, action: 'flag.patch', flagId: created.json.id });
  t.strictSame(entry.changes, {
    defaultVariant: { before: 'red', after: 'green' },
    targeting: { before: kRule, after: {} },
  });
  const again = await patch(world.secrets.write, created.json.id, { defaultVariant: 'green', targeting: {} });
  t.match(again.json, { changed: false });

  const back = await patch(world.secrets.write, created.json.id, { variants: {} });
  t.equal(back.json.changed, true);
  t.notOk('variants' in back.json.flag || 'defaultVariant' in back.json.flag || 'targeting' in back.json.flag, 'a boolean flag again');
});

t.test('a group flag: variants per environment, flat with ?env=, in each entry without', async (t) => {
  const created = await post(world.secrets.multiWrite, {
    name: 'g-colour',
    environments: { staging: { enabled: true, variants: kColours, defaultVariant: 'red' }, production: {} },
  });
  t.equal(created.status, 201);
  t.match(created.json.environments.staging, { variants: kColours, defaultVariant: 'red', targeting: {} });
  t.notOk('variants' in created.json.environments.production);
  const staging = await get(created.json.id, '?env=staging', world.secrets.multiRead);
  t.match(staging.json, { environment: 'staging', variants: kColours, defaultVariant: 'red' });

  const rule = { if: [{ '>': [{ var: 'seats' }, 10] }, 'big', 'small'] };
  const patched = await patch(
    world.secrets.multiWrite,
    created.json.id,
    { variants: { small: 1, big: 2 }, targeting: rule },
    '?env=production',
  );
  t.equal(patched.status, 200);
  t.match(patched.json, {
    changed: true,
    flag: { environment: 'production', variants: { small: 1, big: 2 }, defaultVariant: null, targeting: rule },
  });
  const all = await get(created.json.id, '', world.secrets.multiRead);
  t.match(all.json.environments, { staging: { variants: kColours }, production: { variants: { small: 1, big: 2 } } });
  const denied = await patch(world.secrets.stagingWrite, created.json.id, { variants: { a: 'A' } }, '?env=production');
  t.equal(denied.status, 403, "an environment outside the token's list, as for every other key");
});

t.test('a definition that does not parse: 400 naming the field and the place, nothing changed', async (t) => {
  const created = await post(world.secrets.write, { name: 'r-colour', variants: kColours, defaultVariant: 'red' });
  t.equal(
    await refused(t, () =>
      patch(world.secrets.write, created.json.id, { targeting: { if: [{ foo: [1] }, 'red'] }, trafficPercentage: 101 }),
    ),
    '"trafficPercentage" must be a whole number between 0 and 100; "targeting.if[0]": unknown operator "foo"',
    'with the other problems of the body, joined as the spec says',
  );
  t.equal(
    await refused(t, () => post(world.secrets.write, { name: 'r-mixed', variants: { a: 1, b: true }, defaultVariant: 'a' })),
    'variants.b: a boolean, but variant "a" is a number: a flag\'s variants are all of one type',
  );
  t.equal(
    await refused(t, () =>
      post(world.secrets.multiWrite, { name: 'r-group', environments: { staging: { variants: { a: 'A' }, targeting: { '==': [1] } } } }),
    ),
    'environments.staging.targeting["=="]: == takes 2 arguments, got 1',
  );
  t.equal(
    await refused(t, () => post(world.secrets.write, { name: 'r-shape', variants: 'red', defaultVariant: 3 })),
    'variants must be an object of variant name to value; defaultVariant must be a variant name (string) or null',
  );
  t.equal(await refused(t, () => patch(world.secrets.write, created.json.id, { variants: null })), '"variants" cannot be null');
  t.equal(
    await refused(t, () => patch(world.secrets.write, created.json.id, { colour: 'red' })),
    'unknown field "colour"',
    'unknown keys are still refused by name',
  );
});

t.test("metadata: flagd's flag metadata set, shown, audited, removed with {}, and served by OFREP beside id and name", async (t) => {
  const created = await post(world.secrets.write, {
    name: 'with-metadata',
    enabled: true,
    trafficPercentage: 100,
    variants: kColours,
    defaultVariant: 'red',
    metadata: { team: 'checkout', version: 3, internal: true, id: 'not-the-id' },
  });
  t.equal(created.status, 201, JSON.stringify(created.json));
  const id = created.json.id as string;
  t.same(created.json.metadata, { team: 'checkout', version: 3, internal: true, id: 'not-the-id' });
  const ofrep = await call(server.baseUrl, 'POST', `/ofrep/v1/evaluate/flags/${id}`, { body: { context: {} } });
  t.same(ofrep.json.metadata, { team: 'checkout', version: 3, internal: true, id, name: 'with-metadata' }, "the flag's id and name win");
  const changed = await patch(world.secrets.write, id, { metadata: { team: 'payments' } });
  t.same([changed.json.changed, changed.json.flag.metadata], [true, { team: 'payments' }]);
  const cleared = await patch(world.secrets.write, id, { metadata: {} });
  t.notOk('metadata' in cleared.json.flag, '{} removes it');
  const [clearedEntry, changedEntry] = (await cli(server.dataDir, ['audit', world.ids.single, '--limit', '2'])).json.entries;
  t.same(changedEntry.changes.metadata, {
    before: { team: 'checkout', version: 3, internal: true, id: 'not-the-id' },
    after: { team: 'payments' },
  });
  t.same(clearedEntry.changes.metadata, { before: { team: 'payments' }, after: null }, 'audited with before and after');
  t.match(
    await refused(t, () => post(world.secrets.write, { name: 'meta-only', metadata: { team: 'x' } })),
    /metadata: this flag has no variants: send "variants" with it, or drop it/,
  );
  t.match(await refused(t, () => patch(world.secrets.write, id, { metadata: { nested: { no: 1 } } })), /metadata/);
});
