// The change log (src/store/change-log.ts): what each revision changed of the relayed kinds, written in
// the transaction that makes the revision, by the embedded write path (the revision is configSeq) and by
// applyRevisions (a copy's revisions); a record written again kept as its changed fields, so a revision's
// bytes follow what changed; bounded by FLAGWIRE_CHANGE_LOG_REVISIONS and FLAGWIRE_CHANGE_LOG_BYTES;
// cleared by a full copy; read with revisionsAfter, which answers null once the log no longer reaches the
// revision asked after, and a copy that applies what it answers holds what the store holds. An older data
// file opens and logs from then on. Its PostgreSQL half is test/multinode/change-log-pg.test.ts.
import { join } from 'node:path';
import { open } from 'lmdb';
import t, { type Test } from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { kStoreLayout } from '../../src/capabilities.js';
import { runCommand } from '../../src/writer/thread/commands.js';
import { Packr } from 'msgpackr';
import { kDefaultChangeLog, type ChangeLogBounds } from '../../src/config.js';
import type { Change, LoggedChange } from '../../src/store/changes.js';
import type { StoreWriter } from '../../src/store/interfaces.js';
import { kSchemaVersion } from '../../src/store/layout.js';
import { LmdbStore } from '../../src/store/lmdb-store.js';
import { LmdbWritePath } from '../../src/store/write-path.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { getFlag } from '../../src/flags/records/flag-store.js';
import { getOrg } from '../../src/model/records/org-records.js';
import { putActivity } from '../../src/model/records/token-records.js';

const now = Date.UTC(2030, 0, 1);

