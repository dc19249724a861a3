// Opening the LMDB data file: refusing a file or directory that is not ours, or a newer schema;
// writing the schema version into a new file and migrating an older one.
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { kDefaultChangeLog, type ChangeLogBounds } from '../config.js';
import { open, type Database, type Key, type RootDatabase } from 'lmdb';
import { repackOlderLog } from './change-log.js';
import { checkDataFile, StoreOpenError } from './data-file.js';
import {
  dataFilePath,
  kMaxDbs,
  kDroppedDatabases,
  kMovedDatabases,
  kRetiredDatabases,
  kFileName,
  kSchemaVersion,
  openDatabases,
  databaseNamed,
  type Databases,
} from './layout.js';
import type { StoreLayout } from './store-layout.js';
import type { KeyedKind } from './interfaces.js';
import { declaredLookups, fileAll } from './keyed-lookups.js';
import { settleAfterOpen, writeTransaction } from './write-txn.js';

/**
 * How a store is opened. For writing, with its layout (src/capabilities.ts kStoreLayout): the databases
 * it opens, creating those the file lacks, and calls its own. Read-only, the layout may be left out: the
 * databases the file holds are opened as they are, which is what a thread of a server reads once the
 * server's writer has opened the file with its layout (refusing one that is not Flagwire's).
 */
export type StoreOptions =
  | {
      readOnly?: false;
      layout: StoreLayout;
      /** What its change log keeps (change-log.ts; FLAGWIRE_CHANGE_LOG_REVISIONS, FLAGWIRE_CHANGE_LOG_BYTES); the settings' defaults when absent. */
      changeLog?: ChangeLogBounds;
    }
  | { readOnly: true; layout?: StoreLayout };

/** An opened data file, its schema checked (and migrated if opened for writing). */
export interface OpenedDataFile {
  readonly path: string;
  readonly root: RootDatabase;
  readonly dbs: Databases;
  /** The layout it was opened with; null for a read-only open without one. */
  readonly layout: StoreLayout | null;
  /** What its change log keeps (what a read-only open is given does not matter: it writes none). */
  readonly changeLog: ChangeLogBounds;
}

/** Opens (creating if needed) the data file in `dataDir`; refuses a newer or foreign layout. */
export function openDataFile(dataDir: string, options: StoreOptions): OpenedDataFile {
  const readOnly = options.readOnly ?? false;
  const path = dataFilePath(dataDir);
  refuseForeignFiles(dataDir, options.layout ?? null);
  checkDataFile(path);
  let root: RootDatabase;
  try {
    root = openRoot(path, readOnly);
  } catch (err) {
    throw new StoreOpenError(`cannot open the data file ${path}: ${(err as Error).message}`);
  }
  if (!readOnly) {
    try {
      settleAfterOpen(root, path);
    } catch (err) {
      void root.close();
      throw err;
    }
  }
  // Before openDatabases creates any database: an LMDB file of another application is refused,
  // never written into.
  const names = [...root.getKeys()].map(String);
  // A newer Flagwire may have added databases: say so, rather than call its file foreign.
  if (names.includes('meta')) {
    try {
      refuseNewerSchema(path, root.openDB<unknown, string>({ name: 'meta' }).get('schemaVersion'));
    } catch (err) {
      void root.close();
      throw err;
    }
  }
  const ours = options.layout?.databases ?? names;
  const known = new Set([...ours, ...Object.keys(kRetiredDatabases), ...kDroppedDatabases, ...kMovedDatabases]);
  const foreign = names.filter((name) => !known.has(name));
  // A database the file's own Flagwire declared (meta's 'databases') is a newer Flagwire's, not another
  // application's: adding a database needs no schema version of its own.
  const declaredByFile = names.includes('meta') ? declaredDatabases(root) : [];
  const newer = foreign.filter((name) => declaredByFile.includes(name));
  if (newer.length > 0) {
    void root.close();
    throw new StoreOpenError(
      `${path} was written by a newer Flagwire (it holds the database${newer.length > 1 ? 's' : ''} ${newer
        .slice(0, 3)
        .map((n) => `"${n}"`)
        .join(', ')}, which this version does not know); upgrade Flagwire or use another data directory`,
    );
  }
  if (foreign.length > 0) {
    void root.close();
    throw new StoreOpenError(
      `${path} is an LMDB file of another application (it holds ${foreign
        .slice(0, 3)
        .map((n) => `"${n}"`)
        .join(', ')}); Flagwire will not write into it: use an empty or Flagwire-only data directory`,
    );
  }
  // openDB commits a write transaction of its own for each database it creates, and each commit syncs the
  // file: a new file's 35 databases were 35 fdatasyncs, 0.3-0.4 s of a fresh data dir's open on a
  // virtual disk (a test server's start, a first `flagwire` command). Created in one transaction (openDB
  // runs in the one open), they cost one sync; a database that exists is opened with no write at all.
  const creates = !readOnly && ours.some((name) => !names.includes(name));
  const dbs = creates ? root.transactionSync(() => openDatabases(root, ours)) : openDatabases(root, ours);
  try {
    const retired = (name: string) => (names.includes(name) ? root.openDB<unknown, Key>({ name }) : undefined);
    checkSchema(path, root, dbs, options.readOnly === true ? null : options.layout, retired);
  } catch (err) {
    void root.close();
    throw err;
  }
  const changeLog = (options.readOnly ? undefined : options.changeLog) ?? kDefaultChangeLog;
  return { path, root, dbs, layout: options.layout ?? null, changeLog };
}

