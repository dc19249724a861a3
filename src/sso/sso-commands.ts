// Single sign-on's writer commands (docs/sso.md): an Owner's change to the organisation's OIDC settings
// and their removal; a sign-in's state marked used at the browser's return (once: a replayed state is
// refused); and the sign-in itself, once the ID token is verified: the
// person found or made, their role from the groups the token names, and a console session, in one change.
import { type Actor, personOrOperator, type Principal, tokenActor } from '../actor/audit-actor.js';
import { FlagwireError } from '../errors.js';
import { highestMappedRole, type Role, type User } from '../model/accounts.js';
import { randomId } from '../model/ids.js';
import { requireOrg, requireUser } from '../model/records/lookups.js';
import { checkedBody, type ReceivedBody } from '../model/request-body.js';
import { authorizeTokenWrite } from '../model/records/token-access.js';
import { compileValidator } from '../model/validation.js';
import { auditMembership, auditOrg } from '../orgs/org-commands.js';
import { kScimSettingsRecords } from '../scim/records.js';
import { sessionStart, type SessionStartInput } from '../sessions/session-commands.js';
import type { StoreWriter } from '../store/interfaces.js';
import { lastOwnerRefusal } from '../orgs/owners.js';
import { kSsoFlowRecords, kSsoIdentityRecords, kSsoSettingsRecords, type SsoSettings, type SsoUsedState } from './records.js';
import { SsoSettingsPatch, type SsoSettingsView } from './schemas.js';
import { putUser, findUserByEmail } from '../model/records/org-records.js';
import { getRole, putMember } from '../model/records/member-records.js';

/** How long a sign-in may take at the identity provider. */
export const kFlowMs = 10 * 60 * 1000;
export const kDefaultGroupsClaim = 'groups';

/** Where an organisation's people start a sign-in, and the redirect URI its identity provider sends them back to. */
export const ssoStartPath = (orgId: string) => `/console/sso/${orgId}/start`;
export const kSsoCallbackPath = '/console/sso/callback';

const kPatchValidator = compileValidator(SsoSettingsPatch, { quoteKeys: false });

/** What every surface shows of the settings: never the client secret. */
export function ssoView(orgId: string, settings: SsoSettings | undefined): SsoSettingsView {
  return {
    orgId,
    enabled: settings !== undefined,
    issuer: settings?.issuer ?? null,
    clientId: settings?.clientId ?? null,
    clientSecretSet: settings !== undefined,
    scopes: settings?.scopes ?? [],
    groupsClaim: settings?.groupsClaim ?? kDefaultGroupsClaim,
    groupRoles: settings?.groupRoles ?? {},
    createMembers: settings?.createMembers ?? false,
    ssoOnly: settings?.ssoOnly ?? false,
    breakGlassUserId: settings?.breakGlassUserId ?? null,
    signInPath: ssoStartPath(orgId),
    redirectPath: kSsoCallbackPath,
    updatedAt: settings?.updatedAt ?? null,
  };
}

/**
 * Only an Owner changes single sign-on (its groups may give the Owner role, and SSO only decides who may
 * sign in): a person who is one, the operator at the command line, or a Management API write token of a
 * project of the organisation whose creator is one now (the token acts for the person who made it).
 */
function requireOwner(w: StoreWriter, orgId: string, principal: Principal, now: number): Actor {
  requireOrg(w, orgId);
  if (principal.kind === 'token') {
    const { token, project } = authorizeTokenWrite(w, principal.tokenId, now);
    if (project.orgId !== orgId) throw new FlagwireError('FORBIDDEN', `This token's project is not of organisation ${orgId}.`);
    if (getRole(w, orgId, token.createdBy) !== 'owner')
      throw new FlagwireError(
        'FORBIDDEN',
        `Single sign-on is an Owner's to change: this token's creator (${token.createdBy}) is not an Owner of organisation ${orgId}.`,
      );
    return tokenActor(token);
  }
  const person = personOrOperator(w, principal, 'change single sign-on');
  if (person !== null && getRole(w, orgId, person.userId) !== 'owner')
    throw new FlagwireError(
      'FORBIDDEN',
      `Only an Owner of organisation ${orgId} may change single sign-on; user ${person.userId} is not one.`,
    );
  return person ?? { id: 'console', name: 'console', environments: [] };
}

