// Client keys over the Management API against a real server, and at the command line: made by a write
// token with the secret shown once (only its hash kept), listed without it, revoked (again: the same
// answer); a read token cannot make one; another project's keys are neither listed nor revoked; a
// multi-environment project's key names one of its environments, within the token's limit; a client key
// opens nothing of the Management API (it can never read rules); every change audited.
import { createHash } from 'node:crypto';
import t from 'tap';
import { kClientKeyRecords } from '../../src/client-keys/records.js';
import { cli } from '../helpers/cli.js';
import { freshRead } from '../helpers/fresh-read.js';
import { call } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const { ids, secrets } = world;
const api = (method: string, path: string, token: string, body?: unknown) => call(server.baseUrl, method, path, { token, body });

t.test('made by a write token, listed without its secret, revoked; a read token cannot make one', async (t) => {
  const refused = await api('POST', '/api/v1/client-keys', secrets.read, { name: 'web', uses: ['events'] });
  t.equal(refused.status, 403, refused.text);
  t.match(refused.json, { error: 'Insufficient permission' });

  const made = await api('POST', '/api/v1/client-keys', secrets.write, { name: 'web shop', uses: ['events'] });
  t.equal(made.status, 201, made.text);
  t.match(made.json, {
    id: /^ck_[A-Za-z0-9]{16}$/,
    name: 'web shop',
    environment: null,
    uses: ['events'],
    createdBy: `token:${world.tokenIds.write}`,
    createdByName: 'ci-write',
    revokedAt: null,
    secret: /^fwc_[A-Za-z0-9]{40}$/,
  });
  t.notOk('secretHash' in made.json || 'projectId' in made.json, 'no hash and no project in the answer');
  const { id, secret } = made.json as { id: string; secret: string };

  const stored = world.store.transact((w) => w.listKeyed(kClientKeyRecords));
  t.strictSame(
    stored.map((k) => k.secretHash),
    [createHash('sha256').update(secret).digest('hex')],
    'only the hash of the secret is stored',
  );
  t.notOk(JSON.stringify(stored).includes(secret), 'never the secret');

  const listed = await api('GET', '/api/v1/client-keys', secrets.read);
  t.equal(listed.status, 200, listed.text);
  t.strictSame(
    listed.json.clientKeys.map((k: { id: string }) => k.id),
    [id],
  );
  t.notOk(listed.text.includes(secret) || listed.text.includes('secret'), 'the list shows no secret');

  const revoked = await api('POST', `/api/v1/client-keys/${id}/revoke`, secrets.write);
  t.equal(revoked.status, 200, revoked.text);
  t.match(revoked.json, { id, revokedAt: Number });
  const again = await api('POST', `/api/v1/client-keys/${id}/revoke`, secrets.write);
  t.strictSame(again.json, revoked.json, 'revoking it again answers the same');
  const after = await api('GET', '/api/v1/client-keys', secrets.read);
  t.equal(after.json.clientKeys[0].revokedAt, revoked.json.revokedAt, 'listed as revoked');

  const audit = (await freshRead(server.dataDir)).listAudit(ids.single, { limit: 1000, before: null });
  const actions = audit.filter((e) => e.action.startsWith('client-key.'));
  t.strictSame(
    actions.map((e) => e.action).sort(),
    ['client-key.create', 'client-key.revoke'],
    'made and revoked, audited once each (a revoke of a revoked key changes nothing)',
  );
  t.match(
    actions.find((e) => e.action === 'client-key.create'),
    { actor: `token:${world.tokenIds.write}`, changes: { clientKey: { before: null, after: { id, name: 'web shop' } } } },
  );
});

t.test("another project's keys are not visible, and cannot be revoked", async (t) => {
  const mine = await api('POST', '/api/v1/client-keys', secrets.write, { name: 'app', uses: ['events'] });
  t.equal(mine.status, 201, mine.text);
  const theirs = await api('POST', '/api/v1/client-keys', secrets.writeB, { name: 'b app', uses: ['events'] });
  t.equal(theirs.status, 201, theirs.text);
  const listedB = await api('GET', '/api/v1/client-keys', secrets.writeB);
  t.strictSame(
    listedB.json.clientKeys.map((k: { id: string }) => k.id),
    [theirs.json.id],
    'project B lists only its own',
  );
  const listedA = await api('GET', '/api/v1/client-keys', secrets.read);
  t.notOk(listedA.text.includes(theirs.json.id), "project A does not list B's");
  const cross = await api('POST', `/api/v1/client-keys/${mine.json.id}/revoke`, secrets.writeB);
  t.equal(cross.status, 404, cross.text);
  t.equal(cross.json.detail, `Client key ${mine.json.id} does not exist in this project.`, 'told as a key that does not exist');
  const unknown = await api('POST', '/api/v1/client-keys/ck_nope/revoke', secrets.write);
  t.equal(unknown.status, 404);
  const still = await api('GET', '/api/v1/client-keys', secrets.read);
  t.equal(still.json.clientKeys.find((k: { id: string }) => k.id === mine.json.id).revokedAt, null, 'not revoked by another project');
});

