// Data dirs of older schemas (src/store/layout.ts kSchemaVersion): each read as it is by a read-only
// open, and migrated when opened for writing, its records read back as this Flagwire keeps them.
import { join } from 'node:path';
import { open } from 'lmdb';
import t from 'tap';
import type { User } from '../../src/model/accounts.js';
import type { MailMessage } from '../../src/model/mail.js';
import { kSchemaVersion } from '../../src/store/layout.js';
import { Store } from '../helpers/store.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { kEveryChange } from '../helpers/store-pages.js';
import {
  getDelivery,
  getOutboxUsage,
  getPayload,
  listDueDeliveries,
  scanDue,
  listPayloadDeliveries,
  listPayloadSeqs,
  listWebhooks,
  putWebhook,
} from '../../src/webhooks/records.js';
import {
  getSchedule,
  listDueSchedules,
  listFlagRollouts,
  listFlagSchedules,
  listRollouts,
  listSchedules,
  pendingSchedules,
  putSchedule,
} from '../../src/release-plans/records.js';
import { deleteFlag, findFlagByName, getFlag, getUsage, putFlag, putUsage } from '../../src/flags/records/flag-store.js';
import { findUserByEmail } from '../../src/model/records/org-records.js';
import { listDueMail, listMail } from '../../src/model/records/mail-records.js';
import {
  deleteSession,
  getCredential,
  getSession,
  listUserSessions,
  putCredential,
  putSession,
} from '../../src/model/records/session-records.js';

const at = Date.UTC(2030, 0, 1);

const user: User = { id: 'usr_1', email: 'Olive@Acme.test', name: 'Olive', createdAt: at };
const mail: Omit<MailMessage, 'seq'> = {
  at,
  to: 'olive@acme.test',
  subject: 'Refused',
  text: 'Line 1\nLine 2',
  sentAt: null,
  attempts: 0,
  nextAttemptAt: at,
  lastError: null,
  failedAt: null,
};

t.test('a schema 1 data dir (no index of mail to send) is migrated when opened for writing', async (t) => {
  const dir = tempDir(t, 'flagwire-store-');
  // What Flagwire wrote before the index: meta and the mail database only, schema 1.
  const raw = open({ path: join(dir, 'flagwire.mdb'), maxDbs: 16 });
  raw.openDB({ name: 'meta' }).putSync('schemaVersion', 1);
  const rawMail = raw.openDB<MailMessage, number>({ name: 'mail' });
  rawMail.putSync(1, { ...mail, seq: 1, sentAt: at + 1, attempts: 1 });
  rawMail.putSync(2, { ...mail, seq: 2, to: 'pending@acme.test', attempts: 3, nextAttemptAt: at + 5 });
  rawMail.putSync(3, { ...mail, seq: 3, failedAt: at + 2, attempts: 12 });
  await raw.close();

  const reader = Store.open(dir, { readOnly: true });
  t.equal(reader.schemaVersion(), 1, 'a read-only open reads it as it is');
  t.equal(listMail(reader).length, 3);
  await reader.close();

  const store = Store.open(dir);
  t.teardown(() => store.close());
  t.equal(store.schemaVersion(), kSchemaVersion);
  t.equal(kSchemaVersion, 20);
  t.strictSame(
    listDueMail(store, at + 5, 10).map((m) => m.seq),
    [2],
    'the pending message is indexed, sent and given-up ones are not',
  );
  t.equal(listMail(store).length, 3);
});

