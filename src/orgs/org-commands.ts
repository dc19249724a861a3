// Commands for organisations, users and memberships: the operator's at the command line, and the web
// console's, given its signed-in user as who asks.
import { FlagwireError } from '../errors.js';
import { kPlans, kRoles, type Membership, type Org, type Plan, type Role, type Standing, type User } from '../model/accounts.js';
import { randomId } from '../model/ids.js';
import { requireOrg, requireUser } from '../model/records/lookups.js';
import { can, describeRole } from '../model/permissions.js';
import type { NewAuditEntry, StoreWriter } from '../store/interfaces.js';
import { requireEmail, requireName } from '../model/input-checks.js';
import { type Actor, personOrOperator, type Principal, writeAudit } from '../actor/audit-actor.js';
import { lastOwnerRefusal } from './owners.js';
import { listOrgProjects } from '../model/records/project-records.js';
import { putOrg, findOrgByName, putUser, findUserByEmail } from '../model/records/org-records.js';
import type { MemberAuditAction } from './audit-actions.js';
import { getRole, putMember } from '../model/records/member-records.js';

export interface OrgCreateInput {
  name: string;
  plan?: Plan;
  trialEndsAt?: number | null;
  /**
   * Who asks: the web console's signed-in user, who becomes the new organisation's Owner in the same
   * change (the console offers this only where FLAGWIRE_CONSOLE_CREATE_ORGS allows it), or the operator
   * at the command line, who adds members with `org add-member`.
   */
  principal: Principal;
}

export function orgCreate(w: StoreWriter, input: OrgCreateInput, now: number): Org {
  const person = personOrOperator(w, input.principal, 'create an organisation');
  const owner = person === null ? null : requireUser(w, person.userId);
  const plan = checkPlan(input.plan ?? 'free');
  const name = requireName('name', input.name);
  const taken = findOrgByName(w, name);
  if (taken)
    throw new FlagwireError(
      'INVALID_REQUEST',
      `an organisation named "${taken.name}" already exists (${taken.id}); organisation names are unique, ignoring case`,
    );
  const org: Org = {
    id: `org_${randomId(12)}`,
    name,
    plan,
    trialEndsAt: trialEnd(plan, input.trialEndsAt ?? null, now),
    standing: 'good',
    createdAt: now,
  };
  putOrg(w, org);
  if (owner !== null) putMember(w, { orgId: org.id, userId: owner.id, role: 'owner' });
  return org;
}

export interface OrgUpdateInput {
  orgId: string;
  plan?: Plan;
  trialEndsAt?: number | null;
  standing?: Standing;
}

export function orgUpdate(w: StoreWriter, input: OrgUpdateInput, now: number): Org {
  const org = requireOrg(w, input.orgId);
  const plan = input.plan === undefined ? org.plan : checkPlan(input.plan);
  if (input.standing !== undefined && input.standing !== 'good' && input.standing !== 'lapsed') {
    throw new FlagwireError('INVALID_REQUEST', `standing must be good or lapsed, not "${String(input.standing)}"`);
  }
  const trialEndsAt =
    input.trialEndsAt !== undefined || input.plan !== undefined
      ? trialEnd(plan, input.trialEndsAt ?? (plan === org.plan ? org.trialEndsAt : null), now)
      : org.trialEndsAt;
  const next: Org = { ...org, plan, trialEndsAt, standing: input.standing ?? org.standing };
  putOrg(w, next);
  return next;
}

export interface UserCreateInput {
  email: string;
  name?: string;
}

export function userCreate(w: StoreWriter, input: UserCreateInput, now: number): User {
  const email = requireEmail(input.email);
  if (findUserByEmail(w, email)) throw new FlagwireError('INVALID_REQUEST', `a user with e-mail ${email} already exists`);
  const user: User = {
    id: `usr_${randomId(12)}`,
    email,
    name: input.name === undefined ? email.split('@')[0]! : requireName('name', input.name),
    createdAt: now,
  };
  putUser(w, user);
  return user;
}

/**
 * Who asks: the web console's signed-in user, who must be an Admin or Owner; only an Owner gives or
 * takes the Owner role; and only a member's role changes there: someone joins an organisation by
 * accepting an invitation (invitation-commands.ts), never by another's say. The operator at the command
 * line: no permission check, and it adds members directly. For both, the last Owner keeps the role
 * (owners.ts): the operator has no override, since making another Owner first is always open to it.
 */
