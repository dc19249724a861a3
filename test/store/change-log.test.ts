// The change log (src/store/change-log.ts): each revision's change set, written in the transaction that
// makes the revision, by the embedded write path (the revision is configSeq) and by applyRevisions (a
// copy's revisions); bounded by FLAGWIRE_CHANGE_LOG_REVISIONS; cleared by a full copy; read with
// revisionsAfter, which answers null once the log no longer reaches the revision asked after. An older
// data file opens and logs from then on. Its PostgreSQL half is test/multinode/change-log-pg.test.ts.
import { join } from 'node:path';
import { open } from 'lmdb';
import t, { type Test } from 'tap';
import { kOperator } from '../../src/audit/audit-actor.js';
import { kStoreLayout } from '../../src/capabilities.js';
import { runCommand } from '../../src/command-runner/commands.js';
import type { Change } from '../../src/store/changes.js';
import type { StoreWriter } from '../../src/store/interfaces.js';
import { kSchemaVersion } from '../../src/store/layout.js';
import { LmdbStore } from '../../src/store/lmdb-store.js';
import { LmdbWritePath } from '../../src/store/write-path.js';
import { tempDir } from '../helpers/scratch-dir.js';

const now = Date.UTC(2030, 0, 1);

/** An embedded node's store and write path, its log keeping `keep` revisions. */
function embedded(t: Test, keep?: number): { store: LmdbStore; write<T>(fn: (w: StoreWriter) => T): Promise<T> } {
  const store = LmdbStore.open(tempDir(t), { layout: kStoreLayout, changeLogRevisions: keep });
  const path = new LmdbWritePath(store);
  t.teardown(() => path.close());
  return {
    store,
    async write(fn) {
      const [settled] = await path.commit(() => [fn]);
      if (!settled!.ok) throw settled!.error;
      return settled!.value;
    },
  };
}

const kinds = (changes: readonly Change[]) => changes.map((c) => c.kind);

t.test('the embedded write path logs each revision it makes, with every change of its commit', async (t) => {
  const { store, write } = embedded(t);
  const before = store.revision();
  const org = await write((w) => runCommand(w, 'orgCreate', { name: 'Acme', plan: 'teams' }, now));
  const project = await write((w) => runCommand(w, 'projectCreate', { orgId: org.id, name: 'Shop', kind: 'single' }, now));
  await write((w) => w.putActivity({ tokenId: 'tok_x', lastUsedAt: now, recent: [], denials: [], lastDenialMailAt: null }));
  const flag = await write((w) =>
    runCommand(w, 'flagCreate', { projectId: project.id, body: { name: 'checkout', enabled: true }, principal: kOperator }, now),
  );
  const revisions = store.revisionsAfter(before);
  t.ok(revisions !== null);
  t.strictSame(
    revisions!.map((r) => r.revision),
    [before + 1, before + 2, before + 3],
    'one revision per commit that moved the revision (configSeq); the activity alone made none',
  );
  t.equal(store.revision(), before + 3);
  t.strictSame(kinds(revisions![0]!.changes), ['org'], "the org's commit");
  t.ok(kinds(revisions![1]!.changes).includes('project'), "the project's commit");
  const flagChanges = revisions![2]!.changes;
  t.ok(
    flagChanges.some((c) => c.kind === 'flag' && (c.value as { id: string }).id === flag.id),
    'the flag, as it was written',
  );
  t.ok(kinds(flagChanges).includes('audit'), 'beside the audit entry of the same commit: every kind is logged');
  t.strictSame(store.revisionsAfter(before + 1), revisions!.slice(1), 'after any revision the log reaches');
  t.strictSame(store.revisionsAfter(before, 1), revisions!.slice(0, 1), 'at most `limit`, the oldest first');
  t.strictSame(store.revisionsAfter(store.revision()), [], 'nothing after the newest');
  t.equal(store.revisionsAfter(store.revision() + 1), null, 'a revision this store never reached: null');

  const [failed, kept] = await new LmdbWritePath(store).commit(() => [
    (w) => {
      runCommand(w, 'orgCreate', { name: 'Rolled back', plan: 'teams' }, now);
      throw new Error('no');
    },
    (w) => runCommand(w, 'orgCreate', { name: 'Kept', plan: 'teams' }, now),
  ]);
  t.notOk(failed!.ok);
  t.ok(kept!.ok);
  const [last] = store.revisionsAfter(before + 3)!;
  t.strictSame(
    last!.changes.map((c) => (c.value as { name: string }).name),
    ['Kept'],
    'a function that threw in a group commit leaves nothing of its own in the logged change set',
  );

  const reader = LmdbStore.open(join(store.path, '..'), { readOnly: true });
  t.teardown(() => reader.close());
  t.strictSame(reader.revisionsAfter(before), store.revisionsAfter(before), 'another open reads the same log from the file');
});

