// Console commands for organisations, users and memberships.
import { FlagwireError } from '../errors.js';
import { kMaxEmailLength, kPlans, kRoles, type Membership, type Org, type Plan, type Role, type Standing, type User } from '../model/accounts.js';
import { randomId } from '../model/ids.js';
import { requireOrg, requireUser } from '../model/lookups.js';
import type { StoreWriter } from '../store/interfaces.js';
import { requireName, sameName } from './checks.js';

export interface OrgCreateInput {
  name: string;
  plan?: Plan;
  trialEndsAt?: number | null;
}

export function orgCreate(w: StoreWriter, input: OrgCreateInput, now: number): Org {
  const plan = checkPlan(input.plan ?? 'free');
  const name = requireName('name', input.name);
  const taken = w.listOrgs().find((o) => sameName(o.name, name));
  if (taken) throw new FlagwireError('INVALID_REQUEST', `an organisation named "${taken.name}" already exists (${taken.id}); organisation names are unique, ignoring case`);
  const org: Org = {
    id: `org_${randomId(12)}`,
    name,
    plan,
    trialEndsAt: trialEnd(plan, input.trialEndsAt ?? null, now),
    standing: 'good',
    createdAt: now,
  };
  w.putOrg(org);
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
  const trialEndsAt = input.trialEndsAt !== undefined || input.plan !== undefined
    ? trialEnd(plan, input.trialEndsAt ?? (plan === org.plan ? org.trialEndsAt : null), now)
    : org.trialEndsAt;
  const next: Org = { ...org, plan, trialEndsAt, standing: input.standing ?? org.standing };
  w.putOrg(next);
  return next;
}

export interface UserCreateInput {
  email: string;
  name?: string;
}

export function userCreate(w: StoreWriter, input: UserCreateInput, now: number): User {
  const email = String(input.email ?? '').trim();
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new FlagwireError('INVALID_REQUEST', `"${email}" is not an e-mail address`);
  if (email.length > kMaxEmailLength) throw new FlagwireError('INVALID_REQUEST', `an e-mail address is at most ${kMaxEmailLength} characters`);
  if (w.findUserByEmail(email)) throw new FlagwireError('INVALID_REQUEST', `a user with e-mail ${email} already exists`);
  const user: User = {
    id: `usr_${randomId(12)}`,
    email,
    name: input.name === undefined ? email.split('@')[0]! : requireName('name', input.name),
    createdAt: now,
  };
  w.putUser(user);
  return user;
}

/**
 * `asUserId`: the web console's signed-in user, who must be an Admin or Owner; only an Owner gives or
 * takes the Owner role, and the last Owner keeps it. The CLI (no `asUserId`) is the operator: no check.
 */
export function orgAddMember(w: StoreWriter, input: Membership & { asUserId?: string }, now: number): Membership {
  requireOrg(w, input.orgId);
  requireUser(w, input.userId);
  if (!(kRoles as readonly string[]).includes(input.role)) {
    throw new FlagwireError('INVALID_REQUEST', `role must be one of ${kRoles.join(', ')}`);
  }
  const before = w.getRole(input.orgId, input.userId) ?? null;
  const member: Membership = { orgId: input.orgId, userId: input.userId, role: input.role as Role };
  if (input.asUserId !== undefined) {
    checkRoleChange(w, input as Membership & { asUserId: string });
    if (before !== member.role) auditRoleChange(w, requireUser(w, input.asUserId), member, before, now);
  }
  w.putMember(member);
  return member;
}

/**
 * A role given in the web console is audited as its user (issue 18: every change). The audit log is
 * per project and a role reaches every project of the organisation, so each of them gets the entry.
 */
function auditRoleChange(w: StoreWriter, actor: User, member: Membership, before: Role | null, now: number): void {
  for (const project of w.listProjects()) {
    if (project.orgId !== member.orgId) continue;
    w.appendAudit({
      at: now, projectId: project.id, actor: `user:${actor.id}`, actorName: actor.name, action: 'member.role', flagId: null, env: null,
      changes: { [`role of user:${member.userId}`]: { before, after: member.role } },
    });
  }
}

function checkRoleChange(w: StoreWriter, input: Membership & { asUserId: string }): void {
  const acting = w.getRole(input.orgId, input.asUserId);
  if (acting !== 'owner' && acting !== 'admin') {
    throw new FlagwireError('FORBIDDEN', `Changing members needs the Admin or Owner role in organisation ${input.orgId}; user ${input.asUserId} ${acting ? `is ${acting}` : 'is not a member'}.`);
  }
  const current = w.getRole(input.orgId, input.userId);
  if ((input.role === 'owner' || current === 'owner') && acting !== 'owner') {
    throw new FlagwireError('FORBIDDEN', 'Only an Owner may give or take the Owner role.');
  }
  const owners = w.listMembers(input.orgId).filter((m) => m.role === 'owner');
  if (current === 'owner' && input.role !== 'owner' && owners.length === 1) {
    throw new FlagwireError('INVALID_REQUEST', 'An organisation keeps at least one Owner: make someone else Owner first.');
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
