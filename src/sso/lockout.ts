// The rule that keeps an organisation able to sign in (docs/sso.md: SSO only): while its sign-in is SSO
// only, password sign-in is refused to its members but one, the break-glass Owner, who must stay an
// Owner with a password, and whose password sign-in no other organisation of theirs refuses. Checked
// after every writer command (a write check: src/capability/capability.ts WriteCheck), so no surface and
// no sequence of changes (a role, a removal, SCIM's deprovisioning, a settings change) goes around it.
import type { WrittenChange } from '../capability/capability.js';
import { FlagwireError } from '../errors.js';
import { kCredentialRecords, kMemberRecords, kUserRecords } from '../store/record-kinds.js';
import type { StoreReader } from '../store/interfaces.js';
import { kSsoSettingsRecords, type SsoSettings } from './records.js';

/** Why `userId` may not sign in with a password (an organisation of theirs is SSO only), or null. */
export function passwordSignInRefusal(r: StoreReader, userId: string): string | null {
  for (const settings of r.listKeyed(kSsoSettingsRecords)) {
    if (!settings.ssoOnly || settings.breakGlassUserId === userId || r.getRole(settings.orgId, userId) === undefined) continue;
    return `Organisation ${settings.orgId} signs in with single sign-on only: sign in through its identity provider (/console/sso/${settings.orgId}/start).`;
  }
  return null;
}

/** Why the organisation of `settings` would have no Owner able to sign in, or null when it has one. */
export function lockOutProblem(r: StoreReader, settings: SsoSettings): string | null {
  if (!settings.ssoOnly) return null;
  const org = settings.orgId;
  const userId = settings.breakGlassUserId;
  if (userId === null)
    return `Single sign-on only needs a break-glass Owner (breakGlassUserId) who keeps signing in with a password, so that organisation ${org} is never locked out.`;
  const named = `the break-glass Owner of organisation ${org} (user ${userId})`;
  if (r.getRole(org, userId) !== 'owner')
    return `${named} must stay an Owner while its sign-in is single sign-on only: name another break-glass Owner first, or turn SSO only off.`;
  if (r.getCredential(userId) === undefined)
    return `${named} has no password: set one (flagwire user password) before sign-in becomes single sign-on only.`;
  const elsewhere = passwordSignInRefusal(r, userId);
  if (elsewhere !== null)
    return `${named} could not sign in with a password: ${elsewhere} Name them its break-glass Owner too, or another Owner here.`;
  return null;
}

/** The kinds whose change may take the break-glass Owner's sign-in away. */
const kWatched = new Set<string>([
  kSsoSettingsRecords.name,
  kMemberRecords.name,
  kMemberRecords.removal?.name ?? '',
  kCredentialRecords.name,
  kUserRecords.name,
]);

/** The write check: after a change that may bear on it, every SSO-only organisation keeps its break-glass Owner's sign-in. */
export function checkNoLockOut(r: StoreReader, changes: readonly WrittenChange[]): void {
  if (!changes.some((c) => kWatched.has(c.kind))) return;
  for (const settings of r.listKeyed(kSsoSettingsRecords)) {
    const problem = lockOutProblem(r, settings);
    if (problem !== null) throw new FlagwireError('INVALID_REQUEST', `Refused, so that no one is locked out: ${problem}`);
  }
}
