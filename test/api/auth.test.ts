// spec: Authentication, Management API; Errors 401/402/403.
import t from 'tap';
import { call } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';
import { principalOf } from '../../src/actor/audit-actor.js';

const { server, world } = await startWorldServer(t);
const get = (path: string, token?: string, headers?: Record<string, string>) => call(server.baseUrl, 'GET', path, { token, headers });

t.test('401 Missing bearer token when the header is absent', async (t) => {
  const r = await get('/api/v1/token');
  t.equal(r.status, 401);
  t.equal(r.json.error, 'Missing bearer token');
  t.match(r.json.detail, /Authorization: Bearer/);
  t.equal(r.json.docs, `${server.baseUrl}/docs#missing-bearer-token`);
});

t.test('401 for malformed and unknown tokens', async (t) => {
  for (const header of ['Basic abc', 'Bearer', 'Bearer not-a-token', `Bearer ${world.secrets.read} extra`, world.secrets.read]) {
    const r = await get('/api/v1/token', undefined, { authorization: header });
    t.equal(r.status, 401, header);
    t.equal(r.json.error, 'Malformed bearer token', header);
  }
  const r = await get('/api/v1/token', `fw_${'x'.repeat(40)}`);
  t.equal(r.status, 401);
  t.equal(r.json.error, 'Invalid token');
});

t.test('the Bearer scheme is case-insensitive; the token is not', async (t) => {
  for (const scheme of ['bearer', 'BEARER', 'bEaReR']) {
    const r = await get('/api/v1/token', undefined, { authorization: `${scheme} ${world.secrets.read}` });
    t.equal(r.status, 200, scheme);
    t.equal(r.json.id, world.tokenIds.read, scheme);
  }
  const swapped =
    world.secrets.read.slice(0, 3) +
    [...world.secrets.read.slice(3)].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');
  const r = await get('/api/v1/token', undefined, { authorization: `bearer ${swapped}` });
  t.equal(r.status, 401);
  t.equal(r.json.error, 'Invalid token', 'the secret with its letters in the other case is another token');
  const prefix = await get('/api/v1/token', undefined, { authorization: `Bearer FW_${world.secrets.read.slice(3)}` });
  t.equal(prefix.json.error, 'Malformed bearer token', 'the fw_ prefix is part of the token: case-sensitive');
});

t.test('a token in the URL is never accepted', async (t) => {
  const r = await get(`/api/v1/token?token=${world.secrets.read}`);
  t.equal(r.status, 400);
  t.notMatch(r.text, world.secrets.read, 'the secret is not echoed');
  const withHeader = await get(`/api/v1/flags?access_token=${world.secrets.read}`, world.secrets.read);
  t.equal(withHeader.status, 400, 'refused even alongside a valid header');
});

t.test('GET /api/v1/token describes the token', async (t) => {
  const r = await get('/api/v1/token', world.secrets.stagingWrite);
  t.equal(r.status, 200);
  t.same(r.json, {
    id: world.tokenIds.stagingWrite,
    name: 'staging-only',
    project: { id: world.ids.multi, name: 'Platform' },
    permission: 'write',
    environments: ['staging'],
    expiresAt: 0,
  });
  t.equal(r.json.id.length, 20, '20-character token id');
  const read = await get('/api/v1/token', world.secrets.read);
  t.same(read.json.environments, [], 'empty array means every environment, never null');
});

t.test('revocation takes effect on the very next request', async (t) => {
  const made = world.run('tokenCreate', {
    projectId: world.ids.single,
    principal: principalOf(world.ids.owner),
    name: 'short-lived',
    permission: 'read',
  });
  t.equal((await get('/api/v1/token', made.secret)).status, 200);
  world.run('tokenRevoke', { tokenId: made.id, principal: principalOf(world.ids.owner) });
  const r = await get('/api/v1/token', made.secret);
  t.equal(r.status, 401);
  t.equal(r.json.error, 'Token revoked');
});

t.test('rotation revokes the original and the replacement works', async (t) => {
  const made = world.run('tokenCreate', {
    projectId: world.ids.single,
    principal: principalOf(world.ids.editor),
    name: 'rotating',
    permission: 'write',
  });
  const next = world.run('tokenRotate', { tokenId: made.id, principal: principalOf(world.ids.editor) });
  t.equal((await get('/api/v1/token', made.secret)).status, 401);
  const r = await get('/api/v1/token', next.secret);
  t.equal(r.status, 200);
  t.equal(r.json.name, 'rotating');
  t.equal(r.json.permission, 'write');
});

