// The LMDB store as a test opens it: with the layout every process of Flagwire opens it with, the one
// the capabilities declare (src/capabilities.ts kStoreLayout); and its data file read or changed raw, as an
// older Flagwire left it.
import { join } from 'node:path';
import { type Key, open } from 'lmdb';
import { kStoreLayout } from '../../src/capabilities.js';
import { kFileName, kKeyedIndexes, kKeyedTallies, kMaxDbs } from '../../src/store/layout.js';
import { LmdbStore } from '../../src/store/lmdb-store.js';

export const Store = {
  open(dataDir: string, options: { readOnly?: boolean } = {}): LmdbStore {
    return LmdbStore.open(dataDir, options.readOnly === true ? { readOnly: true, layout: kStoreLayout } : { layout: kStoreLayout });
  },
};
export type Store = LmdbStore;

/** How many keys of `database` in the data file of `dir` (closed) start with `first`: what a store filed. */
export async function countRawKeys(dir: string, database: string, first: string): Promise<number> {
  const raw = open({ path: join(dir, kFileName), maxDbs: kMaxDbs, readOnly: true });
  const count = [...raw.openDB<null, Key[]>({ name: database }).getKeys()].filter((key) => key[0] === first).length;
  await raw.close();
  return count;
}

/**
 * Removes the keys of `database` in the data file of `dir` (closed) that start with `first`, and writes
 * `meta`'s values: the file as a Flagwire before those keys left it. The number of keys removed.
 */
export async function dropRawKeys(dir: string, database: string, first: string, meta: Record<string, unknown>): Promise<number> {
  const raw = open({ path: join(dir, kFileName), maxDbs: kMaxDbs });
  const db = raw.openDB<null, Key[]>({ name: database });
  let dropped = 0;
  for (const key of [...db.getKeys()])
    if (key[0] === first) {
      db.removeSync(key);
      dropped++;
    }
  const metaDb = raw.openDB<unknown, string>({ name: 'meta' });
  for (const [name, value] of Object.entries(meta)) metaDb.putSync(name, value);
  await raw.close();
  return dropped;
}

/**
 * Leaves the data file of `dir` (closed) as a Flagwire without the lookups of record kind `kind` left it:
 * none of their entries or tallies, and the kind gone from the lookups the file says it holds. Whether the file named
 * them before (this Flagwire's do).
 */
export async function forgetLookups(dir: string, kind: string): Promise<boolean> {
  const raw = open({ path: join(dir, kFileName), maxDbs: kMaxDbs });
  for (const name of [kKeyedIndexes, kKeyedTallies]) {
    const db = raw.openDB<unknown, Key[]>({ name });
    for (const key of [...db.getKeys()]) if (key[0] === kind) db.removeSync(key);
  }
  const meta = raw.openDB<string, string>({ name: 'meta' });
  const declared = JSON.parse(meta.get('keyedLookups')!) as [string, string[]][];
  meta.putSync('keyedLookups', JSON.stringify(declared.filter(([name]) => name !== kind)));
  await raw.close();
  return declared.some(([name]) => name === kind);
}

/**
 * Leaves the data file of `dir` (closed), written by this Flagwire, as schema 19 kept the kinds that schema
 * 20 moved into the keyed layout (src/store/layout.ts kMovedDatabases): memberships in members
 * ([orgId, userId] -> role), credentials, sessions and invitations in auth under tagged keys with the
 * entries derived from them, mail under its numbers with mailDue ([nextAttemptAt, seq] -> null) for the
 * mail to send, the demo seed's mark in meta; none of them in the lookups, their databases gone.
 */
export async function asSchema19Layout(dir: string): Promise<void> {
  for (const kind of ['member', 'credential', 'session', 'invitation', 'mail', 'demoSeeded']) await forgetLookups(dir, kind);
  const raw = open({ path: join(dir, kFileName), maxDbs: kMaxDbs });
  const moved = <V>(name: string): V[] => {
    const db = raw.openDB<V, Key>({ name });
    const values = [...db.getRange().map(({ value }) => value)];
    db.dropSync();
    return values;
  };
  const members = raw.openDB<string, Key[]>({ name: 'members' });
  for (const m of moved<{ orgId: string; userId: string; role: string }>('memberships')) members.putSync([m.orgId, m.userId], m.role);
  const auth = raw.openDB<unknown, Key[]>({ name: 'auth' });
  for (const m of [...members.getKeys()]) auth.putSync(['userOrg', m[1]!, m[0]!], null);
  for (const c of moved<{ userId: string }>('credentials')) auth.putSync(['credential', c.userId], c);
  for (const s of moved<{ idHash: string; userId: string }>('sessions')) {
    auth.putSync(['session', s.idHash], s);
    auth.putSync(['userSession', s.userId, s.idHash], null);
  }
  for (const i of moved<{ id: string; orgId: string; email: string }>('invitations')) {
    auth.putSync(['invitation', i.id], i);
    auth.putSync(['orgInvitation', i.orgId, i.id], null);
    auth.putSync(['emailInvitation', i.email, i.id], null);
  }
  const mail = raw.openDB<{ seq: number; nextAttemptAt: number; sentAt: number | null; failedAt: number | null }, Key>({ name: 'mail' });
  const due = raw.openDB<null, Key[]>({ name: 'mailDue' });
  for (const { key, value } of [...mail.getRange()]) {
    mail.removeSync(key);
    mail.putSync(value.seq, value);
    if (value.sentAt === null && value.failedAt === null) due.putSync([value.nextAttemptAt, value.seq], null);
  }
  const meta = raw.openDB<unknown, string>({ name: 'meta' });
  for (const at of moved<number>('demo')) meta.putSync('demoSeeded', at);
  meta.putSync('schemaVersion', 19);
  await raw.close();
}
