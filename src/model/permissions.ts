// Who may do what, and what state a token is in: the one home of these rules (spec: Authentication,
// Management API 6; States and transitions, tokens). The writer's commands enforce them, and the
// Management API, the command line's output and the web console (which sends the browser page what
// the signed-in user may do) ask the same functions, so no two places can disagree.
//
// A Viewer changes nothing: a token's creator who is now a Viewer can no longer rotate or revoke it
// (an Admin or Owner can). Whether the organisation's plan lets tokens change at all is a separate
// rule (plans.ts: isManagementEligible), checked beside these.
import type { Role } from './accounts.js';
import type { Token } from './tokens.js';

/** A user's standing in a project: a role in its organisation, or `personal` for the owner of a personal project. */
export type ProjectRole = Role | 'personal';

export const kActions = [
  /** See a project, its flags, tokens, audit log, members. */
  'read',
  /** Create, change, delete flags. */
  'editFlags',
  /** Environments and audiences. */
  'configure',
  'createToken',
  /** Rotate or revoke a token (the creator of it, or see manageAnyToken). */
  'rotateToken',
  'revokeToken',
  /** Invite, add, change and remove members. */
  'manageMembers',
  /** Give or take the Owner role. */
  'grantOwner',
] as const;
export type Action = (typeof kActions)[number];

/** How a role holds an action: `yes`, `no`, or `creator` (only on what the user created). */
export type Grant = 'yes' | 'no' | 'creator';

/** The roles × actions table. */
export const kPermissions: Readonly<Record<ProjectRole, Readonly<Record<Action, Grant>>>> = {
  owner: {
    read: 'yes',
    editFlags: 'yes',
    configure: 'yes',
    createToken: 'yes',
    rotateToken: 'yes',
    revokeToken: 'yes',
    manageMembers: 'yes',
    grantOwner: 'yes',
  },
  admin: {
    read: 'yes',
    editFlags: 'yes',
    configure: 'yes',
    createToken: 'yes',
    rotateToken: 'yes',
    revokeToken: 'yes',
    manageMembers: 'yes',
    grantOwner: 'no',
  },
  editor: {
    read: 'yes',
    editFlags: 'yes',
    configure: 'no',
    createToken: 'yes',
    rotateToken: 'creator',
    revokeToken: 'creator',
    manageMembers: 'no',
    grantOwner: 'no',
  },
  viewer: {
    read: 'yes',
    editFlags: 'no',
    configure: 'no',
    createToken: 'no',
    rotateToken: 'no',
    revokeToken: 'no',
    manageMembers: 'no',
    grantOwner: 'no',
  },
  // A personal project has no organisation, so no tokens and no members; its owner changes everything else.
  personal: {
    read: 'yes',
    editFlags: 'yes',
    configure: 'yes',
    createToken: 'no',
    rotateToken: 'no',
    revokeToken: 'no',
    manageMembers: 'no',
    grantOwner: 'no',
  },
};

export interface ActionContext {
  /** Whether the user created the thing acted on (a token). */
  isCreator?: boolean;
}

/** Whether a user of `role` (undefined: not a member) may do `action`. */
export function can(role: ProjectRole | undefined, action: Action, context: ActionContext = {}): boolean {
  if (role === undefined) return false;
  const grant = kPermissions[role][action];
  return grant === 'yes' || (grant === 'creator' && context.isCreator === true);
}

/** Whether the user may rotate or revoke any token of the project, not only their own. */
export function canManageAnyToken(role: ProjectRole | undefined): boolean {
  return can(role, 'revokeToken') && can(role, 'rotateToken');
}

/** Whether `userId` of `role` may rotate or revoke `token` (the writer checks again that it is not already revoked). */
export function canManageToken(
  role: ProjectRole | undefined,
  verb: 'rotate' | 'revoke',
  token: Pick<Token, 'createdBy'>,
  userId: string,
): boolean {
  return can(role, verb === 'rotate' ? 'rotateToken' : 'revokeToken', { isCreator: token.createdBy === userId });
}

/** Spelled as the refusals name a role: `is viewer`, `is not a member`. */
export function describeRole(role: ProjectRole | undefined): string {
  return role ? `is ${role}` : 'is not a member';
}

export type TokenStatus = 'active' | 'revoked' | 'expired';

/**
 * Whether a revoked token's secret still authenticates: a rotation with a grace period keeps the old
 * secret working until `graceEndsAt`, so applications can move to the new one without an outage.
 */
export function inRotationGrace(token: Pick<Token, 'revokedAt' | 'graceEndsAt'>, now: number): boolean {
  return token.revokedAt !== null && token.graceEndsAt !== undefined && now < token.graceEndsAt;
}

/** A revoked token is revoked whatever its expiry; otherwise it has expired from the instant `expiresAt` is reached (0: never). */
export function tokenStatus(token: Pick<Token, 'revokedAt' | 'expiresAt'>, now: number): TokenStatus {
  return token.revokedAt !== null ? 'revoked' : expiryStatus(token, now);
}

/**
 * The status a token's secret authenticates with (the Management API's 401s): in a rotation's grace
 * period the old secret acts as the token did before (its expiry still counts); after it, and for any
 * other revoked token, revoked.
 */
export function secretStatus(token: Pick<Token, 'revokedAt' | 'expiresAt' | 'graceEndsAt'>, now: number): TokenStatus {
  return token.revokedAt === null || inRotationGrace(token, now) ? expiryStatus(token, now) : 'revoked';
}

function expiryStatus(token: Pick<Token, 'expiresAt'>, now: number): 'active' | 'expired' {
  return token.expiresAt !== 0 && token.expiresAt <= now ? 'expired' : 'active';
}

/** Whether a token holds one of the project's slots: every token not revoked, expired ones included (spec: Limits). */
export function holdsTokenSlot(token: Pick<Token, 'revokedAt'>): boolean {
  return token.revokedAt === null;
}
