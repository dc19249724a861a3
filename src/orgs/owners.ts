// The rule that an organisation keeps an Owner (issue 61: no path lets the last Owner be locked out).
// Every command that changes or ends a membership asks it before it writes: the operator's and the
// console's role changes (org-commands.ts), SCIM's deprovisioning and group roles (src/scim), a
// sign-in's group roles (src/sso). It is asked in the command, not as a write check after it, because
// it judges a change (an Owner taken away), not a state: an organisation the operator makes has no
// Owner until one is added (org add-member), and a write check sees only the store as the command left it.
import type { Role } from '../model/accounts.js';
import type { StoreReader } from '../store/interfaces.js';
import { getRole, listMembers } from '../model/records/member-records.js';

/**
 * Why giving `userId` the role `next` in `orgId` (null: ending their membership) would leave the
 * organisation without an Owner, or null when it keeps one. Only the last Owner's own change is refused.
 */
export function lastOwnerRefusal(r: StoreReader, orgId: string, userId: string, next: Role | null): string | null {
  if (next === 'owner' || getRole(r, orgId, userId) !== 'owner') return null;
  if (listMembers(r, orgId).some((m) => m.role === 'owner' && m.userId !== userId)) return null;
  const change = next === null ? 'remove them' : `make them ${next === 'admin' ? 'an' : 'a'} ${next}`;
  return `An organisation keeps at least one Owner: make someone else Owner first. User ${userId} is the last Owner of organisation ${orgId}, and this would ${change}.`;
}
