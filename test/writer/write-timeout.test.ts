// The writer client's write timeout against a real second process holding LMDB's write lock
// (test/helpers/lock-holder.ts): a command not claimed by the writer within the bound is refused with
// Storage busy and never applied, even once the lock comes free; a command the writer claimed is
// committed and acknowledged. The race is driven on purpose: commands are sent 2 ms apart and the lock
// is let go while their deadlines pass, so some are cancelled just before the writer could claim them
// and some are claimed just before their deadline. Every outcome must match the disk.
import { kOrgCommands } from '../../src/orgs/command-table.js';
import t from 'tap';
import { pino } from 'pino';
import { Clock } from '../../src/clock.js';
import { FlagwireError } from '../../src/errors.js';
import { Store } from '../helpers/store.js';
import { WriterClient } from '../../src/writer/client.js';
import { holdLock } from '../helpers/hold-lock.js';
import { tempDataDir } from '../helpers/server.js';
import { kOperator } from '../../src/actor/audit-actor.js';
import { listOrgs } from '../../src/model/records/org-records.js';

const kTimeoutMs = 300;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Outcome = 'ok' | 'busy' | string;

t.test('a write not claimed by its deadline is refused and never applied; one claimed in time is committed', async (t) => {
  const dataDir = tempDataDir();
  await Store.open(dataDir).close();
  const writer = WriterClient.create(dataDir, Clock.create(), kTimeoutMs, pino({ level: 'silent' }));
  t.teardown(() => writer.close());
  // The thread's start (module loading, opening the store) is not what is measured here.
  await writer.idle();

  const outcomes = new Map<string, Outcome>();
  const answeredAfter: number[] = [];
  for (let round = 0; round < 6; round++) {
    const holder = await holdLock(dataDir);
    t.teardown(() => void holder.child.kill('SIGKILL'));
    const firstSentAt = performance.now();
    const calls: Promise<void>[] = [];
    for (let i = 0; i < 60; i++) {
      const name = `org ${round}-${i}`;
      const sentAt = performance.now();
      calls.push(
        writer.call(kOrgCommands.orgCreate, { principal: kOperator, name, plan: 'teams' }).then(
          () => void outcomes.set(name, 'ok'),
          (err: unknown) => {
            const code = err instanceof FlagwireError ? err.code : String(err);
            outcomes.set(name, code === 'STORE_BUSY' ? 'busy' : code);
            if (code === 'STORE_BUSY') answeredAfter.push(performance.now() - sentAt);
          },
        ),
      );
      await sleep(2);
    }
    // Let go while the deadlines pass: those of the first commands have passed, the last ones' not yet.
    const spread = performance.now() - firstSentAt;
    await sleep(Math.max(0, firstSentAt + kTimeoutMs + spread / 2 - performance.now()));
    await holder.release();
    await Promise.all(calls);
  }
  // Every command sent before is committed or skipped now.
  await writer.idle();

  const store = Store.open(dataDir, { readOnly: true });
  t.teardown(() => store.close());
  const onDisk = new Set(listOrgs(store).map((o) => o.name));
  const counts = { ok: 0, busy: 0 };
  const wrong: string[] = [];
  for (const [name, outcome] of outcomes) {
    if (outcome === 'ok') counts.ok++;
    else if (outcome === 'busy') counts.busy++;
    else wrong.push(`${name}: refused with ${outcome}`);
    if (outcome === 'ok' && !onDisk.has(name)) wrong.push(`${name}: acknowledged, not on disk`);
    if (outcome === 'busy' && onDisk.has(name)) wrong.push(`${name}: refused as busy, yet applied`);
  }
  t.comment(
    `${counts.ok} committed, ${counts.busy} refused as busy; refusals answered ${Math.min(...answeredAfter).toFixed(0)}-${Math.max(...answeredAfter).toFixed(0)} ms after sending`,
  );
  t.same(wrong, [], 'every answer matches the disk');
  t.equal(outcomes.size, 6 * 60);
  t.ok(counts.busy > 0 && counts.ok > 0, 'the lock was let go while deadlines passed: both outcomes occurred');
  // Refused at the deadline, not when the lock came free (timers run late on a loaded machine, never early).
  t.ok(Math.min(...answeredAfter) >= kTimeoutMs - 2, 'no refusal before the deadline');
});

t.test('busy while a change waits over a second for the lock; free again after', async (t) => {
  const dataDir = tempDataDir();
  await Store.open(dataDir).close();
  const writer = WriterClient.create(dataDir, Clock.create(), kTimeoutMs, pino({ level: 'silent' }));
  t.teardown(() => writer.close());
  // The thread's start (module loading, opening the store) is not what is measured here.
  await writer.idle();
  t.equal(writer.busy, false);
  const holder = await holdLock(dataDir);
  t.teardown(() => void holder.child.kill('SIGKILL'));
  const refused = writer
    .call(kOrgCommands.orgCreate, { principal: kOperator, name: 'refused', plan: 'teams' })
    .catch((err: unknown) => err);
  t.match(await refused, { code: 'STORE_BUSY' });
  await sleep(1200);
  t.equal(writer.busy, true, 'the refused command still waits in the writer: busy');
  await holder.release();
  await writer.idle();
  t.equal(writer.busy, false, 'free once the lock is let go');
  const store = Store.open(dataDir, { readOnly: true });
  t.teardown(() => store.close());
  t.notOk(
    listOrgs(store).some((o) => o.name === 'refused'),
    'the refused command was skipped',
  );
  t.ok(await writer.call(kOrgCommands.orgCreate, { principal: kOperator, name: 'after', plan: 'teams' }), 'writes work again');
});
