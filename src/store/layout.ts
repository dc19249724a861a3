// The LMDB layout: database names, key formats, the schema version. Shared by opening the file
// (open.ts: schema check, migration) and the reads and writes (lmdb-keyed.ts, lmdb-replica.ts); no
// code outside src/store knows any of it.
//
// Layout (one LMDB environment, named sub-databases, msgpack values):
//   meta             'schemaVersion' -> number, 'configSeq' -> number (bumped by every write txn that
//                    changes what readers cache: the relayed kinds and the configuration ones, users and
//                    memberships), '<kind>Seq' -> the last number of a kind numbered in sequence
//                    (sequenceKey: 'auditSeq', 'mailSeq')
//                    With PostgreSQL as the system of record (src/store/pg/), this file is the node's
//                    copy: 'revision' -> the last revision applied, 'replicaOf' -> that database's id
//                    'fileId' -> this file's own id: the source its relays name while it is no copy
//                    ['changeLog', revision] -> bytes (what the last revisions changed of the relayed kinds:
//                    'changeLogBytes' -> number         change-log.ts), and the bytes of them all
//                    'keyedLookups' -> the lookups the file holds (keyed-lookups.ts declaredLookups)
//   keyedIndexes     [kind, lookup, ...key parts, record key] -> weight | null (the lookups the simple
//                    kinds declare: KeyedKind.indexes, kept by every write and deletion; the store's own;
//                    an open for writing that declares other lookups than meta names builds them anew:
//                    open.ts settleLookups)
//   keyedTallies     [kind, lookup, first key part] -> { count, weight } (the tallied lookups' tallies)
//   (a simple kind)  key -> record: each kind its owner declares with keyedRecords, in a database of its
//                    own that its owner names (record-kinds.ts keyedRecords), under the string its kind's
//                    key() gives (compositeKey for a key of several parts)
//   audit            [projectId, seq] -> AuditEntry
// Before schema 15, two databases held several kinds under tagged keys ([tag, id] -> record, with
// entries derived from them): kRetiredDatabases says which, and where their records went. Before
// schema 20, kinds with layouts of their own: kMovedDatabases.
import { join } from 'node:path';
import type { Database, RootDatabase } from 'lmdb';
import type { AuditEntry } from '../model/audit.js';
import type { LookupPart, LookupTally } from './interfaces.js';

export const kFileName = 'flagwire.mdb';

/** The LMDB data file in a data dir. */
export function dataFilePath(dataDir: string): string {
  return join(dataDir, kFileName);
}

/**
 * Bumped when the layout changes incompatibly; a data dir written by a newer version is refused, an
 * older one is migrated when opened for writing. 2: the mailDue index (an older Flagwire would append
 * mail without indexing it, and that mail would never be sent). 3: the usage database (an older
 * Flagwire would call a file holding it foreign; this way it says "written by a newer Flagwire").
 * 4: the auth database (web console passwords and sessions), for the same reason. 5: flags by name in
 * projectIndex (an older Flagwire would rename or delete a flag without moving its entry). 6: the plans
 * database (scheduled changes), as usage. 7: the hooks database (webhooks and their outbox), as usage.
 * 8: the plans database's indexes by time, by flag and of pending changes, with their sizes (an older
 * Flagwire would write changes without them).
 * 9: a change's delivery bodies stored once in a payload (an older Flagwire would find deliveries without
 * a body).
 * 10: meta's change log and fileId (an older Flagwire would commit revisions without logging
 * them, and relays would be sent a log with holes).
 * 11: the change requests and approved plans databases (an older Flagwire would apply a change to a
 * guarded environment that this one turns into a request).
 * 12: the fragments database (a project's shared fragments), as usage.
 * 13: the change log's entries as bytes, relayed changes only, a record written again as its changed
 * fields, with their bytes counted (an older Flagwire would read an entry as a change set it is not, and
 * send relays a record's changed fields as the record).
 * 14: the keyedIndexes database, the lookups simple kinds declare (an older Flagwire would write their
 * records without them, and a lookup would miss them).
 * 15: the keyedTallies database, the tallies of the lookups that keep one (an older Flagwire would write
 * records without moving them).
 * 16: a user's organisations in the auth database, derived from the memberships (an older Flagwire would
 * add and end memberships without moving them, and the console's home would show the wrong ones).
 * 17: a project's audiences in the audience kind's lookup, no longer in projectIndex (an older Flagwire
 * would write audiences without filing them there, and a project's list would miss them).
 * 18: tokens in the token kind's lookups (by project, by secret's hash), projectIndex and tokenHashes
 * dropped (kDroppedDatabases), for the same reason.
 * 19: users by e-mail in the user kind's lookup, no longer in auth ('userEmail'), for the same reason.
 * 20: memberships, mail, credentials, sessions, invitations and the demo seed's mark in the keyed layout,
 * each kind in a database of its own and its lookups (kMovedDatabases), for the same reason.
 */