export function orgAddMember(w: StoreWriter, input: Membership & { principal: Principal }, now: number): Membership {
  const person = personOrOperator(w, input.principal, "change a member's role");
  requireOrg(w, input.orgId);
  requireUser(w, input.userId);
  const role = requireRole(input.role);
  const before = getRole(w, input.orgId, input.userId) ?? null;
  const member: Membership = { orgId: input.orgId, userId: input.userId, role };
  if (person !== null) {
    checkRoleChange(w, member, person.userId);
    if (before === null) {
      throw new FlagwireError(
        'INVALID_REQUEST',
        `User ${input.userId} is not a member of organisation ${input.orgId}: invite them by e-mail address; they become a member when they accept.`,
      );
    }
  }
  const refusal = lastOwnerRefusal(w, member.orgId, member.userId, role);
  if (refusal !== null) throw new FlagwireError('INVALID_REQUEST', refusal);
  if (person !== null && before !== member.role)
    auditMembership(w, person, 'member.role', member.orgId, `role of user:${member.userId}`, { before, after: member.role }, now);
  putMember(w, member);
  return member;
}

export function requireRole(role: unknown): Role {
  if (!(kRoles as readonly unknown[]).includes(role)) {
    throw new FlagwireError('INVALID_REQUEST', `role must be one of ${kRoles.join(', ')}`);
  }
  return role as Role;
}

/**
 * A membership changed in the web console is audited as its user (issue 18: every change): a role
 * given (`member.role`), an invitation made, accepted or declined. The audit log is per project and a
 * membership reaches every project of the organisation, so each of them gets the entry.
 */
export function auditMembership(
  w: StoreWriter,
  actor: Actor,
  action: MemberAuditAction,
  orgId: string,
  subject: string,
  change: { before: Role | null; after: Role | null },
  now: number,
): void {
  auditOrg(w, actor, action, orgId, { [subject]: change }, now);
}

/**
 * Appends an entry to each of the organisation's projects' audit logs: the log is per project, and a
 * change to the organisation (a membership, SCIM's or single sign-on's settings) reaches all of them.
 */
export function auditOrg(
  w: StoreWriter,
  actor: Actor,
  action: NewAuditEntry['action'],
  orgId: string,
  changes: Record<string, { before: unknown; after: unknown }>,
  now: number,
): void {
  for (const project of listOrgProjects(w, orgId)) {
    writeAudit(w, actor, { projectId: project.id, action, changes }, now);
  }
}

/** The acting user may give `role` in the organisation: an Admin or Owner, and only an Owner gives Owner. */
export function checkMayGiveRole(w: StoreWriter, orgId: string, actingUserId: string, role: Role): Role {
  const acting = getRole(w, orgId, actingUserId);
  if (acting === undefined || !can(acting, 'manageMembers')) {
    throw new FlagwireError(
      'FORBIDDEN',
      `Changing members needs the Admin or Owner role in organisation ${orgId}; user ${actingUserId} ${describeRole(acting)}.`,
    );
  }
  if (role === 'owner' && !can(acting, 'grantOwner'))
    throw new FlagwireError('FORBIDDEN', 'Only an Owner may give or take the Owner role.');
  return acting;
}

function checkRoleChange(w: StoreWriter, input: Membership, actingUserId: string): void {
  const acting = checkMayGiveRole(w, input.orgId, actingUserId, input.role);
  const current = getRole(w, input.orgId, input.userId);
  if (current === 'owner' && !can(acting, 'grantOwner')) {
    throw new FlagwireError('FORBIDDEN', 'Only an Owner may give or take the Owner role.');
  }
}

function checkPlan(plan: string): Plan {
  if (!(kPlans as readonly string[]).includes(plan)) {
    throw new FlagwireError('INVALID_REQUEST', `plan must be one of ${kPlans.join(', ')}`);
  }
  return plan as Plan;
}

const kDefaultTrialMs = 14 * 24 * 3600 * 1000;

/** A Teams trial without an end date runs 14 days; other plans have no trial end. */
function trialEnd(plan: Plan, requested: number | null, now: number): number | null {
  if (plan !== 'teams-trial') {
    if (requested !== null) throw new FlagwireError('INVALID_REQUEST', '--trial-ends only applies to the teams-trial plan');
    return null;
  }
  if (requested !== null && !Number.isFinite(requested)) throw new FlagwireError('INVALID_REQUEST', 'trial end is not a valid date');
  return requested ?? now + kDefaultTrialMs;
}
