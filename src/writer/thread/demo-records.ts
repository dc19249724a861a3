// The demo seed's mark as the store keeps it (keyedRecords: when the demo data was seeded, Unix ms, the
// one record of the demo database), declared beside the capabilities' kinds (src/capabilities.ts
// kStoreLayout). Not relayed: a node's own, as the seed is.
import type { StoreReader, StoreWriter } from '../../store/interfaces.js';
import { keyedRecords } from '../../store/record-kinds.js';
import type { RecordOwner } from '../../store/store-layout.js';

export const kDemoSeededRecords = keyedRecords<number>()({
  name: 'demoSeeded',
  database: 'demo',
  relayed: false,
  // The one record of its kind: PostgreSQL's table of current records has kept it under '' since before it was a keyed kind.
  key: () => '',
});

/** The demo seed's storage, as an owner of the store's layout declares it. */
export const kDemoRecordOwner = {
  name: 'demo',
  databases: ['demo'],
  records: [kDemoSeededRecords],
} as const satisfies RecordOwner;

export function isDemoSeeded(r: Pick<StoreReader, 'getKeyed'>): boolean {
  return r.getKeyed(kDemoSeededRecords, '') !== undefined;
}

export function markDemoSeeded(w: Pick<StoreWriter, 'putKeyed'>, at: number): void {
  w.putKeyed(kDemoSeededRecords, at);
}