t.test("a multi-environment project's key names one of its environments, within the token's limit", async (t) => {
  const none = await api('POST', '/api/v1/client-keys', secrets.multiWrite, { name: 'web', uses: ['events'] });
  t.equal(none.status, 400);
  t.equal(none.json.detail, 'environment is required on a multi-environment project: one of staging, production');
  const unknown = await api('POST', '/api/v1/client-keys', secrets.multiWrite, { name: 'web', environment: 'qa', uses: ['events'] });
  t.equal(unknown.json.detail, 'unknown environment "qa"; valid environments: staging, production');
  const single = await api('POST', '/api/v1/client-keys', secrets.write, { name: 'web', environment: 'production', uses: ['events'] });
  t.equal(single.status, 400);
  t.match(single.json.detail, /single-environment project/);
  const outside = await api('POST', '/api/v1/client-keys', secrets.stagingWrite, {
    name: 'web',
    environment: 'production',
    uses: ['events'],
  });
  t.equal(outside.status, 403, outside.text);
  t.match(outside.json, { error: 'Environment not permitted' });
  const inside = await api('POST', '/api/v1/client-keys', secrets.stagingWrite, { name: 'web', environment: 'staging', uses: ['events'] });
  t.equal(inside.status, 201, inside.text);
  t.equal(inside.json.environment, 'staging');
  const prod = await api('POST', '/api/v1/client-keys', secrets.multiWrite, { name: 'web', environment: 'production', uses: ['events'] });
  t.equal(prod.status, 201, prod.text);
  const revokeOutside = await api('POST', `/api/v1/client-keys/${prod.json.id}/revoke`, secrets.stagingWrite);
  t.equal(revokeOutside.status, 403, 'a token limited to staging cannot revoke a production key');
  const listed = await api('GET', '/api/v1/client-keys', secrets.stagingWrite);
  t.strictSame(
    listed.json.clientKeys.map((k: { id: string }) => k.id),
    [inside.json.id],
    'a token limited to staging lists the keys of staging',
  );
});

t.test('bad bodies are refused, naming every problem, and make nothing', async (t) => {
  const before = (await api('GET', '/api/v1/client-keys', secrets.read)).json.clientKeys.length;
  const cases: [unknown, RegExp][] = [
    [{ name: 'web' }, /uses is required/],
    [{ name: 'web', uses: [] }, /uses must be a non-empty array of distinct uses: events/],
    [{ name: 'web', uses: ['admin'] }, /uses/],
    [{ name: 'web', uses: ['events', 'events'] }, /distinct/],
    [{ uses: ['events'] }, /name is required/],
    [{ name: 'web', uses: ['events'], extra: 1 }, /unknown field "extra"/],
  ];
  for (const [body, detail] of cases) {
    const reply = await api('POST', '/api/v1/client-keys', secrets.write, body);
    t.equal(reply.status, 400, JSON.stringify(body));
    t.match(reply.json, { error: 'Invalid request', detail }, JSON.stringify(body));
  }
  t.equal((await api('GET', '/api/v1/client-keys', secrets.read)).json.clientKeys.length, before, 'nothing made');
});

t.test('a client key opens nothing of the Management API', async (t) => {
  const made = await api('POST', '/api/v1/client-keys', secrets.write, { name: 'browser', uses: ['events'] });
  for (const path of ['/api/v1/flags', '/api/v1/token', '/api/v1/client-keys']) {
    const reply = await api('GET', path, made.json.secret);
    t.equal(reply.status, 401, `${path}: ${reply.text}`);
  }
});

t.test('the command line makes, lists and revokes them', async (t) => {
  const run = async (args: string[]) => {
    const result = await cli(server.dataDir, args);
    t.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
    return result.json as Record<string, any>;
  };
  const made = await run(['client-key', 'create', ids.multi, '--name', 'ios app', '--uses', 'events', '--env', 'production']);
  t.match(made, { id: /^ck_/, environment: 'production', uses: ['events'], createdBy: 'console', secret: /^fwc_/ });
  const listed = await run(['client-key', 'list', ids.multi]);
  t.ok(
    listed.clientKeys.some((k: { id: string }) => k.id === made.id),
    'listed',
  );
  t.notOk(JSON.stringify(listed).includes('secret'), 'no secret listed');
  const revoked = await run(['client-key', 'revoke', made.id]);
  t.match(revoked, { id: made.id, revokedAt: Number });
  const refused = await cli(server.dataDir, ['client-key', 'create', ids.multi, '--name', 'x', '--uses', 'admin', '--env', 'production']);
  t.equal(refused.code, 1, 'an unknown use is refused');
  t.match(refused.json, { error: 'Invalid request', detail: /uses/ });
});
