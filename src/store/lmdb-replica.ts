// The LMDB file as the local copy of a system of record (src/store/pg/): its revision, revisions and
// full copies applied to it, and every record exported from it (migrate-to-postgres). The PostgreSQL
// code reaches these through the StoreCopy interface (interfaces.ts); LmdbStore (lmdb-store.ts) runs
// them in its transactions.
import type { Database, RootDatabase } from 'lmdb';
import type { Invitation } from '../model/invitations.js';
import type { RolloutPlan } from '../release-plans/rollouts.js';
import type { ScheduledChange } from '../release-plans/schedules.js';
import type { DeliveryPayload, Webhook, WebhookDelivery } from '../webhooks/records.js';
import type { Credential, Session } from '../model/sessions.js';
import type { Change, Revision } from './changes.js';
import type { StoreWriter } from './interfaces.js';
import { type Databases, kDbNameList } from './layout.js';

/**
 * The databases a full copy of the system of record replaces: every one of the layout but meta (the
 * schema version, configSeq and the copy's own revision). Each holds only records the system of record
 * keeps (webhooks and their delivery outbox included) and entries derived from them, which applying
 * the copy's records rebuilds; none holds anything of this node alone.
 */
const kReplicatedDbs = kDbNameList.filter((name) => name !== 'meta');

export class LmdbReplica {
  /**
   * `transact`: the store's write transaction (its writer is the store itself); `markConfigChanged`:
   * makes the running transaction move configSeq.
   */
  constructor(
    private readonly root: RootDatabase,
    private readonly db: Databases,
    private readonly transact: <T>(fn: (writer: StoreWriter) => T) => T,
    private readonly markConfigChanged: () => void,
  ) {}

  /** The last revision of the system of record applied to this copy (0: none). */
  replicaRevision(): number {
    return (this.db.meta.get('revision') as number | undefined) ?? 0;
  }

  /** Which system of record this copy follows (its id there), or undefined for a copy of none. */
  replicaOf(): string | undefined {
    return this.db.meta.get('replicaOf') as string | undefined;
  }

  /**
   * Applies revisions in order, in one transaction: those at or below this copy's revision are
   * skipped (another thread or process applied them), a gap is an error (nothing is applied). Returns
   * the copy's revision after.
   */
  applyRevisions(revisions: readonly Revision[]): number {
    return this.transact((writer) => {
      let at = this.replicaRevision();
      for (const { revision, changes } of revisions) {
        if (revision <= at) continue;
        if (revision !== at + 1) throw new Error(`revision ${revision} cannot follow ${at}: the change log has a gap`);
        for (const change of changes) this.applyChange(writer, change);
        at = revision;
      }
      this.db.meta.putSync('revision', at);
      return at;
    });
  }

  /**
   * Replaces everything this copy holds with `records` (a full copy of system of record `source` at
   * `revision`), in one transaction. A copy of the same source already at or past `revision` (another
   * thread applied newer revisions meanwhile) is left as it is: a copy never goes back.
   */
  replaceAll(source: string, revision: number, records: readonly Change[]): void {
    this.transact((writer) => {
      if (this.replicaOf() === source && this.replicaRevision() >= revision) return;
      for (const name of kReplicatedDbs) {
        const db = this.db[name] as Database<unknown, string> | undefined;
        if (db !== undefined) for (const key of [...db.getKeys()]) db.removeSync(key);
      }
      for (const key of ['auditSeq', 'mailSeq', 'demoSeeded']) this.db.meta.removeSync(key);
      for (const change of records) this.applyChange(writer, change);
      this.markConfigChanged();
      this.db.meta.putSync('revision', revision);
      this.db.meta.putSync('replicaOf', source);
    });
  }

