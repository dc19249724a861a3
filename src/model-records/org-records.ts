// Organisations as the store keeps them (keyedRecords: each under its id in the orgs database, filed by
// the form of its name people tell apart), and every read and write of them. Organisations are
// configuration: relayed, and every write of one moves the store's revision.
import { byCreation } from '../model/by-creation.js';
import type { Org } from '../model/accounts.js';
import { foldedName } from '../model/names.js';
import type { StoreReader, StoreWriter } from '../store/interfaces.js';
import { keyedRecords } from '../store/record-kinds.js';

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