/** A retired or dropped database of the file (layout.ts kRetiredDatabases, kDroppedDatabases), opened; undefined when the file never had it. */
type RetiredDatabases = (name: string) => Database<unknown, Key> | undefined;

/** `layout`: a write's (it migrates an older file); null: a read-only open, which reads it as it is. */
function checkSchema(path: string, root: RootDatabase, dbs: Databases, layout: StoreLayout | null, retired: RetiredDatabases): void {
  const readOnly = layout === null;
  const version = dbs.meta.get('schemaVersion');
  if (version === undefined) {
    if (readOnly) return;
    writeTransaction(root, path, () => {
      if (dbs.meta.get('schemaVersion') !== undefined) return;
      dbs.meta.putSync('schemaVersion', kSchemaVersion);
      dbs.meta.putSync('fileId', randomUUID());
    });
    settleLookups(path, root, dbs, layout);
    settleDatabases(path, root, dbs, layout);
    return;
  }
  if (typeof version !== 'number') {
    throw new StoreOpenError(`${path} is not a Flagwire data file (no valid schema version)`);
  }
  refuseNewerSchema(path, version);
  // A read-only open of an older file reads it as it is: a database not there yet reads as empty, a
  // lookup not there yet is read from every record (lmdb-keyed.ts); records that a later schema moved
  // (kRetiredDatabases, kMovedDatabases) read as absent. Every server opens the file for writing first.
  if (readOnly) return;
  if (version === 1) migrateFrom1(path, root, dbs);
  if (version <= 2) migrateFrom2(path, root, dbs);
  if (version <= 3) migrateFrom3(path, root, dbs);
  if (version <= 4) migrateFrom4(path, root, dbs);
  if (version <= 5) migrateFrom5(path, root, dbs);
  if (version <= 6) migrateFrom6(path, root, dbs);
  if (version <= 7) migrateFrom7(path, root, dbs);
  if (version <= 8) migrateFrom8(path, root, dbs, retired);
  if (version <= 9) migrateFrom9(path, root, dbs);
  if (version <= 10) migrateFrom10(path, root, dbs);
  if (version <= 11) migrateFrom11(path, root, dbs);
  if (version <= 12) migrateFrom12(path, root, dbs, layout);
  if (version <= 13) migrateFrom13(path, root, dbs);
  if (version <= 14) migrateFrom14(path, root, dbs, layout, retired);
  if (version <= 15) migrateFrom15(path, root, dbs);
  if (version <= 16) migrateFrom16(path, root, dbs, retired);
  if (version <= 17) migrateFrom17(path, root, dbs, retired);
  if (version <= 18) migrateFrom18(path, root, dbs);
  if (version <= 19) migrateFrom19(path, root, dbs, layout, retired);
  settleLookups(path, root, dbs, layout);
  settleDatabases(path, root, dbs, layout);
}

/** The databases meta names as its Flagwire's (settleDatabases); none in a file written before it named them. */
function declaredDatabases(root: RootDatabase): readonly string[] {
  const listed = root.openDB<unknown, string>({ name: 'meta' }).get('databases');
  return Array.isArray(listed) ? (listed as string[]) : [];
}

/**
 * Names the layout's databases in meta ('databases') whenever they differ from those it names, so that
 * a Flagwire that does not know one of them calls the file newer rather than another application's.
 */
