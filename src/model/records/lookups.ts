// Looking a record up by id, or the 404 that says it does not exist: one home and one wording for every
// kind. They take any reader of records (a StoreReader is one, and so is the writer's StoreWriter), so
// the main thread, the console and the writer thread call the same functions. Beside the records' own
// reads (org-records.ts, project-records.ts), so that a kind's look-up and its 404 have one home.
import { FlagwireError } from '../../errors.js';
import type { Org, User } from '../accounts.js';
import type { Audience, Project } from '../projects.js';
import type { Token } from '../tokens.js';
import type { StoreReader } from '../../store/interfaces.js';
import { getOrg, getUser, kOrgRecords, kUserRecords } from './org-records.js';
import { getProject, getAudience, kProjectRecords } from './project-records.js';
import { getToken } from './token-records.js';

/** What the look-ups read: the matching part of the store's StoreReader. */
export type RecordReader = Pick<StoreReader, 'getKeyed'>;

export type RecordKind = 'flag' | 'project' | 'organisation' | 'user' | 'audience' | 'token' | 'invitation';

/**
 * The 404 detail of a look-up by id: the console's, the writer's, the Evaluation API's and the change
 * feed's. It echoes the id: none of them is scoped to a project (see flagNotFound for the one that is).
 */
export function notFoundDetail(kind: RecordKind, id: string): string {
  return `No ${kind} with id "${id}" exists.`;
}

function found<T>(record: T | undefined, kind: RecordKind, id: string): T {
  if (record === undefined) throw new FlagwireError('NOT_FOUND', notFoundDetail(kind, id));
  return record;
}

/** Whether the store holds no configuration yet: no organisation, user or project (`serve --demo` seeds only such a store). */
export function isEmptyStore(r: Pick<StoreReader, 'listKeyed'>): boolean {
  return [kOrgRecords, kUserRecords, kProjectRecords].every((kind) => r.listKeyed<unknown>(kind, 1).length === 0);
}

export function requireProject(r: RecordReader, id: string): Project {
  return found(getProject(r, id), 'project', id);
}

export function requireOrg(r: RecordReader, id: string): Org {
  return found(getOrg(r, id), 'organisation', id);
}

export function requireUser(r: RecordReader, id: string): User {
  return found(getUser(r, id), 'user', id);
}

export function requireAudience(r: RecordReader, id: string): Audience {
  return found(getAudience(r, id), 'audience', id);
}

export function requireToken(r: RecordReader, id: string): Token {
  return found(getToken(r, id), 'token', id);
}

/**
 * The 404 of a webhook, and of a webhook's delivery, for every caller: the Management API's wording (a
 * token sees only its project's), which says nothing of ids elsewhere.
 */
export function webhookNotFound(): FlagwireError {
  return new FlagwireError('NOT_FOUND', 'No webhook with this id exists in this project.');
}

export function deliveryNotFound(): FlagwireError {
  return new FlagwireError('NOT_FOUND', 'No delivery with this id exists in this project.');
}

/**
 * The 404 of a scheduled change, and of a rollout, for every caller: the Management API's wording (a token
 * sees only its project's), which says nothing of ids elsewhere.
 */
export function scheduleNotFound(): FlagwireError {
  return new FlagwireError('NOT_FOUND', 'No scheduled change with this id exists in this project.');
}

export function rolloutNotFound(): FlagwireError {
  return new FlagwireError('NOT_FOUND', 'No rollout with this id exists in this project.');
}