t.test('an expired token gets 401 Token expired', async (t) => {
  const longAgo = Date.now() - 31 * 24 * 3600 * 1000;
  const made = world.run(
    'tokenCreate',
    {
      projectId: world.ids.single,
      principal: principalOf(world.ids.owner),
      name: 'old',
      permission: 'read',
      expires: '30d',
    },
    longAgo,
  );
  const r = await get('/api/v1/token', made.secret);
  t.equal(r.status, 401);
  t.equal(r.json.error, 'Token expired');
});

t.test('402 on every call while the organisation is not eligible, reads included', async (t) => {
  for (const path of ['/api/v1/token', '/api/v1/flags', `/api/v1/flags/${world.ids.flagFree}`]) {
    const r = await get(path, world.secrets.free);
    t.equal(r.status, 402, path);
    t.equal(r.json.error, 'Plan does not include the Management API');
    t.equal(r.json.docs, `${server.baseUrl}/docs#plan-required`);
  }
  const before = world.snapshot();
  const write = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.flagFree}`, {
    token: world.secrets.free,
    body: { enabled: true },
  });
  t.equal(write.status, 402);
  const create = await call(server.baseUrl, 'POST', '/api/v1/flags', { token: world.secrets.free, body: { name: 'paid-only' } });
  t.equal(create.status, 402, 'POST');
  t.equal(create.json.error, 'Plan does not include the Management API');
  t.equal(create.json.docs, `${server.baseUrl}/docs#plan-required`);
  t.equal(world.snapshot(), before, 'nothing changed');
});

t.test('lapsed standing and an ended trial refuse; back in good standing the same token works', async (t) => {
  const org = world.ids.orgB;
  world.run('orgUpdate', { orgId: org, standing: 'lapsed' });
  t.equal((await get('/api/v1/token', world.secrets.writeB)).status, 402, 'lapsed subscription');
  world.run('orgUpdate', { orgId: org, standing: 'good', plan: 'teams-trial', trialEndsAt: Date.now() - 1000 });
  t.equal((await get('/api/v1/token', world.secrets.writeB)).status, 402, 'trial ended');
  world.run('orgUpdate', { orgId: org, plan: 'teams-trial', trialEndsAt: Date.now() + 3600_000 });
  t.equal((await get('/api/v1/token', world.secrets.writeB)).status, 200, 'active trial');
  world.run('orgUpdate', { orgId: org, plan: 'enterprise' });
  t.equal((await get('/api/v1/token', world.secrets.writeB)).status, 200, 'enterprise again');
});

t.test('403 Insufficient permission for a read token on POST and PATCH', async (t) => {
  const before = world.snapshot();
  const post = await call(server.baseUrl, 'POST', '/api/v1/flags', { token: world.secrets.read, body: { name: 'nope' } });
  t.equal(post.status, 403);
  t.equal(post.json.error, 'Insufficient permission');
  t.match(post.json.detail, /read permission/);
  t.match(post.json.detail, /needs write/);
  const patch = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.flag}`, {
    token: world.secrets.read,
    body: { enabled: false },
  });
  t.equal(patch.status, 403);
  t.equal(world.snapshot(), before, 'nothing changed');
});

t.test('403 Environment not permitted names the environment and lists the allowed ones', async (t) => {
  const r = await get(`/api/v1/flags/${world.ids.groupFlag}?env=production`, world.secrets.stagingWrite);
  t.equal(r.status, 403);
  t.equal(r.json.error, 'Environment not permitted');
  t.match(r.json.detail, /"production"/);
  t.match(r.json.detail, /staging/);
  const before = world.snapshot();
  const patch = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.groupFlag}?env=production`, {
    token: world.secrets.stagingWrite,
    body: { enabled: false },
  });
  t.equal(patch.status, 403);
  t.equal(patch.json.error, 'Environment not permitted');
  t.equal(world.snapshot(), before);
  const ok = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.groupFlag}?env=staging`, {
    token: world.secrets.stagingWrite,
    body: { trafficPercentage: 40 },
  });
  t.equal(ok.status, 200, 'its own environment is writable');
  const list = await get('/api/v1/flags', world.secrets.stagingWrite);
  t.equal(list.status, 200, 'a restricted token still lists every flag');
  t.same(Object.keys(list.json.flags[0].environments), ['staging', 'production']);
});

t.test('403 Forbidden for a create body that sets state for a disallowed environment', async (t) => {
  const before = world.snapshot();
  const r = await call(server.baseUrl, 'POST', '/api/v1/flags', {
    token: world.secrets.stagingWrite,
    body: { name: 'new-one', environments: { staging: { enabled: true }, production: { enabled: true } } },
  });
  t.equal(r.status, 403);
  t.equal(r.json.error, 'Forbidden');
  t.match(r.json.detail, /"production"/);
  t.equal(world.snapshot(), before);
});