t.test('a schema 2 data dir (no usage database) reads as never evaluated, and is migrated when opened for writing', async (t) => {
  const dir = tempDir(t, 'flagwire-store-');
  const raw = open({ path: join(dir, 'flagwire.mdb'), maxDbs: 16 });
  raw.openDB({ name: 'meta' }).putSync('schemaVersion', 2);
  await raw.close();

  const reader = Store.open(dir, { readOnly: true });
  t.equal(reader.schemaVersion(), 2, 'a read-only open reads it as it is');
  t.equal(getUsage(reader, 'flg_any'), undefined);
  await reader.close();

  const store = Store.open(dir);
  t.teardown(() => store.close());
  t.equal(store.schemaVersion(), kSchemaVersion);
  const seq = store.configSeq();
  store.transact((w) => putUsage(w, { flagId: 'flg_a', evaluations: 2, lastEvaluatedAt: at }));
  t.strictSame(getUsage(store, 'flg_a'), { flagId: 'flg_a', evaluations: 2, lastEvaluatedAt: at });
  t.equal(store.configSeq(), seq, 'a usage write does not move configSeq');
});

t.test('a schema 3 data dir (no auth database) reads as no passwords or sessions, and is migrated when opened for writing', async (t) => {
  const dir = tempDir(t, 'flagwire-store-');
  const raw = open({ path: join(dir, 'flagwire.mdb'), maxDbs: 16 });
  raw.openDB({ name: 'meta' }).putSync('schemaVersion', 3);
  raw.openDB({ name: 'users' }).putSync(user.id, user);
  await raw.close();

  const reader = Store.open(dir, { readOnly: true });
  t.equal(reader.schemaVersion(), 3, 'a read-only open reads it as it is');
  t.strictSame(findUserByEmail(reader, 'OLIVE@acme.test'), user, 'without the e-mail index, the lookup scans');
  t.equal(getCredential(reader, 'usr_1'), undefined);
  t.equal(getSession(reader, 'ab'.repeat(32)), undefined);
  t.same(listUserSessions(reader, 'usr_1'), []);
  await reader.close();

  const store = Store.open(dir);
  t.teardown(() => store.close());
  t.equal(store.schemaVersion(), kSchemaVersion);
  t.strictSame(findUserByEmail(store, 'olive@ACME.test'), user, "the migration indexed the existing users' addresses");
  const seq = store.configSeq();
  const session = { idHash: 'cd'.repeat(32), userId: 'usr_1', csrfToken: 'csrf', createdAt: at, expiresAt: at + 1 };
  store.transact((w) => {
    putCredential(w, { userId: 'usr_1', passwordHash: 'scrypt$2$1$1$AA==$AA==', updatedAt: at });
    putSession(w, session);
    putSession(w, { ...session, idHash: 'ef'.repeat(32), userId: 'usr_2' });
  });
  t.strictSame(getCredential(store, 'usr_1'), { userId: 'usr_1', passwordHash: 'scrypt$2$1$1$AA==$AA==', updatedAt: at });
  t.strictSame(getSession(store, session.idHash), session);
  t.strictSame(listUserSessions(store, 'usr_1'), [session], "only the user's own sessions");
  t.equal(store.configSeq(), seq, 'passwords and sessions do not move configSeq');
  store.transact((w) => deleteSession(w, session));
  t.equal(getSession(store, session.idHash), undefined);
  t.same(listUserSessions(store, 'usr_1'), [], 'the index entry goes with it');
});

