// A change set: the records one write transaction put or deleted, as data. When PostgreSQL is the
// system of record (src/store/pg/), the writer records the change set of each group of commands while
// it runs them against the node's LMDB copy, stores it in PostgreSQL under the transaction's
// revision, and every node applies it to its LMDB copy (StoreCopy.applyRevisions, lmdb-replica.ts). Derived entries
// (token hashes, the project index, the mail due index, sequence counters, configSeq) are not in it:
// applying a change rebuilds them, so the change set is the records and nothing else.
import type { Membership, Org, User } from '../model/accounts.js';
import type { AuditEntry } from '../model/audit.js';
import type { Flag, FlagUsage } from '../flags/records.js';
import type { Invitation } from '../model/invitations.js';
import type { MailMessage } from '../model/mail.js';
import type { Credential, Session } from '../model/sessions.js';
import type { Audience, Project } from '../model/projects.js';
import type { RolloutPlan } from '../release-plans/rollouts.js';
import type { ScheduledChange } from '../release-plans/schedules.js';
import type { DeliveryPayload, Webhook, WebhookDelivery } from '../webhooks/records.js';
import type { Token, TokenActivity } from '../model/tokens.js';

export type Change =
  | { kind: 'org'; value: Org }
  | { kind: 'user'; value: User }
  | { kind: 'member'; value: Membership }
  | { kind: 'project'; value: Project }
  | { kind: 'audience'; value: Audience }
  | { kind: 'flag'; value: Flag }
  /** The flag and its usage are removed. */
  | { kind: 'flagDeleted'; value: Flag }
  | { kind: 'token'; value: Token }
  | { kind: 'audit'; value: AuditEntry }
  | { kind: 'activity'; value: TokenActivity }
  | { kind: 'usage'; value: FlagUsage }
  | { kind: 'mail'; value: MailMessage }
  /** Web console sign-in: a user's password hash, a session (its id hashed), a session ended. */
  | { kind: 'credential'; value: Credential }
  | { kind: 'session'; value: Session }
  | { kind: 'sessionEnded'; value: Session }
  /** An invitation to an organisation made, and one accepted, declined or dropped when expired. */
  | { kind: 'invitation'; value: Invitation }
  | { kind: 'invitationEnded'; value: Invitation }
  /** A scheduled change made, applied, failed or cancelled (src/release-plans). */
  | { kind: 'schedule'; value: ScheduledChange }
  /** A progressive rollout started, stepped, paused, resumed, completed or rolled back. */
  | { kind: 'rollout'; value: RolloutPlan }
  /** A webhook made (src/webhooks); one deleted, with its delivery log. */
  | { kind: 'webhook'; value: Webhook }
  | { kind: 'webhookDeleted'; value: Webhook }
  /** A delivery queued, claimed, tried, delivered or given up; one dropped from the log. */
  | { kind: 'delivery'; value: WebhookDelivery }
  | { kind: 'deliveryDeleted'; value: WebhookDelivery }
  /** A change's delivery bodies stored (once for all its webhooks); dropped with its last delivery or by the bound. */
  | { kind: 'deliveryPayload'; value: DeliveryPayload }
  | { kind: 'deliveryPayloadDeleted'; value: DeliveryPayload }
  /** When the demo data was seeded (Unix ms). */
  | { kind: 'demoSeeded'; value: number };

/** One committed revision of the system of record: its number and what it changed. */
export interface Revision {
  revision: number;
  changes: Change[];
}

/**
 * The record a change puts, as PostgreSQL's table of current records keys it (kind, key); a deletion
 * names the records it removes. The same kinds are the records a full copy reads back as changes.
 */
export function recordsOf(change: Change): { put: { kind: string; key: string } | null; remove: { kind: string; key: string }[] } {
  switch (change.kind) {
    case 'member':
      return { put: { kind: 'member', key: JSON.stringify([change.value.orgId, change.value.userId]) }, remove: [] };
    case 'audit':
    case 'mail':
      return { put: { kind: change.kind, key: String(change.value.seq) }, remove: [] };
    case 'activity':
      return { put: { kind: 'activity', key: change.value.tokenId }, remove: [] };
    case 'usage':
      return { put: { kind: 'usage', key: change.value.flagId }, remove: [] };
    case 'credential':
      return { put: { kind: 'credential', key: change.value.userId }, remove: [] };
    case 'session':
      return { put: { kind: 'session', key: change.value.idHash }, remove: [] };
    case 'sessionEnded':
      return { put: null, remove: [{ kind: 'session', key: change.value.idHash }] };
    case 'invitationEnded':
      return { put: null, remove: [{ kind: 'invitation', key: change.value.id }] };
    case 'deliveryDeleted':
      return { put: null, remove: [{ kind: 'delivery', key: change.value.id }] };
    case 'webhookDeleted':
      return { put: null, remove: [{ kind: 'webhook', key: change.value.id }] };
    case 'deliveryPayload':
      return { put: { kind: 'deliveryPayload', key: String(change.value.auditSeq) }, remove: [] };
    case 'deliveryPayloadDeleted':
      return { put: null, remove: [{ kind: 'deliveryPayload', key: String(change.value.auditSeq) }] };
    case 'demoSeeded':
      return { put: { kind: 'demoSeeded', key: '' }, remove: [] };
    case 'flagDeleted':
      return {
        put: null,
        remove: [
          { kind: 'flag', key: change.value.id },
          { kind: 'usage', key: change.value.id },
        ],
      };
    default:
      return { put: { kind: change.kind, key: change.value.id }, remove: [] };
  }
}
