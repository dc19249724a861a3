// A Management API write is authorised when it is applied, not only when it arrives (issue 23, item 8).
// A real console command is held inside its write transaction, holding the data file's write lock;
// writes sent meanwhile pass the request's check and queue in the writer behind it. The held command
// is what takes their authority away (a revocation, a plan below Teams), or the clock passes the
// token's expiry while they wait. Once the console commits, each queued write gets exactly the answer
// the same request sent afresh gets (status and envelope, byte for byte) and nothing of it is on disk.
import t from 'tap';
import type { TestContext } from '../helpers/cli.js';
import { freshRead } from '../helpers/fresh-read.js';
import { holdConsole } from '../helpers/held-console.js';
import { call, scrapeMetrics, type Reply } from '../helpers/http.js';
import { startTestServer, tempDataDir, type TestServer } from '../helpers/server.js';
import { advanceClock } from '../helpers/test-hooks.js';
import { buildWorld } from '../helpers/world.js';
import { principalOf } from '../../src/actor/audit-actor.js';

const kDaySeconds = 24 * 3600;

/** Resolves once `count` changes wait for the writer: each passed the request's own checks. */
async function queued(server: TestServer, count: number): Promise<void> {
  for (const deadline = Date.now() + 60_000; ; ) {
    if (((await scrapeMetrics(server.baseUrl)).get('flagwire_writer_queue_depth') ?? 0) >= count) return;
    if (Date.now() > deadline) throw new Error(`${count} writes not queued within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

t.test('a write queued behind a held lock is refused if its token lost its authority meanwhile', async (t) => {
  const dataDir = tempDataDir();
  const world = buildWorld(dataDir);
  t.teardown(() => world.store.close());
  const { ids, secrets, tokenIds } = world;
  const expiring = world.run('tokenCreate', {
    projectId: ids.single,
    principal: principalOf(ids.editor),
    name: 'expiring',
    permission: 'write',
    expires: '30d',
  });
  // A deadline far beyond the test's waits: the queued writes are answered by the writer, never refused as Storage busy.
  const server = await startTestServer({ dataDir, env: { FLAGWIRE_TEST_HOOKS: '1', FLAGWIRE_WRITE_TIMEOUT_MS: '120000' } });
  t.teardown(() => server.stop());
  const patch = (secret: string, path: string, body: unknown) => call(server.baseUrl, 'PATCH', path, { token: secret, body });
  const create = (secret: string, name: string) =>
    call(server.baseUrl, 'POST', '/api/v1/flags', { token: secret, body: { name, enabled: true } });
  const same = (t: TestContext, answer: Reply, fresh: Reply, status: number, title: string, what: string) => {
    t.equal(answer.status, status, `${what}: ${answer.text}`);
    t.equal(answer.json?.error, title, what);
    t.equal(answer.text, fresh.text, `${what}: the envelope a request sent now gets`);
    t.equal(fresh.status, status);
  };

  const before = await freshRead(dataDir);
  const single = `/api/v1/flags/${ids.flag}`;
  const staging = `/api/v1/flags/${ids.groupFlag}?env=staging`;
  t.equal((await patch(secrets.write, single, { trafficPercentage: 40 })).status, 200, 'the token writes before');

  await t.test('revoked by a console command that held the lock', async (t) => {
    const held = await holdConsole(t, ['token', 'revoke', tokenIds.write!, '--as', ids.editor, '--data', dataDir]);
    const patched = patch(secrets.write, single, { trafficPercentage: 77 });
    const created = create(secrets.write, 'made-after-revocation');
    await queued(server, 2);
    const revocation = await held.release();
    t.equal(revocation.code, 0, `the revocation committed: ${revocation.stdout}`);
    same(t, await patched, await patch(secrets.write, single, { trafficPercentage: 77 }), 401, 'Token revoked', 'the queued PATCH');
    same(t, await created, await create(secrets.write, 'made-after-revocation'), 401, 'Token revoked', 'the queued POST');
  });

  await t.test('expired while it waited', async (t) => {
    const held = await holdConsole(t, ['flag', 'tags', ids.flag2, 'held', '--data', dataDir]);
    const patched = patch(expiring.secret, single, { trafficPercentage: 78 });
    const created = create(expiring.secret, 'made-after-expiry');
    await queued(server, 2);
    await advanceClock(server, 31 * kDaySeconds);
    t.equal((await held.release()).code, 0);
    same(t, await patched, await patch(expiring.secret, single, { trafficPercentage: 78 }), 401, 'Token expired', 'the queued PATCH');
    same(t, await created, await create(expiring.secret, 'made-after-expiry'), 401, 'Token expired', 'the queued POST');
  });

  await t.test('its organisation moved below Teams by a console command that held the lock', async (t) => {
    const held = await holdConsole(t, ['org', 'update', ids.orgA, '--plan', 'free', '--data', dataDir]);
    const patched = patch(secrets.multiWrite, staging, { enabled: false });
    const created = call(server.baseUrl, 'POST', '/api/v1/flags', { token: secrets.multiWrite, body: { name: 'made-after-downgrade' } });
    await queued(server, 2);
    t.equal((await held.release()).code, 0);
    same(
      t,
      await patched,
      await patch(secrets.multiWrite, staging, { enabled: false }),
      402,
      'Plan does not include the Management API',
      'the queued PATCH',
    );
    const fresh = await call(server.baseUrl, 'POST', '/api/v1/flags', {
      token: secrets.multiWrite,
      body: { name: 'made-after-downgrade' },
    });
    same(t, await created, fresh, 402, 'Plan does not include the Management API', 'the queued POST');
  });

  // Nothing refused is on disk: flags as they were (but the 40 and the console's tags), no new flag,
  // and no audit entry from either token after the first PATCH.
  const after = await freshRead(dataDir);
  const traffic = (flagId: string) => {
    const flag = after.getFlag(flagId);
    return flag?.kind === 'flag' ? flag.state.trafficPercentage : undefined;
  };
  t.equal(traffic(ids.flag), 40, 'the queued PATCHes were not applied');
  t.strictSame(after.getFlag(ids.groupFlag), before.getFlag(ids.groupFlag), 'the group flag is unchanged');
  t.same(
    [...after.listFlags(ids.single), ...after.listFlags(ids.multi)].map((f) => f.name).filter((n) => n.startsWith('made-after')),
    [],
    'no queued create was applied',
  );
  const tokenEntries = [ids.single, ids.multi]
    .flatMap((p) => after.listAudit(p, { limit: 1000, before: null }))
    .filter((e) => e.actor.startsWith('token:'));
  t.equal(tokenEntries.length, 1, `only the PATCH made before is audited: ${JSON.stringify(tokenEntries)}`);
});
