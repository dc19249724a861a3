// A person signed in through one organisation's identity provider acts in that organisation alone
// (docs/sso.md, "What a single sign-on session reaches"). The identity provider is the organisation's:
// its Owner controls what it asserts, so a session it vouches for must not reach the person's other
// organisations, their personal projects or other organisations' invitations. Rather than asking every
// read and every command to remember the rule, the console and the writer hand such a person's requests
// a view of the store in which their memberships elsewhere do not exist: every role check, listing and
// lookup that goes through the store then holds the rule, whatever it was written for.
import type { Principal } from './audit-actor.js';
import type { KeyedKind, StoreReader } from '../store/interfaces.js';
import type { Project } from '../model/projects.js';
import { kProjectRecords } from '../model-records/project-records.js';

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
  /** The records of the keyed kinds the person may not see: their personal projects. */
  const hides = <V>(kind: KeyedKind<V>, value: V | undefined): boolean => {
    if (value === undefined || kind.name !== kProjectRecords.name) return false;
    const project = value as Project;
    return project.orgId === null && project.ownerUserId === userId;
  };
  const hidden: Partial<StoreReader> = {
    getKeyed: (kind, key) => {
      const value = store.getKeyed(kind, key);
      return hides(kind, value) ? undefined : value;
    },
    listKeyed: (kind) => store.listKeyed(kind).filter((value) => !hides(kind, value)),
    listKeyedBy: (kind, index, key, range) => store.listKeyedBy(kind, index, key, range).filter((value) => !hides(kind, value)),
    lookupEntries: (kind, index, key, range) => {
      const entries = store.lookupEntries(kind, index, key, range);
      return kind.name === kProjectRecords.name ? entries.filter((entry) => !hides(kind, store.getKeyed(kind, entry.key))) : entries;
    },
    getRole: (o, u) => (u === userId && o !== orgId ? undefined : store.getRole(o, u)),
    listMembers: (o) => (o === orgId ? store.listMembers(o) : store.listMembers(o).filter((m) => m.userId !== userId)),
    listUserMemberships: (u) =>
      u === userId ? store.listUserMemberships(u).filter((m) => m.orgId === orgId) : store.listUserMemberships(u),
    getInvitation: (id) => {
      const invitation = store.getInvitation(id);
      return invitation === undefined || invitation.orgId === orgId ? invitation : undefined;
    },
    listEmailInvitations: (email) => store.listEmailInvitations(email).filter((i) => i.orgId === orgId),
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