function settleDatabases(path: string, root: RootDatabase, dbs: Databases, layout: StoreLayout): void {
  const named = JSON.stringify(declaredDatabases(root));
  if (named === JSON.stringify(layout.databases)) return;
  writeTransaction(root, path, () => dbs.meta.putSync('databases', [...layout.databases]));
}

/**
 * Schema 1 to 2: the index of the mail still to send, which schema 20 replaced by the mail kind's lookup
 * (settleLookups builds it), so only the version moves. One transaction, re-checked inside it, so a crash
 * leaves schema 1 (migrated again at the next open) and two processes opening at once migrate once.
 */
function migrateFrom1(path: string, root: RootDatabase, dbs: Databases): void {
  writeTransaction(root, path, () => {
    if (dbs.meta.get('schemaVersion') !== 1) return;
    dbs.meta.putSync('schemaVersion', 2);
  });
}

/**
 * Schema 2 to 3: the usage database, created empty by openDatabases; only the version moves. Re-checked
 * inside the transaction, as migrateFrom1.
 */
function migrateFrom2(path: string, root: RootDatabase, dbs: Databases): void {
  writeTransaction(root, path, () => {
    if (dbs.meta.get('schemaVersion') !== 2) return;
    dbs.meta.putSync('schemaVersion', 3);
  });
}

/**
 * Schema 3 to 4: the auth database and its e-mail index of the users; the user kind's lookup is that
 * index now (settleLookups builds it) and schema 20 moved auth's records, so only the version moves.
 */
function migrateFrom3(path: string, root: RootDatabase, dbs: Databases): void {
  writeTransaction(root, path, () => {
    if (dbs.meta.get('schemaVersion') !== 3) return;
    dbs.meta.putSync('schemaVersion', 4);
  });
}

/** Schema 4 to 5: flags by name in projectIndex; schema 15 files them in their kind's lookups, so only the version moves. */
function migrateFrom4(path: string, root: RootDatabase, dbs: Databases): void {
  writeTransaction(root, path, () => {
    if (dbs.meta.get('schemaVersion') !== 4) return;
    dbs.meta.putSync('schemaVersion', 5);
  });
}

/** Schema 5 to 6: the plans database, created empty by openDatabases; only the version moves. */
function migrateFrom5(path: string, root: RootDatabase, dbs: Databases): void {
  writeTransaction(root, path, () => {
    if (dbs.meta.get('schemaVersion') !== 5) return;
    dbs.meta.putSync('schemaVersion', 6);
  });
}

/** Schema 6 to 7: the hooks database, created empty by openDatabases; only the version moves. */
function migrateFrom6(path: string, root: RootDatabase, dbs: Databases): void {
  writeTransaction(root, path, () => {
    if (dbs.meta.get('schemaVersion') !== 6) return;
    dbs.meta.putSync('schemaVersion', 7);
  });
}

/**
 * Schema 7 to 8: the plans database's lists by time, with each entry's size; schema 15 moved its records
 * into databases of their own, filed in their kinds' lookups, so only the version moves.
 */
function migrateFrom7(path: string, root: RootDatabase, dbs: Databases): void {
  writeTransaction(root, path, () => {
    if (dbs.meta.get('schemaVersion') !== 7) return;
    dbs.meta.putSync('schemaVersion', 8);
  });
}

/** A delivery as schema 8 kept it: with its body, which schema 9 moves into its change's payload. */
interface DeliveryBefore9 {
  id: string;
  webhookId: string;
  projectId: string;
  auditSeq: number;
  body: string;
}

/** A change's payload as schema 9 keeps it (src/webhooks/webhook.ts DeliveryPayload). */
interface PayloadSince9 {
  auditSeq: number;
  projectId: string;
  bodies: Record<string, string>;
  bytes: number;
}

/**
 * Schema 8 to 9: each delivery's body moves into its change's payload (stored once for all its
 * webhooks); schema 15 files them in their lookups.
 */
