// A person signed in through one organisation's identity provider acts in that organisation alone
// (docs/sso.md, "What a single sign-on session reaches"). The identity provider is the organisation's:
// its Owner controls what it asserts, so a session it vouches for must not reach the person's other
// organisations, their personal projects or other organisations' invitations. Rather than asking every
// read and every command to remember the rule, the console and the writer hand such a person's requests
// a view of the store in which their memberships elsewhere do not exist: every role check, listing and
// lookup that goes through the store then holds the rule, whatever it was written for.
import type { Principal } from './audit-actor.js';
import type { KeyedKind, StoreReader } from '../store/interfaces.js';
import type { Membership } from '../model/accounts.js';
import type { Invitation } from '../model/invitations.js';
import type { Project } from '../model/projects.js';
import { kInvitationRecords } from '../model/records/invitation-records.js';
import { kMemberRecords } from '../model/records/member-records.js';
import { kProjectRecords } from '../model/records/project-records.js';

/** The organisation a user principal is confined to, or null when it reaches every organisation of the person's. */
export interface OrgScope {
  userId: string;
  orgId: string;
}

/** The scope a principal asks with: a user signed in by single sign-on; null for everyone else. */
export function scopeOf(principal: Principal | undefined): OrgScope | null {
  if (principal === undefined || principal.kind !== 'user' || principal.viaOrgId === undefined) return null;
  return { userId: principal.userId, orgId: principal.viaOrgId };
}

/**
 * `store` as `scope`'s person may see it: their role, memberships, personal projects and invitations in
 * other organisations are absent; everything else is the store's own. Off the hot path (console requests
 * and writer commands of a signed-in person), so a Proxy's indirection costs nothing that matters.
 */
export function scopedStore<R extends StoreReader>(store: R, scope: OrgScope): R {
  const { userId, orgId } = scope;
  /**
   * The records the person may not see, by kind: their personal projects, their memberships of other
   * organisations, and other organisations' invitations.
   */
  const hiddenOf = new Map<string, (value: never) => boolean>([
    [kProjectRecords.name, (project: Project) => project.orgId === null && project.ownerUserId === userId],
    [kMemberRecords.name, (member: Membership) => member.userId === userId && member.orgId !== orgId],
    [kInvitationRecords.name, (invitation: Invitation) => invitation.orgId !== orgId],
  ]);
  const hides = <V>(kind: KeyedKind<V>, value: V | undefined): boolean =>
    value !== undefined && (hiddenOf.get(kind.name) as ((value: V) => boolean) | undefined)?.(value) === true;
  const hidden: Partial<StoreReader> = {
    getKeyed: (kind, key) => {
      const value = store.getKeyed(kind, key);
      return hides(kind, value) ? undefined : value;
    },
    listKeyed: (kind, limit) => store.listKeyed(kind, limit).filter((value) => !hides(kind, value)),
    listKeyedBy: (kind, index, key, range) => store.listKeyedBy(kind, index, key, range).filter((value) => !hides(kind, value)),
    lookupEntries: (kind, index, key, range) => {
      const entries = store.lookupEntries(kind, index, key, range);
      return hiddenOf.has(kind.name) ? entries.filter((entry) => !hides(kind, store.getKeyed(kind, entry.key))) : entries;
    },
  };
  return new Proxy(store, {
    get(target, key) {
      if (Object.hasOwn(hidden, key)) return hidden[key as keyof StoreReader];
      // Bound to the store itself: its methods use its private fields, which a Proxy as `this` lacks.
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