/** Why `issuer` is not an issuer Flagwire signs in with, or null: HTTPS, or HTTP on this machine's loopback (a test's, a developer's). */
export function issuerProblem(issuer: string): string | null {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return `issuer "${issuer}" is not a URL`;
  }
  const loopback = url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    return `issuer must be an https URL (OpenID Connect Discovery §3), not "${issuer}"`;
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')
    return `issuer may hold no query, fragment or credentials: "${issuer}"`;
  return null;
}

/** `sso set`: changes the keys the body names; the first change must name the issuer, the client id and the client secret. */
export function ssoSet(
  w: StoreWriter,
  input: { orgId: string; principal: Principal; received: ReceivedBody },
  now: number,
): SsoSettingsView {
  const actor = requireOwner(w, input.orgId, input.principal, now);
  const patch = checkedBody(input.received, kPatchValidator);
  const before = w.getKeyed(kSsoSettingsRecords, input.orgId);
  const missing = (['issuer', 'clientId', 'clientSecret'] as const).filter((k) => before === undefined && patch[k] === undefined);
  if (missing.length > 0)
    throw new FlagwireError('INVALID_REQUEST', `Single sign-on is not configured for ${input.orgId} yet: send ${missing.join(', ')} too.`);
  const issuer = patch.issuer ?? before!.issuer;
  const problem = issuerProblem(issuer);
  if (problem !== null) throw new FlagwireError('INVALID_REQUEST', problem);
  const scim = w.getKeyed(kScimSettingsRecords, input.orgId) !== undefined;
  if (scim && patch.createMembers === true)
    throw new FlagwireError(
      'INVALID_REQUEST',
      `SCIM provisions organisation ${input.orgId}'s members: single sign-on does not create members while it is on (createMembers stays false).`,
    );
  const breakGlassUserId = patch.breakGlassUserId === undefined ? (before?.breakGlassUserId ?? null) : patch.breakGlassUserId;
  if (breakGlassUserId !== null && patch.breakGlassUserId !== undefined) {
    requireUser(w, breakGlassUserId);
    if (getRole(w, input.orgId, breakGlassUserId) !== 'owner')
      throw new FlagwireError(
        'INVALID_REQUEST',
        `The break-glass user ${breakGlassUserId} must be an Owner of organisation ${input.orgId}.`,
      );
  }
  const after: SsoSettings = {
    orgId: input.orgId,
    issuer,
    clientId: patch.clientId ?? before!.clientId,
    clientSecret: patch.clientSecret ?? before!.clientSecret,
    scopes: patch.scopes ?? before?.scopes ?? ['email', 'profile'],
    groupsClaim: patch.groupsClaim ?? before?.groupsClaim ?? kDefaultGroupsClaim,
    groupRoles: patch.groupRoles ?? before?.groupRoles ?? {},
    createMembers: !scim && (patch.createMembers ?? before?.createMembers ?? false),
    ssoOnly: patch.ssoOnly ?? before?.ssoOnly ?? false,
    breakGlassUserId,
    createdAt: before?.createdAt ?? now,
    updatedAt: now,
  };
  // The lock-out rule (lockout.ts) runs after this command, as after every one, and refuses it all.
  w.putKeyed(kSsoSettingsRecords, after);
  auditOrg(w, actor, 'sso.configure', input.orgId, auditedChanges(before, after), now);
  return ssoView(input.orgId, after);
}

