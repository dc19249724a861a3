// Client keys (issue 58; docs/decisions.md: Client keys): a project's public keys, for code that runs in
// browsers and apps, which can never read rules nor change anything. Each key names the uses it allows
// (a declared list). Kept hashed, as API tokens are, under the hash: a request's key is found in one read.
import { byCreation } from '../model/by-creation.js';
import type { StoreReader, StoreWriter } from '../store/interfaces.js';
import { keyedRecords } from '../store/record-kinds.js';
import type { ClientKey } from './client-key.js';

/** A client key's secret starts `fwc_`: never taken for an API token (`fw_`) or a relay key (`fwr_`). */
export const kClientKeyPrefix = 'fwc';

export const kClientKeyRecords = keyedRecords<ClientKey>()({
  name: 'clientKey',
  database: 'clientKeys',
  // Relayed as API tokens are: a relay answers the clients of evaluation, and Unleash's front-end API,
  // which these keys open, is evaluation's. Only the hash travels.
  relayed: true,
  key: (key) => key.secretHash,
  indexes: {
    /** A project's keys, revoked ones too. */
    project: { keysOf: (key) => [key.projectId] },
    /** A key by its id (revoke). */
    id: { keysOf: (key) => [key.id] },
  },
});

/** The key whose secret hashes to `secretHash`, revoked or not; undefined: no such key. */
export function getClientKeyByHash(r: Pick<StoreReader, 'getKeyed'>, secretHash: string): ClientKey | undefined {
  return r.getKeyed(kClientKeyRecords, secretHash);
}

export function getClientKey(r: StoreReader, id: string): ClientKey | undefined {
  return r.listKeyedBy(kClientKeyRecords, 'id', id)[0];
}

/** A project's keys, revoked ones too, oldest first. */
export function listClientKeys(r: StoreReader, projectId: string): ClientKey[] {
  return r.listKeyedBy(kClientKeyRecords, 'project', projectId).sort(byCreation);
}

export function putClientKey(w: StoreWriter, key: ClientKey): void {
  w.putKeyed(kClientKeyRecords, key);
}