t.test('the log keeps the last FLAGWIRE_CHANGE_LOG_REVISIONS revisions; past them revisionsAfter is null', async (t) => {
  const { store, write } = embedded(t, 3);
  for (const name of ['a', 'b', 'c', 'd', 'e']) await write((w) => runCommand(w, 'orgCreate', { name, plan: 'teams' }, now));
  const at = store.revision();
  t.strictSame(
    store.revisionsAfter(at - 3)!.map((r) => r.revision),
    [at - 2, at - 1, at],
    'the last three',
  );
  t.equal(store.revisionsAfter(at - 4), null, 'one more would need a revision the log dropped: null (a gap)');
  t.equal(store.revisionsAfter(0), null);
});

t.test("a copy's log holds the revisions applied to it, empty ones included; a full copy clears it", async (t) => {
  const copy = LmdbStore.open(tempDir(t), { layout: kStoreLayout });
  t.teardown(() => copy.close());
  const org = { id: 'org_1', name: 'Acme', plan: 'teams' as const, trialEndsAt: null, standing: 'good' as const, createdAt: now };
  const first: Change[] = [{ kind: 'org', value: org }];
  copy.replaceAll('db_1', 4, []);
  t.strictSame(copy.revisionsAfter(4), [], 'a copy at its revision: nothing after');
  copy.applyRevisions([
    { revision: 5, changes: first },
    { revision: 6, changes: [] },
  ]);
  t.strictSame(
    copy.revisionsAfter(4),
    [
      { revision: 5, changes: first },
      { revision: 6, changes: [] },
    ],
    'each revision applied, as it came, the empty one too',
  );
  t.equal(copy.source(), 'db_1', "a copy's source is what it follows");
  copy.applyRevisions([{ revision: 6, changes: first }]);
  t.equal(copy.revisionsAfter(4)!.length, 2, 'a revision already applied is not logged again');

  copy.replaceAll('db_1', 9, first);
  t.equal(copy.revisionsAfter(4), null, 'a full copy clears the log: what came before it is not reached');
  t.strictSame(copy.revisionsAfter(9), [], 'and it starts again at the copy');
  copy.applyRevisions([{ revision: 10, changes: [] }]);
  t.strictSame(copy.revisionsAfter(9), [{ revision: 10, changes: [] }]);
});

t.test('an embedded store names its own file as its source, the same after a reopen', async (t) => {
  const dir = tempDir(t);
  const store = LmdbStore.open(dir, { layout: kStoreLayout });
  const source = store.source();
  await store.close();
  t.match(source, /^[0-9a-f-]{36}$/);
  const again = LmdbStore.open(dir, { layout: kStoreLayout });
  t.teardown(() => again.close());
  t.equal(again.source(), source);
  t.not(LmdbStore.open(tempDir(t), { layout: kStoreLayout }).source(), source, 'another file, another source');
});

t.test('a schema 9 data file (no change log) opens, is migrated, and logs from then on', async (t) => {
  const dir = tempDir(t);
  const raw = open({ path: join(dir, 'flagwire.mdb'), maxDbs: 32 });
  const meta = raw.openDB<unknown, string>({ name: 'meta' });
  meta.putSync('schemaVersion', 9);
  meta.putSync('configSeq', 7);
  raw
    .openDB({ name: 'orgs' })
    .putSync('org_1', { id: 'org_1', name: 'Acme', plan: 'teams', trialEndsAt: null, standing: 'good', createdAt: now });
  await raw.close();

  const reader = LmdbStore.open(dir, { readOnly: true });
  t.equal(reader.schemaVersion(), 9, 'a read-only open reads it as it is');
  t.equal(reader.revisionsAfter(6), null, 'its log reaches nothing');
  await reader.close();

  const store = LmdbStore.open(dir, { layout: kStoreLayout });
  const path = new LmdbWritePath(store);
  t.teardown(() => path.close());
  t.equal(store.schemaVersion(), kSchemaVersion);
  t.equal(store.getOrg('org_1')?.name, 'Acme', 'its records are kept');
  t.match(store.source(), /^[0-9a-f-]{36}$/, 'it has an id of its own now');
  t.strictSame(store.revisionsAfter(7), [], 'nothing after its revision');
  t.equal(store.revisionsAfter(6), null, 'what came before the log is not reached');
  await path.commit(() => [(w) => runCommand(w, 'orgCreate', { name: 'Beta', plan: 'teams' }, now)]);
  t.strictSame(
    store.revisionsAfter(7)!.map((r) => r.revision),
    [8],
    'the next revision is logged',
  );
});
