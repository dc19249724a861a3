// The writer command that counts a usage report once per batch id (records.ts): the counts are added as
// the eval workers' are (src/flags/records/usage-commands.ts addCounts), and the id kept, in one transaction.
// The sender is authorised again as the report is applied: a provider's token (read permission is enough)
// or a relay's key, as the transaction reads them.
import { FlagwireError } from '../errors.js';
import { addCounts, type UsageCount } from '../flags/records/usage-commands.js';
import { authorizeToken, unknownToken } from '../model/records/token-access.js';
import { getToken } from '../model/records/token-records.js';
import { kRelayKeyRecords } from '../relay/records.js';
import type { StoreWriter } from '../store/interfaces.js';
import { kCountedBatchRecords } from './records.js';

/** How long a counted batch's id is kept: a sender gives a batch up sooner (src/provider/usage-reporter.ts kGiveUpMs). */
export const kBatchIdKeepMs = 24 * 3600 * 1000;
/** Ids forgotten per report at most: forgetting keeps pace with reports and no report pays for a backlog. */
const kForgetPerReport = 64;

export type UsageSender = { kind: 'token'; tokenId: string; projectId: string } | { kind: 'relay'; keyHash: string };

export interface UsageReportInput {
  sender: UsageSender;
  batchId: string;
  /** Summed per flag, environment and hour by the route. */
  counts: UsageCount[];
}

export function countUsageReport(w: StoreWriter, input: UsageReportInput, now: number): { counted: boolean; flags: number } {
  authorizeSender(w, input.sender, now);
  forgetOldBatches(w, now);
  if (w.getKeyed(kCountedBatchRecords, input.batchId) !== undefined) return { counted: false, flags: 0 };
  w.putKeyed(kCountedBatchRecords, { id: input.batchId, countedAt: now });
  const projectId = input.sender.kind === 'token' ? input.sender.projectId : null;
  return { counted: true, flags: addCounts(w, input.counts, projectId) };
}

function authorizeSender(w: StoreWriter, sender: UsageSender, now: number): void {
  if (sender.kind === 'token') {
    const token = getToken(w, sender.tokenId);
    if (token === undefined) throw unknownToken();
    authorizeToken(w, token, now);
    return;
  }
  const key = w.getKeyed(kRelayKeyRecords, sender.keyHash);
  if (key === undefined || key.revokedAt !== null)
    throw new FlagwireError('TOKEN_REVOKED', 'This relay key was revoked or removed on this node.');
}

function forgetOldBatches(w: StoreWriter, now: number): void {
  const old = w.listKeyedBy(kCountedBatchRecords, 'age', [], { through: [now - kBatchIdKeepMs], limit: kForgetPerReport });
  for (const batch of old) w.deleteKeyed(kCountedBatchRecords, batch);
}
