// SCIM 2.0 conformance of our own (issue 61 item 2; docs/scim.md), black-box through a real server,
// written from RFC 7644 and the requests Okta's and Microsoft Entra ID's SCIM clients document: every
// route, each filter operator, paging, ETags and If-Match (412), the PATCH shapes both send, and errors
// in SCIM's envelope. Then what provisioning does to the organisation: a group mapped to a role gives it;
// deprovisioning ends the person's session and their token answers 401 saying why (still listed, as
// revoked); another organisation's secret sees nothing; the last Owner is neither deprovisioned nor
// demoted; every write is audited.
import t from 'tap';
import { kScimAuditActions } from '../../src/scim/audit-actions.js';
import { call, type Reply } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';
import { consoleCall, demoPassword, kDemoOwner, setPassword, signIn } from '../helpers/web-console.js';

const kError = 'urn:ietf:params:scim:api:messages:2.0:Error';
const kUser = 'urn:ietf:params:scim:schemas:core:2.0:User';
const kGroup = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const kPatch = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

t.test('SCIM 2.0: routes, filters, paging, ETags, PATCH shapes, errors and deprovisioning', async (t) => {
  const server = await startTestServer({ demo: true, env: { FLAGWIRE_CONSOLE_CREATE_ORGS: 'on' } });
  t.teardown(() => server.stop());
  const base = server.baseUrl;
  const owner = await signIn(base, kDemoOwner, demoPassword(server.output()));
  const home = (await consoleCall(base, owner, 'GET', 'home')).json;
  const org = home.orgs[0];
  const orgId = org.id as string;
  const projectId = org.projects.find((p: { kind: string }) => p.kind === 'multi').id as string;

  // ---- no secret, a wrong one: 401 in SCIM's envelope ----
  const noSecret = await call(base, 'GET', '/scim/v2/Users');
  t.equal(noSecret.status, 401);
  t.match(noSecret.json, { schemas: [kError], status: '401' }, 'SCIM envelope, status a string');
  t.match(noSecret.headers.get('content-type'), /^application\/scim\+json/);

  // ---- an owner enables it; the secret is shown once ----
  const enabled = await consoleCall(base, owner, 'POST', `orgs/${orgId}/scim/secret`);
  t.equal(enabled.status, 200);
  t.match(enabled.json, { orgId, rotated: false, secret: /^fws_/ });
  const secret = enabled.json.secret as string;
  t.match((await consoleCall(base, owner, 'GET', `orgs/${orgId}/scim`)).json, { enabled: true, baseUrl: /\/scim\/v2$/ });
  const scim = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> =>
    call(base, method, `/scim/v2${path}`, { token: secret, body, headers: { 'content-type': 'application/scim+json', ...headers } });
  const scimError = (r: Reply, status: number, scimType: string | undefined, what: string) => {
    t.equal(r.status, status, `${what}: ${status}`);
    t.match(r.json, { schemas: [kError], status: String(status), detail: String }, `${what}: SCIM's envelope`);
    t.equal(r.json?.scimType, scimType, `${what}: scimType ${scimType}`);
    t.match(r.headers.get('content-type'), /^application\/scim\+json/, `${what}: application/scim+json`);
  };

  // ---- discovery ----
  const spc = await scim('GET', '/ServiceProviderConfig');
  t.equal(spc.status, 200);
  t.match(spc.json, { patch: { supported: true }, filter: { supported: true }, etag: { supported: true }, bulk: { supported: false } });
  const schemas = await scim('GET', '/Schemas');
  t.same(
    schemas.json.Resources.map((s: { id: string }) => s.id),
    [kUser, kGroup],
  );
  t.equal((await scim('GET', `/Schemas/${kUser}`)).json.name, 'User');
  t.same(
    (await scim('GET', '/ResourceTypes')).json.Resources.map((r: { endpoint: string }) => r.endpoint),
    ['/Users', '/Groups'],
  );
  t.equal((await scim('GET', '/ResourceTypes/Group')).json.schema, kGroup);
  scimError(await scim('GET', '/Nothing'), 404, undefined, 'an unknown endpoint');
  scimError(await scim('DELETE', '/Schemas'), 405, undefined, 'a method an endpoint does not take');

  // ---- Users: create (Okta's shape, then Entra's) ----
  const okta = await scim('POST', '/Users', {
    schemas: [kUser],
    userName: 'alice@example.test',
    name: { givenName: 'Alice', familyName: 'Archer' },
    emails: [{ primary: true, value: 'alice@example.test', type: 'work' }],
    displayName: 'Alice Archer',
    locale: 'en-US',
    externalId: '00u1okta',
    groups: [],
    password: 'ignored-by-design',
    active: true,
  });
  t.equal(okta.status, 201, 'created');
  t.match(okta.json, {
    schemas: [kUser],
    id: /^usr_/,
    userName: 'alice@example.test',
    active: true,
    meta: { resourceType: 'User', version: 'W/"1"' },
  });
  t.equal(okta.headers.get('etag'), 'W/"1"');
  t.equal(okta.headers.get('location'), okta.json.meta.location);
  const alice = okta.json.id as string;
  const entra = await scim('POST', '/Users', {
    schemas: [kUser, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
    externalId: 'bob-entra-guid',
    userName: 'bob@example.test',
    active: true,
    displayName: 'Bob Baker',
    emails: [{ primary: true, type: 'work', value: 'bob@example.test' }],
    name: { formatted: 'Bob Baker', familyName: 'Baker', givenName: 'Bob' },
    'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'Ops' },
  });
  t.equal(entra.status, 201);
  const bob = entra.json.id as string;
  const carol = (await scim('POST', '/Users', { schemas: [kUser], userName: 'carol@example.test', active: true })).json.id as string;
  t.match(carol, /^usr_/, 'userName alone, an address, makes a person');

  scimError(
    await scim('POST', '/Users', { schemas: [kUser], userName: 'ALICE@example.test' }),
    409,
    'uniqueness',
    'a userName taken (ignoring case)',
  );
  scimError(
    await scim('POST', '/Users', { schemas: [kUser], userName: 'x@example.test', externalId: '00u1okta' }),
    409,
    'uniqueness',
    'an externalId taken',
  );
  scimError(await scim('POST', '/Users', { schemas: [kUser], displayName: 'No name' }), 400, 'invalidValue', 'no userName');
  scimError(await scim('POST', '/Users', { schemas: [kUser], userName: 'not-an-address' }), 400, 'invalidValue', 'no e-mail address');
  scimError(await call(base, 'POST', '/scim/v2/Users', { token: secret, raw: '{nope' }), 400, 'invalidSyntax', 'a body that is not JSON');
  scimError(await scim('POST', '/Users', [1, 2]), 400, 'invalidSyntax', 'a body that is no object');

  // ---- read ----
  const read = await scim('GET', `/Users/${alice}`);
  t.equal(read.status, 200);
  t.match(read.json, { id: alice, externalId: '00u1okta', name: { givenName: 'Alice' }, emails: [{ value: 'alice@example.test' }] });
  t.notOk('password' in read.json, 'no password is kept or shown');
  scimError(await scim('GET', '/Users/usr_nobody'), 404, undefined, 'an unknown user');

  // ---- filters: every operator, on each attribute ----
  const ids = async (filter: string, path = '/Users') => {
    const r = await scim('GET', `${path}?filter=${encodeURIComponent(filter)}`);
    t.equal(r.status, 200, `filter ${filter}`);
    return (r.json.Resources as { id: string }[]).map((x) => x.id).sort();
  };
  const sorted = (...xs: string[]) => [...xs].sort();
  t.same(await ids('userName eq "alice@example.test"'), [alice], 'eq');
  t.same(await ids('USERNAME eq "Alice@Example.test"'), [alice], 'attribute names and userName without case');
  t.match(
    (await scim('GET', `/Users?startIndex=2&filter=${encodeURIComponent('userName eq "alice@example.test"')}`)).json,
    { totalResults: 1, itemsPerPage: 0, startIndex: 2, Resources: [] },
    'a userName asked for, paged past',
  );
  t.same(await ids('userName eq "nobody@example.test"'), [], 'a userName no one holds');
  t.same(await ids('userName ne "alice@example.test"'), sorted(bob, carol), 'ne');
  t.same(await ids('externalId eq "bob-entra-guid"'), [bob], 'externalId eq (Entra)');
  t.same(await ids('externalId eq "BOB-ENTRA-GUID"'), [], 'externalId is caseExact');
  t.same(await ids('emails co "bob@"'), [bob], 'co on emails');
  t.same(await ids('emails.value sw "alice"'), [alice], 'sw on emails.value');
  t.same(await ids('userName ew "example.test"'), sorted(alice, bob, carol), 'ew');
  t.same(await ids('displayName pr'), sorted(alice, bob), 'pr');
  t.same(await ids('displayName sw "Bob" and active eq true'), [bob], 'and, active');
  t.same(await ids('userName eq "alice@example.test" or userName eq "carol@example.test"'), sorted(alice, carol), 'or');
  t.same(await ids(`id eq "${bob}"`), [bob], 'id');
  t.same(await ids('not (displayName pr)'), [carol], 'not');
  t.same(await ids('emails[type eq "work" and value co "alice"]'), [alice], 'a value filter');
  t.same(await ids('meta.lastModified gt "2000-01-01T00:00:00Z"'), sorted(alice, bob, carol), 'meta.lastModified gt');
  t.same(await ids('meta.lastModified lt "2000-01-01T00:00:00Z"'), [], 'meta.lastModified lt');
  t.same(await ids('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "bob@example.test"'), [bob], 'a path with its schema');
  for (const bad of [
    'userName eq',
    'userName zz "a"',
    'nickName eq "a"',
    '(userName eq "a"',
    'userName eq "unclosed',
    'userName eq alice',
  ]) {
    scimError(await scim('GET', `/Users?filter=${encodeURIComponent(bad)}`), 400, 'invalidFilter', `filter ${bad}`);
  }

  // ---- paging ----
  const page = await scim('GET', '/Users?startIndex=2&count=1');
  t.match(page.json, { schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'], totalResults: 3, itemsPerPage: 1, startIndex: 2 });
  t.equal(page.json.Resources[0].id, bob, 'oldest first: the second is Bob');
  t.match((await scim('GET', '/Users?count=0')).json, { totalResults: 3, itemsPerPage: 0, Resources: [] }, 'count 0: only the total');
  t.match((await scim('GET', '/Users?startIndex=0&count=2')).json, { startIndex: 1, itemsPerPage: 2 }, 'startIndex below 1 is 1');
  t.match((await scim('GET', '/Users?startIndex=9')).json, { totalResults: 3, itemsPerPage: 0 }, 'past the end: none');
  scimError(await scim('GET', '/Users?count=lots'), 400, 'invalidValue', 'a count that is no number');
  const few = await scim('GET', '/Users?attributes=userName');
  t.same(
    Object.keys(few.json.Resources[0]).sort(),
    ['id', 'meta', 'schemas', 'userName'],
    'attributes: only those, with id, schemas and meta',
  );

  // ---- PUT, ETags and If-Match ----
  const replaced = await scim(
    'PUT',
    `/Users/${carol}`,
    { schemas: [kUser], userName: 'carol@example.test', displayName: 'Carol Cole', active: true },
    { 'if-match': 'W/"1"' },
  );
  t.equal(replaced.status, 200, 'replaced with the right If-Match');
  t.equal(replaced.json.meta.version, 'W/"2"');
  t.equal(replaced.headers.get('etag'), 'W/"2"');
  scimError(
    await scim('PUT', `/Users/${carol}`, { schemas: [kUser], userName: 'carol@example.test' }, { 'if-match': 'W/"1"' }),
    412,
    undefined,
    'a stale If-Match on PUT',
  );
  scimError(
    await scim(
      'PATCH',
      `/Users/${carol}`,
      { schemas: [kPatch], Operations: [{ op: 'replace', path: 'displayName', value: 'C' }] },
      { 'if-match': 'W/"7"' },
    ),
    412,
    undefined,
    'a stale If-Match on PATCH',
  );
  t.equal((await scim('GET', `/Users/${carol}`)).json.displayName, 'Carol Cole', 'a 412 changed nothing');
  scimError(
    await scim('PUT', '/Users/usr_nobody', { schemas: [kUser], userName: 'n@example.test' }),
    404,
    undefined,
    'PUT of an unknown user',
  );

  // ---- PATCH: Entra's shapes, then Okta's ----
  const entraPatch = await scim('PATCH', `/Users/${bob}`, {
    schemas: [kPatch],
    Operations: [
      { op: 'Replace', path: 'displayName', value: 'Robert Baker' },
      { op: 'Replace', path: 'emails[type eq "work"].value', value: 'robert@example.test' },
      { op: 'Add', path: 'name.givenName', value: 'Robert' },
      { op: 'Replace', path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department', value: 'Dev' },
      { op: 'Remove', path: 'externalId' },
    ],
  });
  t.equal(entraPatch.status, 200, "Entra's PATCH");
  t.match(entraPatch.json, {
    displayName: 'Robert Baker',
    emails: [{ value: 'robert@example.test', type: 'work' }],
    name: { givenName: 'Robert' },
  });
  t.notOk('externalId' in entraPatch.json, 'externalId removed');
  const oktaPatch = await scim('PATCH', `/Users/${bob}`, {
    schemas: [kPatch],
    Operations: [{ op: 'replace', value: { id: bob, displayName: 'Bob B.', 'name.familyName': 'B.' } }],
  });
  t.equal(oktaPatch.status, 200, "Okta's replace without a path");
  t.match(oktaPatch.json, { displayName: 'Bob B.', name: { familyName: 'B.' } });
  scimError(
    await scim('PATCH', `/Users/${bob}`, { schemas: [kPatch], Operations: [{ op: 'replace', path: 'id', value: 'x' }] }),
    400,
    'mutability',
    'PATCH of id',
  );
  scimError(
    await scim('PATCH', `/Users/${bob}`, { schemas: [kPatch], Operations: [{ op: 'remove', path: 'userName' }] }),
    400,
    'mutability',
    'removing userName',
  );
  scimError(
    await scim('PATCH', `/Users/${bob}`, { schemas: [kPatch], Operations: [{ op: 'replace', path: 'shoeSize', value: 9 }] }),
    400,
    'invalidPath',
    'an unknown path',
  );
  scimError(
    await scim('PATCH', `/Users/${bob}`, { schemas: [kPatch], Operations: [{ op: 'remove' }] }),
    400,
    'noTarget',
    'remove without a path',
  );
  scimError(
    await scim('PATCH', `/Users/${bob}`, { schemas: [kPatch], Operations: [{ op: 'move', path: 'x' }] }),
    400,
    'invalidSyntax',
    'an unknown op',
  );
  scimError(
    await scim('PATCH', `/Users/${bob}`, { schemas: [kPatch], Operations: [{ op: 'replace', path: 'active', value: 'maybe' }] }),
    400,
    'invalidValue',
    'active not a boolean',
  );

  // ---- Groups; a group mapped to a role gives it ----
  t.equal(
    (await consoleCall(base, owner, 'POST', `orgs/${orgId}/scim/group-roles`, { body: { group: 'Flagwire Editors', role: 'editor' } }))
      .status,
    200,
  );
  const role = async (userId: string) =>
    ((await consoleCall(base, owner, 'GET', `orgs/${orgId}/members`)).json.members as { userId: string; role: string }[]).find(
      (m) => m.userId === userId,
    )?.role;
  t.equal(await role(alice), 'viewer', 'a provisioned person of no mapped group is a Viewer');
  const group = await scim('POST', '/Groups', { schemas: [kGroup], displayName: 'Flagwire Editors', members: [{ value: alice }] });
  t.equal(group.status, 201);
  t.match(group.json, { id: /^grp_/, displayName: 'Flagwire Editors', members: [{ value: alice, display: 'alice@example.test' }] });
  const editors = group.json.id as string;
  t.equal(await role(alice), 'editor', "the group's role is given");
  scimError(
    await scim('POST', '/Groups', { schemas: [kGroup], displayName: 'flagwire editors' }),
    409,
    'uniqueness',
    'a displayName taken',
  );
  scimError(
    await scim('POST', '/Groups', { schemas: [kGroup], displayName: 'G', members: [{ value: 'usr_nobody' }] }),
    400,
    'invalidValue',
    'an unknown member',
  );
  // Entra adds members with a path and a list.
  const added = await scim('PATCH', `/Groups/${editors}`, {
    schemas: [kPatch],
    Operations: [{ op: 'Add', path: 'members', value: [{ value: bob }, { value: carol }] }],
  });
  t.same(added.json.members.map((m: { value: string }) => m.value).sort(), sorted(alice, bob, carol), "Entra's add");
  t.equal(await role(bob), 'editor');
  // Okta removes one by a value filter; Entra by a list.
  await scim('PATCH', `/Groups/${editors}`, { schemas: [kPatch], Operations: [{ op: 'remove', path: `members[value eq "${bob}"]` }] });
  const removed = await scim('PATCH', `/Groups/${editors}`, {
    schemas: [kPatch],
    Operations: [{ op: 'Remove', path: 'members', value: [{ value: carol }] }],
  });
  t.same(
    removed.json.members.map((m: { value: string }) => m.value),
    [alice],
    "Okta's and Entra's removes",
  );
  t.equal(await role(bob), 'viewer', 'out of the mapped group: back to Viewer');
  const renamed = await scim('PATCH', `/Groups/${editors}`, {
    schemas: [kPatch],
    Operations: [{ op: 'replace', value: { id: editors, displayName: 'Editors 2' } }],
  });
  t.equal(renamed.json.displayName, 'Editors 2', "Okta's rename without a path");
  t.equal(await role(alice), 'viewer', 'renamed to an unmapped name: the role follows');
  await scim('PATCH', `/Groups/${editors}`, {
    schemas: [kPatch],
    Operations: [{ op: 'replace', path: 'displayName', value: 'Flagwire Editors' }],
  });
  t.equal(await role(alice), 'editor');
  const slim = await scim('GET', `/Groups?excludedAttributes=members&filter=${encodeURIComponent('displayName eq "Flagwire Editors"')}`);
  t.equal(slim.json.totalResults, 1);
  t.notOk('members' in slim.json.Resources[0], 'excludedAttributes=members (Okta)');
  t.same(
    (await scim('GET', `/Users/${alice}`)).json.groups.map((g: { value: string }) => g.value),
    [editors],
    "a user's groups",
  );
  const found = await scim(
    'GET',
    `/Users?filter=${encodeURIComponent(`userName eq "${(await scim('GET', `/Users/${alice}`)).json.userName}"`)}`,
  );
  t.same(
    found.json.Resources.map((u: { groups: { value: string }[] }) => u.groups.map((g) => g.value)),
    [[editors]],
    'a user found by userName shows its groups, as the full list does',
  );
  t.same(
    (await scim('GET', '/Users')).json.Resources.find((u: { id: string }) => u.id === alice).groups.map((g: { value: string }) => g.value),
    [editors],
  );
  scimError(
    await scim('PUT', `/Groups/${editors}`, { schemas: [kGroup], displayName: 'Flagwire Editors' }, { 'if-match': 'W/"1"' }),
    412,
    undefined,
    'a stale If-Match on a group',
  );
  const other = (await scim('POST', '/Groups', { schemas: [kGroup], displayName: 'Temporary' })).json.id as string;
  t.equal((await scim('DELETE', `/Groups/${other}`)).status, 204, 'a group deleted');
  scimError(await scim('GET', `/Groups/${other}`), 404, undefined, 'a deleted group');

  // ---- deprovisioning: a person with a session and a token ----
  const dave = (await scim('POST', '/Users', { schemas: [kUser], userName: 'dave@example.test', active: true })).json.id as string;
  await scim('PATCH', `/Groups/${editors}`, { schemas: [kPatch], Operations: [{ op: 'add', path: 'members', value: [{ value: dave }] }] });
  // A person SCIM made has no password (they sign in by SSO); the operator gives dave one to stand for that sign-in.
  t.equal((await setPassword(server.dataDir, dave, 'dave password 1234\n')).code, 0);
  const daveSession = await signIn(base, 'dave@example.test', 'dave password 1234');
  const created = await consoleCall(base, daveSession, 'POST', `projects/${projectId}/tokens`, {
    body: { name: 'pipeline', permission: 'read' },
  });
  t.equal(created.status, 200, 'dave, an editor, makes a token');
  const whoAmI = () => call(base, 'GET', '/api/v1/token', { token: created.json.secret });
  t.equal((await whoAmI()).status, 200, 'it works');
  const off = await scim('PATCH', `/Users/${dave}`, { schemas: [kPatch], Operations: [{ op: 'replace', value: { active: false } }] });
  t.equal(off.status, 200, "Okta's deactivation");
  t.equal(off.json.active, false);
  const refused = await whoAmI();
  t.equal(refused.status, 401, "dave's token is refused");
  t.equal(refused.json.error, 'Token revoked');
  t.match(refused.json.detail, /dave@example\.test was deprovisioned/, 'saying why');
  t.equal((await consoleCall(base, daveSession, 'GET', 'home')).status, 401, "dave's session is gone");
  const listed = (await consoleCall(base, owner, 'GET', `projects/${projectId}/tokens`)).json.tokens.find(
    (x: { id: string }) => x.id === created.json.id,
  );
  t.match(listed, { status: 'revoked', revokedReason: /deprovisioned/ }, 'the token stays listed, revoked, with the reason');
  t.equal(await role(dave), undefined, 'no longer a member');
  t.equal((await scim('GET', `/Users/${dave}`)).json.active, false, 'the user stays, inactive');
  const back = await scim('PATCH', `/Users/${dave}`, { schemas: [kPatch], Operations: [{ op: 'Replace', path: 'active', value: 'True' }] });
  t.equal(back.json.active, true, "Entra's reactivation, a string boolean");
  t.equal(await role(dave), 'editor', 'a member again, with the role of his groups');
  t.equal((await whoAmI()).status, 401, 'a revoked token stays revoked');
  t.equal((await scim('DELETE', `/Users/${dave}`)).status, 204, 'DELETE');
  scimError(await scim('GET', `/Users/${dave}`), 404, undefined, 'a deleted user');
  t.equal(await role(dave), undefined);

  // ---- the last Owner: never deprovisioned nor demoted ----
  const ownerUser = (await scim('POST', '/Users', { schemas: [kUser], userName: kDemoOwner, active: true })).json;
  t.match(ownerUser, { id: home.user.id }, 'the owner, found by address, is linked');
  t.equal(await role(ownerUser.id), 'owner', 'keeping the Owner role');
  scimError(
    await scim('PATCH', `/Users/${ownerUser.id}`, { schemas: [kPatch], Operations: [{ op: 'replace', path: 'active', value: false }] }),
    400,
    'mutability',
    'deactivating the last Owner',
  );
  scimError(await scim('DELETE', `/Users/${ownerUser.id}`), 400, 'mutability', 'deleting the last Owner');
  scimError(
    await scim('PATCH', `/Groups/${editors}`, {
      schemas: [kPatch],
      Operations: [{ op: 'add', path: 'members', value: [{ value: ownerUser.id }] }],
    }),
    400,
    'mutability',
    'demoting the last Owner',
  );
  t.equal(await role(ownerUser.id), 'owner', 'still the Owner');
  t.equal((await scim('GET', `/Users/${ownerUser.id}`)).json.active, true);

  // ---- another organisation's secret sees nothing of this one ----
  const second = await consoleCall(base, owner, 'POST', 'orgs', { body: { name: 'Second org' } });
  t.equal(second.status, 200);
  const secondSecret = (await consoleCall(base, owner, 'POST', `orgs/${second.json.id}/scim/secret`)).json.secret as string;
  const theirs = (method: string, path: string, body?: unknown) => call(base, method, `/scim/v2${path}`, { token: secondSecret, body });
  t.match((await theirs('GET', '/Users')).json, { totalResults: 0, Resources: [] }, 'no users of the first');
  t.match((await theirs('GET', '/Groups')).json, { totalResults: 0 }, 'no groups of the first');
  scimError(await theirs('GET', `/Users/${alice}`), 404, undefined, "the first's user by id");
  scimError(
    await theirs('PATCH', `/Users/${alice}`, { schemas: [kPatch], Operations: [{ op: 'replace', path: 'active', value: false }] }),
    404,
    undefined,
    "a PATCH of the first's user",
  );
  scimError(await theirs('DELETE', `/Groups/${editors}`), 404, undefined, "a DELETE of the first's group");
  t.equal(await role(alice), 'editor', 'nothing of the first changed');

  // ---- rotating: the old secret stops at once ----
  const rotated = await consoleCall(base, owner, 'POST', `orgs/${orgId}/scim/secret`);
  t.equal(rotated.json.rotated, true);
  scimError(await scim('GET', '/Users'), 401, undefined, 'the old secret');
  t.equal((await call(base, 'GET', '/scim/v2/Users', { token: rotated.json.secret })).json.totalResults, 4, 'the new one works');

  // ---- disabled: its secret stops; what it provisioned stays ----
  t.match((await consoleCall(base, owner, 'DELETE', `orgs/${orgId}/scim`)).json, { orgId, disabled: true });
  scimError(await call(base, 'GET', '/scim/v2/Users', { token: rotated.json.secret }), 401, undefined, 'a disabled organisation’s secret');
  t.equal((await consoleCall(base, owner, 'GET', `orgs/${orgId}/scim`)).json.enabled, false);
  t.equal(await role(alice), 'editor', 'its members stay as they were');

  // ---- audited ----
  const auditBy = async (actor: string) =>
    (
      (await consoleCall(base, owner, 'GET', `projects/${projectId}/audit?limit=200&actor=${encodeURIComponent(actor)}`)).json.entries as {
        action: string;
        actor: string;
      }[]
    ).map((e) => `${e.action} ${e.actor}`);
  const actions = new Set([...(await auditBy(`user:${home.user.id}`)), ...(await auditBy(`scim:${orgId}`))]);
  // The Owner's settings, and every write of the identity provider's.
  const byOwner = new Set(['scim.enable', 'scim.rotate', 'scim.groupRole', 'scim.disable']);
  for (const action of byOwner) t.ok(actions.has(`${action} user:${home.user.id}`), `${action} by the owner`);
  for (const action of [...kScimAuditActions.filter((a) => !byOwner.has(a)), 'member.role', 'token.revoke'])
    t.ok(actions.has(`${action} scim:${orgId}`), `${action} by SCIM`);
});
