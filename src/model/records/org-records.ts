// Organisations and users as the store keeps them (keyedRecords: an organisation under its id in the orgs
// database, filed by the form of its name people tell apart; a user under its id in the users database,
// filed by their e-mail address without case), and every read and write of them. Organisations are
// configuration: relayed, and every write of one moves the store's revision; users are not relayed, and
// a write of one moves it too.
import { byCreation } from '../by-creation.js';
import type { Org, User } from '../accounts.js';
import { foldedName } from '../names.js';
import type { StoreReader, StoreWriter } from '../../store/interfaces.js';
import { keyedRecords } from '../../store/record-kinds.js';

export const kOrgRecords = keyedRecords<Org>()({
  name: 'org',
  database: 'orgs',
  relayed: true,
  key: (org) => org.id,
  // By the form of its name people tell apart (findOrgByName): a create's name check reads that one
  // entry, never every organisation of the node.
  indexes: {
    name: { keysOf: (org) => [foldedName(org.name)] },
  },
});

export function getOrg(r: Pick<StoreReader, 'getKeyed'>, id: string): Org | undefined {
  return r.getKeyed(kOrgRecords, id);
}

/** Oldest first, as every list the console prints. */
export function listOrgs(r: Pick<StoreReader, 'listKeyed'>): Org[] {
  return r.listKeyed(kOrgRecords).sort(byCreation);
}

/** The organisation whose name people would take for `name` (src/model/names.ts); the oldest if several. */
export function findOrgByName(r: Pick<StoreReader, 'listKeyedBy'>, name: string): Org | undefined {
  return r.listKeyedBy(kOrgRecords, 'name', foldedName(name)).sort(byCreation)[0];
}

export function putOrg(w: Pick<StoreWriter, 'putKeyed'>, org: Org): void {
  w.putKeyed(kOrgRecords, org);
}

export const kUserRecords = keyedRecords<User>()({
  name: 'user',
  database: 'users',
  relayed: false,
  configuration: true,
  key: (user) => user.id,
  indexes: {
    /** By address, compared without case (findUserByEmail): a sign-in with an unknown address reads one entry. */
    email: { keysOf: (user) => [user.email.toLowerCase()] },
  },
});

export function getUser(r: Pick<StoreReader, 'getKeyed'>, id: string): User | undefined {
  return r.getKeyed(kUserRecords, id);
}

/** Every user of the node, oldest first. */
export function listUsers(r: Pick<StoreReader, 'listKeyed'>): User[] {
  return r.listKeyed(kUserRecords).sort(byCreation);
}

/** The user of that address, compared without case (one user an address: the commands that make them keep it so). */
export function findUserByEmail(r: Pick<StoreReader, 'listKeyedBy'>, email: string): User | undefined {
  return r.listKeyedBy(kUserRecords, 'email', email.toLowerCase(), { limit: 1 })[0];
}

export function putUser(w: Pick<StoreWriter, 'putKeyed'>, user: User): void {
  w.putKeyed(kUserRecords, user);
}
