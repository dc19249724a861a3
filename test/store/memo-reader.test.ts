// The Management API's memo over the store: a record is decoded once per commit, every commit (from
// any writer) drops the memo at the next renewal, and memoised records cannot be changed by a reader.
import t from 'tap';
import type { Org } from '../../src/model/accounts.js';
import type { Flag } from '../../src/model/flags.js';
import type { KeyedKind, LookupKey, LookupRange } from '../../src/store/interfaces.js';
import type { Token } from '../../src/model/tokens.js';
import { getTokenByHash, kTokenRecords, putToken } from '../../src/model/records/token-records.js';
import { MemoReader } from '../../src/store/memo-reader.js';
import { Store } from '../helpers/store.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { getFlag, putFlag } from '../../src/flags/records/flag-store.js';
import { getOrg, putOrg } from '../../src/model/records/org-records.js';

const at = Date.UTC(2030, 0, 1);
const org: Org = { id: 'org_1', name: 'Acme', plan: 'teams', trialEndsAt: null, standing: 'good', createdAt: at };
const flag: Flag = {
  id: 'flg_1',
  projectId: 'prj_1',
  name: 'checkout',
  description: '',
  tags: ['web'],
  cohorts: ['alice'],
  createdAt: at,
  updatedAt: at,
  kind: 'flag',
  state: { enabled: true, trafficPercentage: 50, audienceId: null },
};

t.test('a record is decoded once per commit and read again after any commit', async (t) => {
  const store = Store.open(tempDir(t, 'flagwire-memo-'));
  t.teardown(() => store.close());
  store.transact((w) => {
    putOrg(w, org);
    putFlag(w, flag);
  });
  let decodes = 0;
  const counting = Object.assign(Object.create(store) as Store, {
    getKeyed: <V>(kind: KeyedKind<V>, key: string) => {
      decodes++;
      return store.getKeyed(kind, key);
    },
  });
  const memo = new MemoReader(counting);
  memo.resetReadTxn();
  const first = getFlag(memo, 'flg_1');
  t.strictSame(first, flag);
  t.equal(getFlag(memo, 'flg_1'), first, 'the same object while nothing is committed');
  memo.resetReadTxn();
  t.equal(getFlag(memo, 'flg_1'), first, 'also across renewals without a commit');
  t.equal(decodes, 1, 'decoded once');
  t.equal(getFlag(memo, 'flg_missing'), undefined);
  t.equal(getFlag(memo, 'flg_missing'), undefined);
  t.equal(decodes, 2, 'an absent record is remembered as absent too');

  store.transact((w) => putFlag(w, { ...flag, cohorts: ['bob'], updatedAt: at + 1 }));
  t.equal(getFlag(memo, 'flg_1'), first, 'until renewed, a reader keeps its snapshot');
  memo.resetReadTxn();
  t.strictSame(getFlag(memo, 'flg_1')?.cohorts, ['bob'], 'after a commit and a renewal, the new record');
  store.transact((w) => putOrg(w, { ...org, standing: 'lapsed' }));
  memo.resetReadTxn();
  t.equal(getOrg(memo, 'org_1')?.standing, 'lapsed', 'a commit of any record renews every memo');
});

t.test('memoised records are frozen: a reader cannot change what the next request reads', async (t) => {
  const store = Store.open(tempDir(t, 'flagwire-memo-'));
  t.teardown(() => store.close());
  store.transact((w) => putFlag(w, flag));
  const memo = new MemoReader(store);
  memo.resetReadTxn();
  const read = getFlag(memo, 'flg_1')!;
  t.throws(() => {
    (read as { name: string }).name = 'x';
  }, TypeError);
  t.throws(() => {
    (read.cohorts as string[]).push('mallory');
  }, TypeError);
  t.throws(() => {
    (read as { state: { enabled: boolean } }).state.enabled = false;
  }, TypeError);
  t.strictSame(getFlag(memo, 'flg_1'), flag);
});

t.test("a relayed kind's lookup entries are read once per commit: a token found by its secret", async (t) => {
  const store = Store.open(tempDir(t, 'flagwire-memo-'));
  t.teardown(() => store.close());
  // Of the flag's project, made when the flag was.
  const made = { projectId: flag.projectId, createdBy: 'usr_1', createdAt: at };
  const token: Token = {
    id: 'tok_1',
    name: 'deploy',
    permission: 'read',
    environments: [],
    expiresAt: 0,
    revokedAt: null,
    ...made,
    secretHash: 'ab'.repeat(32),
  };
  store.transact((w) => putToken(w, token));
  let reads = 0;
  const counting = Object.assign(Object.create(store) as Store, {
    lookupEntries: <V>(kind: KeyedKind<V>, index: string, key: LookupKey, range?: LookupRange) => {
      reads++;
      return store.lookupEntries(kind, index, key, range);
    },
  });
  const memo = new MemoReader(counting);
  memo.resetReadTxn();
  t.strictSame(getTokenByHash(memo, token.secretHash), token);
  t.equal(getTokenByHash(memo, token.secretHash), getTokenByHash(memo, token.secretHash), 'the same record every time');
  t.equal(reads, 1, "the lookup's entries read once");
  const entries = memo.lookupEntries(kTokenRecords, 'project', flag.projectId);
  entries.push({ at: [], key: 'tok_x', weight: 0 });
  t.equal(memo.lookupEntries(kTokenRecords, 'project', flag.projectId).length, 1, 'a caller changing its list changes no other');
  store.transact((w) => putToken(w, { ...token, revokedAt: at }));
  memo.resetReadTxn();
  t.equal(getTokenByHash(memo, token.secretHash)?.revokedAt, at, 'after a commit, read again: a revoked token fails at once');
});