t.test('a schema 4 data dir (no index of flag names) finds flags by name, and is migrated when opened for writing', async (t) => {
  const dir = tempDir(t, 'flagwire-store-');
  const flag = {
    id: 'flg_1',
    projectId: 'prj_1',
    name: 'checkout',
    kind: 'flag' as const,
    description: '',
    tags: [],
    cohorts: [],
    createdAt: at,
    updatedAt: at,
    state: { enabled: true, trafficPercentage: 100, audienceId: null },
  };
  const raw = open({ path: join(dir, 'flagwire.mdb'), maxDbs: 16 });
  raw.openDB({ name: 'meta' }).putSync('schemaVersion', 4);
  raw.openDB({ name: 'flags' }).putSync(flag.id, flag);
  raw.openDB({ name: 'projectIndex' }).putSync([flag.projectId, 'f', flag.id], null);
  await raw.close();

  const reader = Store.open(dir, { readOnly: true });
  t.equal(reader.schemaVersion(), 4, 'a read-only open reads it as it is');
  t.strictSame(findFlagByName(reader, 'prj_1', 'checkout'), flag, 'without the index, the lookup scans');
  await reader.close();

  const store = Store.open(dir);
  t.teardown(() => store.close());
  t.equal(store.schemaVersion(), kSchemaVersion);
  t.strictSame(findFlagByName(store, 'prj_1', 'checkout'), flag, "the migration indexed the existing flags' names");
  store.transact((w) => putFlag(w, { ...flag, name: 'checkout-v2', updatedAt: at + 1 }));
  t.equal(findFlagByName(store, 'prj_1', 'checkout'), undefined, 'a rename moves the entry');
  t.equal(findFlagByName(store, 'prj_1', 'checkout-v2')?.id, 'flg_1');
  t.equal(findFlagByName(store, 'prj_2', 'checkout-v2'), undefined, 'names are per project');
  store.transact((w) => deleteFlag(w, getFlag(store, 'flg_1')!));
  t.equal(findFlagByName(store, 'prj_1', 'checkout-v2'), undefined, 'a deleted flag is found no more');
  t.equal(findFlagByName(store, 'prj_1', 'x'.repeat(5000)), undefined, 'a name longer than any key is no flag');
});

t.test('a schema 5 data dir (no plans database) reads as no scheduled changes, and is migrated when opened for writing', async (t) => {
  const dir = tempDir(t, 'flagwire-store-');
  const raw = open({ path: join(dir, 'flagwire.mdb'), maxDbs: 16 });
  raw.openDB({ name: 'meta' }).putSync('schemaVersion', 5);
  await raw.close();

  const reader = Store.open(dir, { readOnly: true });
  t.equal(reader.schemaVersion(), 5, 'a read-only open reads it as it is');
  t.same(listSchedules(reader, 'prj_1', kEveryChange).items, []);
  t.same(listDueSchedules(reader, Date.now(), 10), []);
  t.equal(getSchedule(reader, 'sch_1'), undefined);
  await reader.close();

  const store = Store.open(dir);
  t.teardown(() => store.close());
  t.equal(store.schemaVersion(), kSchemaVersion);
  const change = {
    id: 'sch_1',
    projectId: 'prj_1',
    flagId: 'flg_1',
    env: null,
    patch: { enabled: true },
    at: at + 1000,
    createdAt: at,
    createdBy: 'console',
    createdByName: 'console',
    status: 'pending' as const,
    doneAt: null,
    outcome: null,
  };
  const seq = store.configSeq();
  store.transact((w) => putSchedule(w, change));
  t.strictSame(getSchedule(store, 'sch_1'), change);
  t.strictSame(listSchedules(store, 'prj_1', kEveryChange).items, [change]);
  t.same(listDueSchedules(store, at + 999, 10), [], 'not due before its time');
  t.strictSame(listDueSchedules(store, at + 1000, 10), [change], 'due at its time');
  store.transact((w) => putSchedule(w, { ...change, status: 'applied', doneAt: at + 1000, outcome: 'changed' }));
  t.same(listDueSchedules(store, at + 5000, 10), [], 'done: no longer due');
  t.equal(listSchedules(store, 'prj_1', kEveryChange).items[0]!.status, 'applied', 'still listed');
  t.equal(store.configSeq(), seq, 'scheduled changes do not move configSeq');
});

