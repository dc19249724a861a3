// The rule that keeps an organisation able to sign in (docs/sso.md: SSO only): while its sign-in is SSO
// only, password sign-in is refused to its members but one, the break-glass Owner, who must stay an
// Owner with a password, and whose password sign-in no other organisation of theirs refuses. Checked
// after every writer command (a write check: src/capability/capability.ts WriteCheck), so no surface and
// no sequence of changes (a role, a removal, SCIM's deprovisioning, a settings change) goes around it.
import type { WrittenChange } from '../capability/capability.js';
import { FlagwireError } from '../errors.js';
import type { Membership, User } from '../model/accounts.js';
import type { Credential } from '../model/sessions.js';
import { getRole, kMemberRecords } from '../model/records/member-records.js';
import { getCredential, kCredentialRecords } from '../model/records/session-records.js';
import { kUserRecords } from '../model/records/org-records.js';
import type { StoreReader } from '../store/interfaces.js';
import { kSsoSettingsRecords, type SsoSettings } from './records.js';

/**
 * Why `userId` may not sign in with a password (an organisation of theirs is SSO only), or null.
 * `ssoOnly`: the settings of every SSO-only organisation, when the caller has read them already.
 */
export function passwordSignInRefusal(r: StoreReader, userId: string, ssoOnly: readonly SsoSettings[] = ssoOnlySettings(r)): string | null {
  for (const settings of ssoOnly) {
    if (settings.breakGlassUserId === userId || getRole(r, settings.orgId, userId) === undefined) continue;
    return `Organisation ${settings.orgId} signs in with single sign-on only: sign in through its identity provider (/console/sso/${settings.orgId}/start).`;
  }
  return null;
}

/** The settings of every organisation whose sign-in is SSO only, in key order. */
function ssoOnlySettings(r: StoreReader): SsoSettings[] {
  return r.listKeyed(kSsoSettingsRecords).filter((settings) => settings.ssoOnly);
}

/**
 * Why the organisation of `settings` (one of `ssoOnly`: the settings of every SSO-only organisation,
 * ssoOnlySettings) would have no Owner able to sign in, or null when it has one.
 */
function lockOutProblem(r: StoreReader, settings: SsoSettings, ssoOnly: readonly SsoSettings[]): string | null {
  const org = settings.orgId;
  const userId = settings.breakGlassUserId;
  if (userId === null)
    return `Single sign-on only needs a break-glass Owner (breakGlassUserId) who keeps signing in with a password, so that organisation ${org} is never locked out.`;
  const named = `the break-glass Owner of organisation ${org} (user ${userId})`;
  if (getRole(r, org, userId) !== 'owner')
    return `${named} must stay an Owner while its sign-in is single sign-on only: name another break-glass Owner first, or turn SSO only off.`;
  if (getCredential(r, userId) === undefined)
    return `${named} has no password: set one (flagwire user password) before sign-in becomes single sign-on only.`;
  const elsewhere = passwordSignInRefusal(r, userId, ssoOnly);
  if (elsewhere !== null)
    return `${named} could not sign in with a password: ${elsewhere} Name them its break-glass Owner too, or another Owner here.`;
  return null;
}

/**
 * The person whose break-glass sign-in `change` may take away, for the kinds that can: a membership put
 * or ended (its role, or a new organisation refusing their password), a password, a user; else null. A
 * change of SSO settings is found apart (organisationsDue).
 */
function personOf(change: WrittenChange): string | null {
  switch (change.kind) {
    case kMemberRecords.name:
    case kMemberRecords.removal?.name:
      return (change.value as Membership).userId;
    case kCredentialRecords.name:
      return (change.value as Credential).userId;
    case kUserRecords.name:
      return (change.value as User).id;
    default:
      return null;
  }
}

/**
 * The write check: after a change that may bear on it, every SSO-only organisation it may bear on keeps
 * its break-glass Owner's sign-in (lockOutProblem).
 *
 * Only those organisations are checked, each against every SSO-only one (passwordSignInRefusal), from
 * one reading of their settings: checking all of them after each member's or password's change cost the
 * square of their number (bench/RESULTS.md, sso-lock-out.bench), and more while each check read every
 * organisation's settings again.
 */
export function checkNoLockOut(r: StoreReader, changes: readonly WrittenChange[]): void {
  const people = new Set<string>();
  const settingsChanged: string[] = [];
  for (const change of changes) {
    if (change.kind === kSsoSettingsRecords.name) settingsChanged.push((change.value as SsoSettings).orgId);
    const person = personOf(change);
    if (person !== null) people.add(person);
  }
  if (people.size === 0 && settingsChanged.length === 0) return;
  const ssoOnly = ssoOnlySettings(r);
  for (const settings of organisationsDue(r, ssoOnly, people, settingsChanged)) {
    const problem = lockOutProblem(r, settings, ssoOnly);
    if (problem !== null) throw new FlagwireError('INVALID_REQUEST', `Refused, so that no one is locked out: ${problem}`);
  }
}

/**
 * The SSO-only organisations (of `ssoOnly`, in its order) whose rule the changes may break: those whose
 * break-glass Owner is one of `people`; those whose settings changed; and those whose break-glass Owner is
 * a member of an organisation whose settings changed (turned SSO only, or its break-glass Owner changed,
 * it may now refuse their password).
 */
function organisationsDue(
  r: StoreReader,
  ssoOnly: readonly SsoSettings[],
  people: ReadonlySet<string>,
  settingsChanged: readonly string[],
): SsoSettings[] {
  return ssoOnly.filter((settings) => {
    const owner = settings.breakGlassUserId;
    if (settingsChanged.includes(settings.orgId)) return true;
    if (owner === null) return false;
    return people.has(owner) || settingsChanged.some((orgId) => getRole(r, orgId, owner) !== undefined);
  });
}