/** What changed, as the audit log says it: the client secret only as changed or not. */
function auditedChanges(before: SsoSettings | undefined, after: SsoSettings): Record<string, { before: unknown; after: unknown }> {
  const changes: Record<string, { before: unknown; after: unknown }> = {};
  for (const key of Object.keys(after) as (keyof SsoSettings)[]) {
    if (key === 'createdAt' || key === 'updatedAt' || key === 'orgId') continue;
    const was = before?.[key] ?? null;
    if (JSON.stringify(was) === JSON.stringify(after[key])) continue;
    changes[key] = key === 'clientSecret' ? { before: was === null ? null : 'set', after: 'changed' } : { before: was, after: after[key] };
  }
  return changes;
}

/** `sso remove`: single sign-on off; people sign in with passwords again (a person made by it sets one through `user password`). */
export function ssoRemove(
  w: StoreWriter,
  input: { orgId: string; principal: Principal },
  now: number,
): { orgId: string; removed: boolean } {
  const actor = requireOwner(w, input.orgId, input.principal, now);
  const settings = w.getKeyed(kSsoSettingsRecords, input.orgId);
  if (settings !== undefined) {
    w.deleteKeyed(kSsoSettingsRecords, settings);
    auditOrg(w, actor, 'sso.remove', input.orgId, { sso: { before: settings.issuer, after: null } }, now);
  }
  return { orgId: input.orgId, removed: settings !== undefined };
}

function requireSettings(w: StoreWriter, orgId: string): SsoSettings {
  const settings = w.getKeyed(kSsoSettingsRecords, orgId);
  if (settings === undefined) throw new FlagwireError('NOT_FOUND', `Organisation ${orgId} does not sign in with single sign-on.`);
  return settings;
}

/**
 * A sign-in's return, once its sealed cookie opened (flow-cookie.ts): its state marked used, so that a
 * state is good once, on every node; the organisation's expired marks dropped. Only a browser that was
 * sent to the identity provider and came back with its cookie writes here: a start stores nothing.
 */
export function ssoStateUse(w: StoreWriter, input: SsoUsedState, now: number): { used: true } {
  if (w.getKeyed(kSsoFlowRecords, input.stateHash) !== undefined)
    throw new FlagwireError(
      'SIGN_IN_FAILED',
      'This sign-in is not one under way: it was used already, or never started here. Start again.',
    );
  if (input.expiresAt <= now)
    throw new FlagwireError('SIGN_IN_FAILED', 'This sign-in took too long at the identity provider. Start again.');
  for (const old of w.listKeyedBy(kSsoFlowRecords, 'org', input.orgId)) if (old.expiresAt <= now) w.deleteKeyed(kSsoFlowRecords, old);
  w.putKeyed(kSsoFlowRecords, { stateHash: input.stateHash, orgId: input.orgId, expiresAt: input.expiresAt });
  return { used: true };
}

/** What a verified ID token says of the person, and the session to start for them. */
export interface SsoSignInInput {
  orgId: string;
  /** The ID token's `iss` and `sub`: who the person is at the identity provider. */
  issuer: string;
  subject: string;
  email: string | null;
  name: string | null;
  groups: string[];
  session: Omit<SessionStartInput, 'userId' | 'orgId'>;
}

/** Who single sign-on's own changes (a membership made, a role from the groups) are audited as. */
function ssoActor(orgId: string): Actor {
  return { id: `sso:${orgId}`, name: 'Single sign-on', environments: [] };
}

/**
 * A verified sign-in: the person (by their subject recorded for this organisation, else by e-mail address
 * among the organisation's members, else made where createMembers allows), who must be a member now,
 * their role from their groups, and a console session confined to this organisation.
 */