function migrateFrom8(path: string, root: RootDatabase, dbs: Databases, retired: RetiredDatabases): void {
  writeTransaction(root, path, () => {
    if (dbs.meta.get('schemaVersion') !== 8) return;
    const hooks = retired('hooks');
    if (hooks !== undefined) {
      const payloads = new Map<number, PayloadSince9>();
      // Read whole before any write: the loop rewrites the records it reads.
      for (const { key, value } of [...hooks.getRange({ start: ['delivery'], end: ['delivery', '\uffff'] })]) {
        const { body, ...delivery } = value as DeliveryBefore9;
        const hook = hooks.get(['hook', delivery.webhookId]) as { format: string } | undefined;
        if (hook !== undefined) {
          const payload = payloads.get(delivery.auditSeq) ?? {
            auditSeq: delivery.auditSeq,
            projectId: delivery.projectId,
            bodies: {},
            bytes: 0,
          };
          if (payload.bodies[hook.format] === undefined) {
            payload.bodies[hook.format] = body;
            payload.bytes += Buffer.byteLength(body);
          }
          payloads.set(delivery.auditSeq, payload);
        }
        hooks.putSync(key, delivery);
      }
      for (const payload of payloads.values()) hooks.putSync(['payload', payload.auditSeq], payload);
    }
    dbs.meta.putSync('schemaVersion', 9);
  });
}

/** Schema 9 to 10: the file's id (meta's change log starts empty and logs from here on). */
function migrateFrom9(path: string, root: RootDatabase, dbs: Databases): void {
  writeTransaction(root, path, () => {
    if (dbs.meta.get('schemaVersion') !== 9) return;
    dbs.meta.putSync('fileId', randomUUID());
    dbs.meta.putSync('schemaVersion', 10);
  });
}

/** Schema 10 to 11: the change requests and approved plans databases (src/approvals), created empty by openDatabases; only the version moves. */
function migrateFrom10(path: string, root: RootDatabase, dbs: Databases): void {
  writeTransaction(root, path, () => {
    if (dbs.meta.get('schemaVersion') !== 10) return;
    dbs.meta.putSync('schemaVersion', 11);
  });
}

/** Schema 11 to 12: the fragments database (src/flags/records/fragment-records.ts), created empty by openDatabases; only the version moves. */
function migrateFrom11(path: string, root: RootDatabase, dbs: Databases): void {
  writeTransaction(root, path, () => {
    if (dbs.meta.get('schemaVersion') !== 11) return;
    dbs.meta.putSync('schemaVersion', 12);
  });
}

/**
 * Schema 12 to 13: the change log's entries as bytes, each with only its relayed changes, their bytes
 * counted (change-log.ts), so the byte bound holds from the first append.
 */
function migrateFrom12(path: string, root: RootDatabase, dbs: Databases, layout: StoreLayout): void {
  writeTransaction(root, path, () => {
    if (dbs.meta.get('schemaVersion') !== 12) return;
    repackOlderLog(dbs.meta, layout.relayedChanges);
    dbs.meta.putSync('schemaVersion', 13);
  });
}

/**
 * Schema 13 to 14: the keyedIndexes database, created empty by openDatabases (settleLookups fills it); only
 * the version moves, so that an older Flagwire, which would write records without their lookups, calls
 * the file newer.
 */
function migrateFrom13(path: string, root: RootDatabase, dbs: Databases): void {
  writeTransaction(root, path, () => {
    if (dbs.meta.get('schemaVersion') !== 13) return;
    dbs.meta.putSync('schemaVersion', 14);
  });
}

/**
 * Schema 14 to 15: the keyedTallies database, created empty by openDatabases, and the records kept in
 * the retired shared databases (layout.ts kRetiredDatabases) moved into their kinds' own databases,
 * under their kinds' keys; the retired databases are dropped, and so are flags' entries in projectIndex. settleLookups then files them in their
 * kinds' lookups (the lookups declared having changed). An older Flagwire, which would write records
 * without their tallies, calls the file newer.
 */
function migrateFrom14(path: string, root: RootDatabase, dbs: Databases, layout: StoreLayout, retired: RetiredDatabases): void {
  writeTransaction(root, path, () => {
    if (dbs.meta.get('schemaVersion') !== 14) return;
    for (const [name, tags] of Object.entries(kRetiredDatabases)) {
      const shared = retired(name);
      if (shared === undefined) continue;
      for (const [tag, database] of Object.entries(tags)) {
        const kind = layout.kinds.find((k) => k.database === database);
        const target = databaseNamed<unknown>(dbs, database);
        if (kind === undefined || target === undefined) throw new StoreOpenError(`${path}: no record kind is kept in database ${database}`);
        for (const { key, value } of shared.getRange({ start: [tag], end: [tag, '\uffff'] }))
          if ((key as unknown[])[0] === tag && value !== null) target.putSync(kind.key(value), value);
      }
      shared.dropSync();
    }
    // Flags' entries in projectIndex (['f', id] and ['n', name]): their kind's lookups file them now.
    const index = retired('projectIndex');
    for (const key of [...(index?.getKeys() ?? [])]) if ((key as Key[])[1] === 'f' || (key as Key[])[1] === 'n') index!.removeSync(key);
    dbs.meta.putSync('schemaVersion', 15);
  });
}