  /**
   * Every record, as the changes that would write them into an empty store (migrate-to-postgres), all
   * read in one read transaction: a flag and its audit entry, written together, are exported together
   * even while another process commits, whatever lmdb-js's shared read transaction does meanwhile.
   */
  exportRecords(): Change[] {
    const out: Change[] = [];
    const transaction = this.root.useReadTransaction();
    try {
      const all = <V, K extends string | number | (string | number)[]>(db: Database<V, K> | undefined) =>
        db === undefined ? [] : [...db.getRange({ transaction })];
      for (const { value } of all(this.db.orgs)) out.push({ kind: 'org', value });
      for (const { value } of all(this.db.users)) out.push({ kind: 'user', value });
      for (const { key, value } of all(this.db.members))
        out.push({ kind: 'member', value: { orgId: key[0], userId: key[1], role: value } });
      for (const { value } of all(this.db.projects)) out.push({ kind: 'project', value });
      for (const { value } of all(this.db.audiences)) out.push({ kind: 'audience', value });
      for (const { value } of all(this.db.flags)) out.push({ kind: 'flag', value });
      for (const { value } of all(this.db.tokens)) out.push({ kind: 'token', value });
      for (const { value } of all(this.db.audit)) out.push({ kind: 'audit', value });
      for (const { value } of all(this.db.activity)) out.push({ kind: 'activity', value });
      for (const { value } of all(this.db.usage)) out.push({ kind: 'usage', value });
      for (const { value } of all(this.db.mail)) out.push({ kind: 'mail', value });
      for (const { key, value } of all(this.db.auth)) {
        if (key[0] === 'credential') out.push({ kind: 'credential', value: value as Credential });
        else if (key[0] === 'session') out.push({ kind: 'session', value: value as Session });
        else if (key[0] === 'invitation') out.push({ kind: 'invitation', value: value as Invitation });
      }
      for (const { key, value } of all(this.db.plans)) {
        if (key[0] === 'change' && value) out.push({ kind: 'schedule', value: value as ScheduledChange });
        else if (key[0] === 'rollout' && value) out.push({ kind: 'rollout', value: value as RolloutPlan });
      }
      for (const { key, value } of all(this.db.hooks)) {
        if (key[0] === 'hook' && value) out.push({ kind: 'webhook', value: value as Webhook });
        else if (key[0] === 'delivery' && value) out.push({ kind: 'delivery', value: value as WebhookDelivery });
        else if (key[0] === 'payload' && value) out.push({ kind: 'deliveryPayload', value: value as DeliveryPayload });
      }
      const seeded = this.db.meta.get('demoSeeded', { transaction }) as number | undefined;
      if (seeded !== undefined) out.push({ kind: 'demoSeeded', value: seeded });
    } finally {
      transaction.done();
    }
    return out;
  }

  /** Marks this store as the copy of system of record `source` at `revision` (after migrate-to-postgres copied it there). */
  adoptAsCopy(source: string, revision: number): void {
    this.transact(() => {
      this.db.meta.putSync('revision', revision);
      this.db.meta.putSync('replicaOf', source);
    });
  }

  private applyChange(writer: StoreWriter, change: Change): void {
    switch (change.kind) {
      case 'org':
        return writer.putOrg(change.value);
      case 'user':
        return writer.putUser(change.value);
      case 'member':
        return writer.putMember(change.value);
      case 'project':
        return writer.putProject(change.value);
      case 'audience':
        return writer.putAudience(change.value);
      case 'flag':
        return writer.putFlag(change.value);
      case 'flagDeleted':
        return writer.deleteFlag(change.value);
      case 'token':
        return writer.putToken(change.value);
      case 'activity':
        return writer.putActivity(change.value);
      case 'usage':
        return writer.putUsage(change.value);
      case 'demoSeeded':
        return writer.markDemoSeeded(change.value);
      case 'schedule':
        return writer.putSchedule(change.value);
      case 'rollout':
        return writer.putRollout(change.value);
      case 'webhook':
        return writer.putWebhook(change.value);
      case 'webhookDeleted':
        return writer.deleteWebhook(change.value);
      case 'delivery':
        return writer.putDelivery(change.value);
      case 'deliveryDeleted':
        return writer.deleteDelivery(change.value);
      case 'deliveryPayload':
        return writer.putPayload(change.value);
      case 'deliveryPayloadDeleted':
        return writer.deletePayload(change.value);
      case 'credential':
        return writer.putCredential(change.value);
      case 'session':
        return writer.putSession(change.value);
      case 'sessionEnded':
        return writer.deleteSession(change.value);
      case 'invitation':
        return writer.putInvitation(change.value);
      case 'invitationEnded':
        return writer.deleteInvitation(change.value);
      case 'audit':
        this.db.audit.putSync([change.value.projectId, change.value.seq], change.value);
        return this.raiseSeq('auditSeq', change.value.seq);
      case 'mail':
        writer.putMail(change.value);
        return this.raiseSeq('mailSeq', change.value.seq);
    }
  }

  private raiseSeq(key: 'auditSeq' | 'mailSeq', seq: number): void {
    if (seq > ((this.db.meta.get(key) as number | undefined) ?? 0)) this.db.meta.putSync(key, seq);
  }
}
