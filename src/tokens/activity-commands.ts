// Token activity, denial records and denial e-mail (spec: Authentication 11, Events).
import { newMail } from '../model/mail.js';
import type { TokenActivity, TokenDenialRecord, TokenRequestRecord } from '../model/tokens.js';
import type { StoreWriter } from '../store/interfaces.js';
import { getProject } from '../model/records/project-records.js';
import { getToken, putActivity, getActivity } from '../model/records/token-records.js';
import { getUser } from '../model/records/org-records.js';
import { appendMail } from '../model/records/mail-records.js';
import { listMembers } from '../model/records/member-records.js';

/** How many requests and denials each token keeps. */
export const kActivityKept = 50;
export const kDenialMailIntervalMs = 24 * 3600 * 1000;

export interface ActivityBatch {
  tokenId: string;
  lastUsedAt: number | null;
  recent: TokenRequestRecord[];
  denials: TokenDenialRecord[];
}

/** Merges what the server aggregated since its last flush; queues a denial e-mail at most once per token per 24 h. */
export function recordActivity(w: StoreWriter, input: { batches: ActivityBatch[] }, now: number): { mailed: number } {
  let mailed = 0;
  for (const batch of input.batches) {
    const token = getToken(w, batch.tokenId);
    if (!token) continue;
    const stored: TokenActivity = getActivity(w, token.id) ?? {
      tokenId: token.id,
      lastUsedAt: null,
      recent: [],
      denials: [],
      lastDenialMailAt: null,
    };
    const next: TokenActivity = {
      ...stored,
      lastUsedAt: Math.max(stored.lastUsedAt ?? 0, batch.lastUsedAt ?? 0) || null,
      recent: [...batch.recent.slice().reverse(), ...stored.recent].slice(0, kActivityKept),
      denials: [...batch.denials.slice().reverse(), ...stored.denials].slice(0, kActivityKept),
    };
    const latest = batch.denials[batch.denials.length - 1];
    if (latest && (stored.lastDenialMailAt === null || now - stored.lastDenialMailAt >= kDenialMailIntervalMs)) {
      next.lastDenialMailAt = now;
      mailed += queueDenialMail(w, token.id, latest, now);
    }
    putActivity(w, next);
  }
  return { mailed };
}

function queueDenialMail(w: StoreWriter, tokenId: string, denial: TokenDenialRecord, now: number): number {
  const token = getToken(w, tokenId)!;
  const project = getProject(w, token.projectId);
  if (!project || project.orgId === null) return 0;
  const recipients = new Set<string>();
  const creator = getUser(w, token.createdBy);
  if (creator) recipients.add(creator.email);
  for (const member of listMembers(w, project.orgId)) {
    if (member.role !== 'owner') continue;
    const owner = getUser(w, member.userId);
    if (owner) recipients.add(owner.email);
  }
  const text = [
    `A request with the API token "${token.name}" (${token.id}) of project "${project.name}" was refused.`,
    `Reason: ${denial.reason}`,
    `Request: ${denial.method} ${denial.path} at ${new Date(denial.at).toISOString()}`,
    "The token's console page lists recent denials. Further denials of this token are not e-mailed for 24 hours.",
  ].join('\n');
  for (const to of recipients) {
    appendMail(w, newMail({ at: now, to, orgId: project.orgId, subject: `Flagwire: API token "${token.name}" was refused`, text }));
  }
  return recipients.size;
}