export const kSchemaVersion = 20;

/**
 * Named databases an environment may open: the layout's (35 in November 2026), with room for
 * more (LMDB fixes the limit per open, not in the file, so raising it never changes a file). A layout
 * declaring more is refused (store-layout.ts).
 */
export const kMaxDbs = 48;

export interface Databases {
  readonly meta: Database<unknown, string>;
  readonly audit: Database<AuditEntry, [string, number]>;
  /**
   * Absent in a read-only open of a file older than schema 14 (lmdb-js opens no database a read-only
   * file lacks); keyed-lookups.ts reads and writes it.
   */
  readonly keyedIndexes: Database<number | null, LookupPart[]> | undefined;
  /** Absent in a read-only open of a file older than schema 15 (as keyedIndexes). */
  readonly keyedTallies: Database<LookupTally, LookupPart[]> | undefined;
}

/**
 * Databases of earlier schemas that kept several kinds' records under tagged keys ([tag, key] -> record,
 * beside entries derived from them): schema 15 moved each tag's records into the database of their kind
 * (here by name, as the kinds that are kept there now declare them), which files them under its key and
 * in its lookups, and dropped the old database (open.ts migrateFrom14). Only the migrations open them.
 */
export const kRetiredDatabases: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  hooks: { hook: 'webhooks', delivery: 'deliveries', payload: 'payloads' },
  plans: { change: 'schedules', rollout: 'rollouts' },
};

/**
 * Databases of earlier schemas that held only entries derived from records, which their kinds' lookups
 * hold now: a project's audiences and tokens (projectIndex: [projectId, 'a' | 't', id] -> null, flags'
 * too before schema 15), a token by its secret's hash (tokenHashes: sha256 hex -> tokenId). Schema 18
 * dropped them (open.ts migrateFrom17); only the migrations open them.
 */
export const kDroppedDatabases: readonly string[] = ['projectIndex', 'tokenHashes'];

/**
 * Databases of schema 19 whose kinds kept layouts of their own, which schema 20 moved into the keyed
 * layout (open.ts migrateFrom19), each record under its kind's key in its kind's database, filed in its
 * kind's lookups: members ([orgId, userId] -> role, the member kind's), auth (['credential' | 'session' |
 * 'invitation', key] -> that kind's record, beside entries derived from them), and mailDue (the mail to
 * send, now the mail kind's lookup; the mail database stays, its numbers now decimal strings). Only the
 * migrations open them.
 */
export const kMovedDatabases: readonly string[] = ['members', 'auth', 'mailDue'];

/** The keyedIndexes database: the store's own, where every simple kind's lookups (KeyedKind.indexes) are kept. */
export const kKeyedIndexes = 'keyedIndexes';

/** The keyedTallies database: the store's own, the tallies of the tallied lookups (Lookup.tallied). */
export const kKeyedTallies = 'keyedTallies';

/**
 * Opens (creating if needed) the databases named: a layout's (store-layout.ts, from the record kinds
 * the store and the capabilities declare). The typed fields of Databases are the store's own reads and
 * writes of the kinds it knows; a kind laid out by keyedRecords is reached by name (databaseNamed).
 */
export function openDatabases(root: RootDatabase, names: readonly string[]): Databases {
  return Object.fromEntries(names.map((name) => [name, root.openDB({ name })])) as unknown as Databases;
}

/** The database `name` of an open store; undefined when it was not opened (a read-only open of a file without it). */
export function databaseNamed<V>(db: Databases, name: string): Database<V, string> | undefined {
  return (db as unknown as Readonly<Record<string, Database<V, string> | undefined>>)[name];
}

/** meta's counter of a kind numbered in sequence (KeyedKind.sequence; the audit log's too): its last number. */
export function sequenceKey(kind: string): string {
  return `${kind}Seq`;
}