/** An embedded node's store and write path, its log keeping what `bounds` say (the defaults for the rest). */
function embedded(t: Test, bounds: Partial<ChangeLogBounds> = {}): { store: LmdbStore; write<T>(fn: (w: StoreWriter) => T): Promise<T> } {
  const store = LmdbStore.open(tempDir(t), { layout: kStoreLayout, changeLog: { ...kDefaultChangeLog, ...bounds } });
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

const kinds = (changes: readonly LoggedChange[]) => changes.map((c) => c.kind);

t.test('the embedded write path logs each revision it makes, with the relayed changes of its commit', async (t) => {
  const { store, write } = embedded(t);
  const before = store.revision();
  const org = await write((w) => runCommand(w, 'orgCreate', { principal: kOperator, name: 'Acme', plan: 'teams' }, now));
  const project = await write((w) =>
    runCommand(w, 'projectCreate', { principal: kOperator, orgId: org.id, name: 'Shop', kind: 'single' }, now),
  );
  await write((w) => putActivity(w, { tokenId: 'tok_x', lastUsedAt: now, recent: [], denials: [], lastDenialMailAt: null }));
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
  t.notOk(kinds(flagChanges).includes('audit'), 'not the audit entry of the same commit: no relay is sent one');
  t.strictSame(store.revisionsAfter(before + 1), revisions!.slice(1), 'after any revision the log reaches');
  t.strictSame(store.revisionsAfter(before, 1), revisions!.slice(0, 1), 'at most `limit`, the oldest first');
  t.strictSame(store.revisionsAfter(store.revision()), [], 'nothing after the newest');
  t.equal(store.revisionsAfter(store.revision() + 1), null, 'a revision this store never reached: null');

  const [failed, kept] = await new LmdbWritePath(store).commit(() => [
    (w) => {
      runCommand(w, 'orgCreate', { principal: kOperator, name: 'Rolled back', plan: 'teams' }, now);
      throw new Error('no');
    },
    (w) => runCommand(w, 'orgCreate', { principal: kOperator, name: 'Kept', plan: 'teams' }, now),
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
  const { store, write } = embedded(t, { revisions: 3 });
  for (const name of ['a', 'b', 'c', 'd', 'e'])
    await write((w) => runCommand(w, 'orgCreate', { principal: kOperator, name, plan: 'teams' }, now));
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

t.test("revision(configSeq): an embedded store's is the configSeq given, not read again; a copy's is its own", async (t) => {
  const { store, write } = embedded(t);
  await write((w) => runCommand(w, 'orgCreate', { principal: kOperator, name: 'Acme', plan: 'teams' }, now));
  const seq = store.configSeq();
  t.ok(seq > 0);
  t.equal(store.revision(), seq, 'an embedded store: its configSeq');
  t.equal(store.revision(seq), seq);
  t.equal(store.revision(seq + 7), seq + 7, 'the number given is taken as read in the same snapshot');
  const copy = LmdbStore.open(tempDir(t), { layout: kStoreLayout });
  t.teardown(() => copy.close());
  copy.replaceAll('db_1', 4, []);
  t.equal(copy.revision(copy.configSeq()), 4, 'a copy: the revision it applied, whatever its configSeq');
  t.equal(copy.revision(), 4);
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
  t.equal(getOrg(store, 'org_1')?.name, 'Acme', 'its records are kept');
  t.match(store.source(), /^[0-9a-f-]{36}$/, 'it has an id of its own now');
  t.strictSame(store.revisionsAfter(7), [], 'nothing after its revision');
  t.equal(store.revisionsAfter(6), null, 'what came before the log is not reached');
  await path.commit(() => [(w) => runCommand(w, 'orgCreate', { principal: kOperator, name: 'Beta', plan: 'teams' }, now)]);
  t.strictSame(
    store.revisionsAfter(7)!.map((r) => r.revision),
    [8],
    'the next revision is logged',
  );
});

const packr = new Packr({ useRecords: false });

/** An org and a single project to hold flags, made through the write path. */
async function shop(write: <T>(fn: (w: StoreWriter) => T) => Promise<T>): Promise<string> {
  const org = await write((w) => runCommand(w, 'orgCreate', { principal: kOperator, name: 'Acme', plan: 'teams' }, now));
  const project = await write((w) =>
    runCommand(w, 'projectCreate', { principal: kOperator, orgId: org.id, name: 'Shop', kind: 'single' }, now),
  );
  return project.id;
}

t.test(
  "a small change to a large flag adds what changed to the log, not the flag; a copy applying it holds the store's flag",
  async (t) => {
    const { store, write } = embedded(t);
    const projectId = await shop(write);
    const body = { name: 'big', enabled: true, variants: { big: 'x'.repeat(900_000), small: 'y' }, defaultVariant: 'big' };
    const flag = await write((w) => runCommand(w, 'flagCreate', { projectId, body, principal: kOperator }, now));
    const flagBytes = packr.pack(getFlag(store, flag.id)).length;
    // A copy of what relays hold, at the store's revision: what a relay applies the log on top of.
    const copy = LmdbStore.open(tempDir(t), { layout: kStoreLayout });
    t.teardown(() => copy.close());
    const { source, revision: at, records } = store.relayedCopy();
    copy.replaceAll(source, at, records);

    const before = store.changeLogUsage();
    await write((w) =>
      runCommand(w, 'flagPatch', { flagId: flag.id, env: null, patch: { trafficPercentage: 26 }, principal: kOperator }, now + 1000),
    );
    await write((w) =>
      runCommand(w, 'flagPatch', { flagId: flag.id, env: null, patch: { enabled: false }, principal: kOperator }, now + 2000),
    );
    const after = store.changeLogUsage();
    t.equal(after.revisions, before.revisions + 2, 'two revisions logged');
    const grown = after.bytes - before.bytes;
    t.ok(grown < 1024, `two small PATCHes of a ${flagBytes}-byte flag added ${grown} bytes to the log`);
    const logged = store.revisionsAfter(at)!;
    t.match(
      logged.map((r) => r.changes),
      [[{ kind: 'patch', value: { kind: 'flag', key: flag.id } }], [{ kind: 'patch', value: { kind: 'flag', key: flag.id } }]],
      "each revision holds the flag's changed fields",
    );

    t.equal(copy.applyRevisions(logged), store.revision(), 'the copy applies them');
    const held = getFlag(copy, flag.id);
    t.strictSame(held, getFlag(store, flag.id), 'and holds the flag the store holds');
    t.equal(Buffer.compare(packr.pack(held), packr.pack(getFlag(store, flag.id))), 0, 'byte for byte, its fields in their order');
    t.strictSame(copy.revisionsAfter(at), logged, "the copy's own log holds the same changes, for a relay below it");
  },
);

t.test('the log keeps at most FLAGWIRE_CHANGE_LOG_BYTES of revisions, the newest always; past them revisionsAfter is null', async (t) => {
  const { store, write } = embedded(t, { bytes: 50_000 });
  const projectId = await shop(write);
  const create = (name: string, size: number) =>
    write((w) =>
      runCommand(
        w,
        'flagCreate',
        { projectId, body: { name, variants: { on: 'x'.repeat(size), off: 'y' }, defaultVariant: 'off' }, principal: kOperator },
        now,
      ),
    );
  for (const name of ['a', 'b', 'c', 'd']) await create(name, 20_000);
  const at = store.revision();
  const usage = store.changeLogUsage();
  t.equal(usage.revisions, 2, 'two revisions of some 20 KB each fit within 50,000 bytes; a third would not');
  t.ok(usage.bytes > 40_000 && usage.bytes <= 50_000, `${usage.bytes} bytes kept`);
  t.strictSame(
    store.revisionsAfter(at - 2)!.map((r) => r.revision),
    [at - 1, at],
    'the last two',
  );
  t.equal(store.revisionsAfter(at - 3), null, 'one more would need a revision the bound dropped: null');

  await create('e', 80_000);
  const alone = store.changeLogUsage();
  t.equal(alone.revisions, 1, 'a revision larger than the bound is kept alone');
  t.ok(alone.bytes > 80_000, `${alone.bytes} bytes`);
  t.strictSame(
    store.revisionsAfter(at)!.map((r) => r.revision),
    [at + 1],
    'a relay at the revision before it is sent it',
  );
  t.equal(store.revisionsAfter(at - 1), null);

  {
    const copy = LmdbStore.open(tempDir(t), { layout: kStoreLayout, changeLog: { ...kDefaultChangeLog, bytes: 50_000 } });
    t.teardown(() => copy.close());
    const { source, revision, records } = store.relayedCopy();
    copy.replaceAll(source, revision, records);
    t.strictSame(copy.changeLogUsage(), { revisions: 0, bytes: 0 }, 'a full copy clears the log and its count');
  }
});

t.test('a schema 12 data file (whole change sets, every kind) is migrated: its log keeps the relayed changes, counted', async (t) => {
  const dir = tempDir(t);
  const org = (id: string, name: string) => ({ id, name, plan: 'teams', trialEndsAt: null, standing: 'good', createdAt: now });
  const audit = { seq: 1, projectId: 'prj_1', action: 'flag.create', at: now };
  const raw = open({ path: join(dir, 'flagwire.mdb'), maxDbs: 32 });
  const meta = raw.openDB({ name: 'meta' });
  meta.putSync('schemaVersion', 12);
  meta.putSync('configSeq', 3);
  meta.putSync('fileId', '0b7c3f4e-0000-4000-8000-000000000000');
  meta.putSync(
    ['changeLog', 2],
    [
      { kind: 'org', value: org('org_1', 'Acme') },
      { kind: 'audit', value: audit },
    ],
  );
  meta.putSync(['changeLog', 3], [{ kind: 'org', value: org('org_2', 'Beta') }]);
  const orgs = raw.openDB({ name: 'orgs' });
  orgs.putSync('org_1', org('org_1', 'Acme'));
  orgs.putSync('org_2', org('org_2', 'Beta'));
  await raw.close();

  const reader = LmdbStore.open(dir, { readOnly: true });
  t.equal(reader.schemaVersion(), 12);
  t.equal(reader.revisionsAfter(1), null, 'read-only, before it is migrated, the older entries are not relayed: null (a copy)');
  await reader.close();

  const store = LmdbStore.open(dir, { layout: kStoreLayout });
  const path = new LmdbWritePath(store);
  t.teardown(() => path.close());
  t.equal(store.schemaVersion(), kSchemaVersion);
  const expected = [
    { revision: 2, changes: [{ kind: 'org', value: org('org_1', 'Acme') }] },
    { revision: 3, changes: [{ kind: 'org', value: org('org_2', 'Beta') }] },
  ];
  t.strictSame(store.revisionsAfter(1), expected, 'each revision kept, with its relayed changes only');
  t.strictSame(
    store.changeLogUsage(),
    { revisions: 2, bytes: expected.reduce((sum, r) => sum + packr.pack(r.changes).length, 0) },
    'their bytes counted',
  );
  await path.commit(() => [(w) => runCommand(w, 'orgCreate', { principal: kOperator, name: 'Gamma', plan: 'teams' }, now)]);
  t.strictSame(
    store.revisionsAfter(1)!.map((r) => r.revision),
    [2, 3, 4],
    'and the next revision is logged after them',
  );
});