/**
 * Schema 15 to 16: the index of a user's organisations in auth, which the member kind's lookup is now
 * (schema 20; settleLookups builds it), so only the version moves.
 */
function migrateFrom15(path: string, root: RootDatabase, dbs: Databases): void {
  writeTransaction(root, path, () => {
    if (dbs.meta.get('schemaVersion') !== 15) return;
    dbs.meta.putSync('schemaVersion', 16);
  });
}

/**
 * Schema 16 to 17: a project's audiences are the audience kind's lookup (src/model/records), which
 * settleLookups builds from the audiences (the lookups declared having changed); their entries in
 * projectIndex go. An older Flagwire, which would write audiences without filing them, calls the file newer.
 */
function migrateFrom16(path: string, root: RootDatabase, dbs: Databases, retired: RetiredDatabases): void {
  writeTransaction(root, path, () => {
    if (dbs.meta.get('schemaVersion') !== 16) return;
    const index = retired('projectIndex');
    for (const key of [...(index?.getKeys() ?? [])]) if ((key as Key[])[1] === 'a') index!.removeSync(key);
    dbs.meta.putSync('schemaVersion', 17);
  });
}

/**
 * Schema 17 to 18: tokens are found through their kind's lookups (src/model/records/token-records.ts),
 * which settleLookups builds from the tokens; projectIndex and tokenHashes, which held their entries, go
 * (layout.ts kDroppedDatabases). An older Flagwire, which would write tokens without filing them, calls
 * the file newer.
 */
function migrateFrom17(path: string, root: RootDatabase, dbs: Databases, retired: RetiredDatabases): void {
  writeTransaction(root, path, () => {
    if (dbs.meta.get('schemaVersion') !== 17) return;
    for (const name of kDroppedDatabases) retired(name)?.dropSync();
    dbs.meta.putSync('schemaVersion', 18);
  });
}

/**
 * Schema 18 to 19: a user is found by e-mail through the user kind's lookup (src/model/records/org-records.ts),
 * which settleLookups builds from the users; their entries in auth went, and schema 20 drops auth whole,
 * so only the version moves. An older Flagwire, which would write users without filing them, calls the
 * file newer.
 */
function migrateFrom18(path: string, root: RootDatabase, dbs: Databases): void {
  writeTransaction(root, path, () => {
    if (dbs.meta.get('schemaVersion') !== 18) return;
    dbs.meta.putSync('schemaVersion', 19);
  });
}

/** The tags of auth's entries that were records (layout.ts kMovedDatabases), each the name of its kind. */
const kAuthRecordTags: ReadonlySet<string> = new Set(['credential', 'session', 'invitation']);

/**
 * Schema 19 to 20: the kinds that kept layouts of their own move into the keyed layout (layout.ts
 * kMovedDatabases), each record into its kind's database under its kind's key (the kinds found by name
 * in the layout, as their owners declare them): memberships out of members, credentials, sessions and
 * invitations out of auth, the demo seed's mark out of meta, and a record of a kind numbered in sequence
 * (mail) under its key's string, no longer its number;
 * members, auth and mailDue are dropped, and settleLookups files the records in their kinds' lookups
 * (the lookups declared having changed). An older Flagwire, which would read none of them, calls the
 * file newer.
 */