t.test('a schema 7 data dir: its plans are listed by time once migrated, pending ones counted from the index', async (t) => {
  const dir = tempDir(t, 'flagwire-store-');
  const raw = open({ path: join(dir, 'flagwire.mdb'), maxDbs: 32 });
  const at = Date.now();
  const change = (id: string, due: number, status: 'pending' | 'applied') => ({
    id,
    projectId: 'prj_1',
    flagId: 'flg_1',
    env: null,
    patch: { trafficPercentage: 5 },
    at: due,
    createdAt: at,
    createdBy: 'console',
    createdByName: 'console',
    status,
    doneAt: status === 'pending' ? null : at,
    outcome: status === 'pending' ? null : 'changed',
  });
  const later = change('sch_b', at + 2000, 'pending');
  const sooner = change('sch_a', at + 1000, 'pending');
  const done = change('sch_c', at - 1000, 'applied');
  const plan = { id: 'rol_1', projectId: 'prj_1', flagId: 'flg_1', env: null, createdAt: at, status: 'completed' };
  raw.openDB({ name: 'meta' }).putSync('schemaVersion', 7);
  const plans = raw.openDB({ name: 'plans' });
  // Schema 7's lists: by project and id.
  for (const c of [later, sooner, done]) {
    plans.putSync(['change', c.id], c);
    plans.putSync(['project', c.projectId, c.id], null);
    if (c.status === 'pending') plans.putSync(['due', c.at, c.id], null);
  }
  plans.putSync(['rollout', plan.id], plan);
  plans.putSync(['rolloutProject', plan.projectId, plan.id], null);
  await raw.close();

  const store = Store.open(dir);
  t.teardown(() => store.close());
  t.equal(store.schemaVersion(), kSchemaVersion);
  t.strictSame(
    listSchedules(store, 'prj_1', kEveryChange).items.map((c) => c.id),
    ['sch_c', 'sch_a', 'sch_b'],
    'by due time',
  );
  t.strictSame(
    listSchedules(store, 'prj_1', { ...kEveryChange, pendingOnly: true }).items.map((c) => c.id),
    ['sch_a', 'sch_b'],
  );
  t.strictSame(
    listFlagSchedules(store, 'flg_1', { ...kEveryChange, newestFirst: true }).items.map((c) => c.id),
    ['sch_b', 'sch_a', 'sch_c'],
  );
  const pending = pendingSchedules(store, 'prj_1');
  t.equal(pending.count, 2);
  t.equal(pending.bytes, Buffer.byteLength(JSON.stringify(sooner)) + Buffer.byteLength(JSON.stringify(later)));
  t.strictSame(listRollouts(store, 'prj_1', kEveryChange).items, [plan]);
  t.strictSame(listFlagRollouts(store, 'flg_1', kEveryChange).items, [plan]);
  const firstPage = listSchedules(store, 'prj_1', { ...kEveryChange, limit: 2 });
  t.same(firstPage.next, { time: sooner.at, id: 'sch_a' });
  t.strictSame(
    listSchedules(store, 'prj_1', { ...kEveryChange, limit: 2, after: firstPage.next }).items.map((c) => c.id),
    ['sch_b'],
    'the next page starts after the last entry',
  );
  const byBytes = listSchedules(store, 'prj_1', { ...kEveryChange, maxBytes: 1 });
  t.equal(byBytes.items.length, 1, 'past the first entry, a page stops at its bytes');
  store.transact((w) => putSchedule(w, { ...sooner, status: 'applied', doneAt: at + 1000, outcome: 'changed' }));
  t.equal(pendingSchedules(store, 'prj_1').count, 1, 'applied: no longer pending');
  t.equal(listSchedules(store, 'prj_1', kEveryChange).items.length, 3, 'still listed, once');
});

t.test('a schema 6 data dir (no hooks database) reads as no webhooks, and is migrated when opened for writing', async (t) => {
  const dir = tempDir(t, 'flagwire-store-');
  const raw = open({ path: join(dir, 'flagwire.mdb'), maxDbs: 32 });
  raw.openDB({ name: 'meta' }).putSync('schemaVersion', 6);
  await raw.close();

  const reader = Store.open(dir, { readOnly: true });
  t.equal(reader.schemaVersion(), 6, 'a read-only open reads it as it is');
  t.same(listWebhooks(reader, 'prj_1'), []);
  t.same(scanDue(reader, Date.now(), 10), { webhookIds: [], pending: false });
  t.equal(getDelivery(reader, 'msg_1'), undefined);
  await reader.close();

  const store = Store.open(dir);
  t.teardown(() => store.close());
  t.equal(store.schemaVersion(), kSchemaVersion);
  const hook = {
    id: 'whk_1',
    projectId: 'prj_1',
    url: 'https://example.com/hook',
    secret: 'whsec_AAAA',
    events: ['flag' as const],
    format: 'standard' as const,
    createdAt: at,
    createdBy: 'console',
    createdByName: 'console',
  };
  store.transact((w) => putWebhook(w, hook));
  t.same(listWebhooks(store, 'prj_1'), [hook]);
});

