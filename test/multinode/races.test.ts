// Writes arriving on different nodes at once keep every rule, as on one node: the revision lock
// serialises the writers, and each runs its commands on a copy brought to the locked revision.
import t from 'tap';
import { kStoreLayout } from '../../src/capabilities.js';
import { call } from '../helpers/http.js';
import { cli } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { sharedPostgres } from '../helpers/postgres.js';
import { openForCli } from '../../src/store/open-store.js';
import { runCommand } from '../../src/writer/thread/commands.js';
import type { TestServer } from '../helpers/server.js';
import { createTokenWithConsole, seedInProcess, startReadyNodes } from './support.js';
import { principalOf } from '../../src/actor/audit-actor.js';
import { foldedName } from '../../src/model/names.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());
const kRounds = 10;

t.test('two nodes racing', async (t) => {
  const url = await pg.newDatabase();
  const seeded = await seedInProcess(t, url);
  const [a, b] = (await startReadyNodes(t, url, 2)) as [TestServer, TestServer];

  await t.test('one name: of two nodes creating it at once, exactly one succeeds', async (t) => {
    for (let i = 0; i < kRounds; i++) {
      const body = { name: `race-${i}` };
      const replies = await Promise.all([a, b].map((n) => call(n.baseUrl, 'POST', '/api/v1/flags', { token: seeded.secret, body })));
      const statuses = replies.map((r) => r.status).sort();
      t.strictSame(statuses, [201, 400], `round ${i}: one created, one refused`);
      t.match(replies.find((r) => r.status === 400)!.json.detail, /already exists/);
    }
    const listed = await call(a.baseUrl, 'GET', '/api/v1/flags', { token: seeded.secret });
    const names = (listed.json.flags as { name: string }[]).map((f) => f.name).filter((n) => n.startsWith('race-'));
    t.equal(names.length, kRounds, 'each name once');
  });

  await t.test('the same PATCH on two nodes at once: both 200, one change, one audit entry', async (t) => {
    for (let i = 0; i < kRounds; i++) {
      const body = { trafficPercentage: i + 1 };
      const replies = await Promise.all(
        [a, b].map((n) => call(n.baseUrl, 'PATCH', `/api/v1/flags/${seeded.flagId}`, { token: seeded.secret, body })),
      );
      t.strictSame(
        replies.map((r) => r.status),
        [200, 200],
        `round ${i}`,
      );
    }
    const audit = await cli(tempDir(t), ['audit', seeded.projectId, '--limit', '1000', '--database', url]);
    const patches = (audit.json.entries as { action: string; flagId: string }[]).filter(
      (e) => e.action === 'flag.patch' && e.flagId === seeded.flagId,
    );
    t.equal(patches.length, kRounds, 'one audit entry per distinct PATCH');
  });

  await t.test('the 50th token: of two console commands on different data dirs, exactly one gets it', async (t) => {
    // 48 more tokens (the seed made one), through the same write path, 8 to a transaction: PostgreSQL ends
    // a write idle for 5 s between statements (kIdleInWriteMs), and 48 commands rehearsed in one took
    // longer than that on a 2-core machine at a load of 20.
    const { writes } = await openForCli(tempDir(t), kStoreLayout, url);
    const made = [];
    for (let batch = 0; batch < 6; batch++) {
      made.push(
        ...(await writes.commit(() =>
          Array.from(
            { length: 8 },
            (_, i) => (w) =>
              runCommand(
                w,
                'tokenCreate',
                { projectId: seeded.projectId, principal: principalOf(seeded.ownerId), name: `bulk-${batch * 8 + i}`, permission: 'read' },
                Date.now(),
              ),
          ),
        )),
      );
    }
    await writes.close();
    t.ok(made.length === 48 && made.every((r) => r.ok), '49 active tokens');
    const race = await Promise.all([0, 1].map((i) => createTokenWithConsole(t, url, seeded, `last-${i}`, 'read')));
    t.strictSame(race.map((r) => r.code).sort(), [0, 1], 'one made, one refused');
    t.match(race.find((r) => r.code === 1)!.json.detail, /already has 50 active tokens/);
    const listed = await cli(tempDir(t), ['token', 'list', seeded.projectId, '--database', url]);
    t.equal(listed.json.tokens.length, 50);
  });

  await t.test(
    'one organisation name, as people tell names apart: of two console commands on different data dirs, exactly one makes it',
    async (t) => {
      // Each command's copy files the other's organisation under its name as it catches up (the org kind's lookup).
      const race = await Promise.all(
        ['Race Team', ' race team'].map((name) =>
          cli(tempDir(t), ['org', 'create', '--name', name, '--database', url], { inProcess: true }),
        ),
      );
      t.strictSame(race.map((r) => r.code).sort(), [0, 1], 'one made, one refused');
      t.match(race.find((r) => r.code === 1)!.json.detail, /organisation names are unique, ignoring case/);
      const listed = await cli(tempDir(t), ['org', 'list', '--database', url], { inProcess: true });
      t.equal((listed.json.orgs as { name: string }[]).filter((o) => foldedName(o.name) === 'race team').length, 1);
    },
  );
});