export function ssoSignIn(w: StoreWriter, input: SsoSignInInput, now: number): { user: User } {
  const settings = requireSettings(w, input.orgId);
  if (settings.issuer !== input.issuer)
    throw new FlagwireError('SIGN_IN_FAILED', 'The identity provider changed during this sign-in. Start again.');
  const subject = `${input.issuer} ${input.subject}`;
  const scim = w.getKeyed(kScimSettingsRecords, input.orgId) !== undefined;
  const linked = w.getKeyed(kSsoIdentityRecords, `${input.orgId}/${subject}`);
  const user = linked !== undefined ? requireUser(w, linked.userId) : findOrMakePerson(w, settings, input, scim, now);
  // A subject recorded before is still only a member's: one removed (by an Admin, or deprovisioned by
  // SCIM: active false or DELETE) signs in no more, though the identity provider still vouches for them.
  if (getRole(w, input.orgId, user.id) === undefined)
    throw new FlagwireError(
      'FORBIDDEN',
      scim
        ? `${user.email} is not a member of organisation ${input.orgId}: its identity provider's SCIM provisioning deprovisioned them.`
        : `${user.email} is not a member of organisation ${input.orgId} any more: an Owner invites them again.`,
    );
  if (linked === undefined) w.putKeyed(kSsoIdentityRecords, { orgId: input.orgId, subject, userId: user.id });
  // SCIM provisions the roles where it is on; without mappings, roles are Flagwire's to give.
  if (!scim && Object.keys(settings.groupRoles).length > 0) applyGroups(w, settings, user.id, input.groups, now);
  // The session reaches this organisation alone: its identity provider vouches for nothing else (org-scope.ts).
  sessionStart(w, { ...input.session, userId: user.id, orgId: input.orgId }, now);
  return { user };
}

function findOrMakePerson(w: StoreWriter, settings: SsoSettings, input: SsoSignInInput, scim: boolean, now: number): User {
  const orgId = settings.orgId;
  const email = input.email?.trim() ?? '';
  if (email === '')
    throw new FlagwireError('SIGN_IN_FAILED', 'The identity provider sent no e-mail address for this person: ask for the "email" scope.');
  const found = findUserByEmail(w, email);
  if (found !== undefined) {
    // A person's session reaches every organisation of theirs: an identity provider signs in only its own members.
    if (getRole(w, orgId, found.id) !== undefined) return found;
    throw new FlagwireError(
      'FORBIDDEN',
      `${email} has a Flagwire account that is not a member of organisation ${orgId}: an Owner invites them first (an identity provider never signs in a person of other organisations).`,
    );
  }
  if (scim || !settings.createMembers)
    throw new FlagwireError(
      'FORBIDDEN',
      scim
        ? `${email} is not provisioned into organisation ${orgId}: its identity provider's SCIM provisioning adds members.`
        : `${email} is not a member of organisation ${orgId}: an Owner invites them, or turns on createMembers.`,
    );
  const user: User = { id: `usr_${randomId(12)}`, email, name: (input.name ?? email.split('@')[0]!).slice(0, 100), createdAt: now };
  putUser(w, user);
  const role = highestMappedRole(settings.groupRoles, input.groups) ?? 'viewer';
  putMember(w, { orgId, userId: user.id, role });
  auditOrg(w, ssoActor(orgId), 'sso.member.create', orgId, { [`user:${user.id}`]: { before: null, after: { email, role } } }, now);
  return user;
}

/**
 * The role the groups give now (Viewer for none mapped), audited as member.role. The break-glass Owner's
 * role is Flagwire's alone, and the last Owner keeps the role: a sign-in never locks anyone out.
 */
function applyGroups(w: StoreWriter, settings: SsoSettings, userId: string, groups: readonly string[], now: number): void {
  const orgId = settings.orgId;
  const current = getRole(w, orgId, userId);
  const role: Role = highestMappedRole(settings.groupRoles, groups) ?? 'viewer';
  if (current === undefined || current === role || settings.breakGlassUserId === userId) return;
  // A sign-in is not refused for it: the last Owner signs in and keeps the role (owners.ts).
  if (lastOwnerRefusal(w, orgId, userId, role) !== null) return;
  putMember(w, { orgId, userId, role });
  auditMembership(w, ssoActor(orgId), 'member.role', orgId, `role of user:${userId}`, { before: current, after: role }, now);
}