t.test("a schema 8 data dir (a body in every delivery) is migrated: each change's body stored once, the outbox counted", async (t) => {
  const dir = tempDir(t, 'flagwire-store-');
  const raw = open({ path: join(dir, 'flagwire.mdb'), maxDbs: 32 });
  raw.openDB({ name: 'meta' }).putSync('schemaVersion', 8);
  const hooks = raw.openDB<unknown, (string | number)[]>({ name: 'hooks' });
  const hook = (id: string, format: 'standard' | 'slack') => ({
    id,
    projectId: 'prj_1',
    url: 'https://example.com/hook',
    secret: 'whsec_AAAA',
    events: ['flag'],
    format,
    createdAt: at,
    createdBy: 'console',
    createdByName: 'console',
  });
  const delivery = (id: string, webhookId: string, auditSeq: number, body: string, status: string) => ({
    id,
    webhookId,
    projectId: 'prj_1',
    event: 'flag.patch',
    auditSeq,
    body,
    createdAt: at,
    queuedAt: at,
    status,
    attempts: 0,
    nextAttemptAt: status === 'pending' ? at : null,
    claimedBy: null,
    lastStatus: null,
    lastError: null,
    lastLatencyMs: null,
    lastAttemptAt: null,
    doneAt: status === 'pending' ? null : at,
  });
  const rows = [
    delivery('msg_1', 'whk_a', 5, '{"five":1}', 'pending'),
    delivery('msg_2', 'whk_b', 5, '{"five":1}', 'pending'),
    delivery('msg_3', 'whk_s', 5, '{"text":"five"}', 'pending'),
    delivery('msg_4', 'whk_a', 6, '{"six":1}', 'delivered'),
  ];
  for (const h of [hook('whk_a', 'standard'), hook('whk_b', 'standard'), hook('whk_s', 'slack')]) hooks.putSync(['hook', h.id], h);
  for (const d of rows) {
    hooks.putSync(['delivery', d.id], d);
    hooks.putSync(['hookDelivery', d.webhookId, d.createdAt, d.id], null);
    if (d.status === 'pending') hooks.putSync(['deliveryDue', d.webhookId, at, d.id], null);
  }
  await raw.close();

  const store = Store.open(dir);
  t.teardown(() => store.close());
  t.equal(store.schemaVersion(), kSchemaVersion);
  t.same(getPayload(store, 5), {
    auditSeq: 5,
    projectId: 'prj_1',
    bodies: { standard: '{"five":1}', slack: '{"text":"five"}' },
    bytes: 25,
  });
  t.same(getPayload(store, 6), { auditSeq: 6, projectId: 'prj_1', bodies: { standard: '{"six":1}' }, bytes: 9 });
  t.notOk('body' in getDelivery(store, 'msg_1')!, 'the delivery holds no body now');
  t.same(
    listPayloadDeliveries(store, 5)
      .map((d) => d.id)
      .sort(),
    ['msg_1', 'msg_2', 'msg_3'],
  );
  t.same(getOutboxUsage(store, 'prj_1'), { pending: 3, bytes: 34 });
  t.same(listPayloadSeqs(store, 'prj_1', 10), [5, 6]);
  t.same(
    listWebhooks(store, 'prj_1').map((h) => h.id),
    ['whk_a', 'whk_b', 'whk_s'],
    'the webhooks moved into their own database (schema 15)',
  );
  t.same(
    listDueDeliveries(store, 'whk_a', at, 10).map((d) => d.id),
    ['msg_1'],
    'still due',
  );
});
