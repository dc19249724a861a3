// The batch ids of usage reports already counted (docs/operations.md: Flag usage): a provider or a relay
// sends a batch again until it is answered, perhaps to another node, so a batch is counted only when its
// id is not here, in the writer's transaction that counts it. On PostgreSQL that transaction holds the
// cluster's write lock on a copy brought to its revision, so two nodes cannot both count one batch.
import { keyedRecords } from '../store/record-kinds.js';

export interface CountedBatch {
  /** The sender's id for the batch (a UUID): unique per sender and batch. */
  id: string;
  /** When it was counted, Unix ms: ids are forgotten kBatchIdKeepMs later. */
  countedAt: number;
}

export const kCountedBatchRecords = keyedRecords<CountedBatch>()({
  name: 'countedUsageBatch',
  database: 'usageBatches',
  relayed: false,
  key: (batch) => batch.id,
  deletedAs: 'countedUsageBatchForgotten',
  // Oldest first, for forgetting: ordered by the time each was counted.
  indexes: { age: { keysOf: (batch) => [[batch.countedAt]] } },
});