function migrateFrom19(path: string, root: RootDatabase, dbs: Databases, layout: StoreLayout, retired: RetiredDatabases): void {
  writeTransaction(root, path, () => {
    if (dbs.meta.get('schemaVersion') !== 19) return;
    const put = (name: string, value: unknown) => {
      const kind = layout.kinds.find((k) => k.name === name);
      const target = kind === undefined ? undefined : databaseNamed<unknown>(dbs, kind.database);
      if (kind === undefined || target === undefined)
        throw new StoreOpenError(`${path}: no record kind ${name} is kept in the keyed layout`);
      target.putSync(kind.key(value), value);
    };
    const members = retired('members');
    for (const { key, value } of members?.getRange() ?? []) {
      const [orgId, userId] = key as [string, string];
      put('member', { orgId, userId, role: value });
    }
    const auth = retired('auth');
    for (const { key, value } of auth?.getRange() ?? []) {
      const [tag] = key as [string];
      if (kAuthRecordTags.has(tag) && value !== null) put(tag, value);
    }
    // A kind numbered in sequence (mail) kept each record under its number: now under its key's string.
    for (const kind of layout.kinds) {
      const db = kind.sequence === undefined ? undefined : databaseNamed<unknown>(dbs, kind.database);
      // Read whole before any write: the loop rewrites the database it reads.
      for (const { key, value } of [...(db?.getRange() ?? [])])
        if (typeof key === 'number') {
          db!.removeSync(key);
          db!.putSync(kind.key(value), value);
        }
    }
    const seeded = dbs.meta.get('demoSeeded');
    if (seeded !== undefined) {
      put('demoSeeded', seeded);
      dbs.meta.removeSync('demoSeeded');
    }
    for (const name of kMovedDatabases) retired(name)?.dropSync();
    dbs.meta.putSync('schemaVersion', 20);
  });
}

/**
 * The lookups the layout's kinds declare (KeyedKind.indexes), built anew whenever they differ from those
 * the file holds (meta's 'keyedLookups': each kind's lookup names): a kind that declares a lookup, or
 * another one, needs no migration of its own. A lookup whose keys, weights or tally change takes a new
 * name. Writes keep them from here on; the server's writer opens the file before any reader does.
 */
function settleLookups(path: string, root: RootDatabase, dbs: Databases, layout: StoreLayout): void {
  const declared = declaredLookups(layout.kinds);
  if (dbs.meta.get('keyedLookups') === declared) return;
  writeTransaction(root, path, () => {
    if (dbs.meta.get('keyedLookups') === declared) return;
    const lookups = { entries: dbs.keyedIndexes!, tallies: dbs.keyedTallies! };
    for (const key of [...lookups.entries.getKeys()]) lookups.entries.removeSync(key);
    for (const key of [...lookups.tallies.getKeys()]) lookups.tallies.removeSync(key);
    for (const kind of layout.kinds) {
      const records = kind.indexes === undefined ? undefined : databaseNamed<unknown>(dbs, kind.database);
      if (records === undefined) continue;
      fileAll(lookups, kind as KeyedKind<unknown>, [...records.getRange().map(({ value }) => value)]);
    }
    dbs.meta.putSync('keyedLookups', declared);
  });
}

function refuseNewerSchema(path: string, version: unknown): void {
  if (typeof version === 'number' && version > kSchemaVersion) {
    throw new StoreOpenError(
      `${path} was written by a newer Flagwire (schema ${version}; this version reads up to ${kSchemaVersion}); upgrade Flagwire or use another data directory`,
    );
  }
}

/**
 * lmdb-js's open() now and then fails at once with "No transaction to renew" (kriszyp/lmdb-js#201, seen
 * here once in three CI runs, from a command-line command opening the file beside another process): one
 * more try opens it; any other error, or a second failure, is reported.
 */
function openRoot(path: string, readOnly: boolean): RootDatabase {
  // overlappingSync off: a committed transactionSync is on disk when it returns, which is what
  // "answered only after the commit is durable" needs.
  const openIt = () => open({ path, maxDbs: kMaxDbs, overlappingSync: false, readOnly });
  try {
    return openIt();
  } catch (err) {
    if (!/No transaction to renew/.test((err as Error).message)) throw err;
    return openIt();
  }
}

/**
 * A data dir holding files that are not ours (or a damaged data file) is refused, never written over.
 * Ours: the data file and the side files the layout declares, each with its lock file. A read-only open
 * without a layout (a thread of a server whose writer checked the data dir with it) takes any LMDB file
 * for a side file.
 */
function refuseForeignFiles(dataDir: string, layout: StoreLayout | null): void {
  if (!existsSync(dataDir)) return;
  const files = [kFileName, ...(layout?.sideFiles.map((side) => side.file) ?? [])];
  const ours = new Set(files.flatMap((file) => [file, `${file}-lock`]));
  const isOurs = (name: string) => ours.has(name) || (layout === null && /\.mdb(-lock)?$/.test(name));
  const foreign = readdirSync(dataDir).filter((name) => !isOurs(name) && !name.startsWith('.'));
  if (foreign.length > 0) {
    throw new StoreOpenError(
      `data directory ${dataDir} holds files Flagwire did not write (${foreign.slice(0, 3).join(', ')}); use an empty or Flagwire-only directory`,
    );
  }
}
