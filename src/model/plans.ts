// Which organisations may use the Management API (spec: States and transitions, Organisation subscription).
import type { Org } from './accounts.js';

/** Teams or Enterprise, or an unexpired Teams trial: the plans with the Teams features (API, audiences). */
function hasTeamsPlan(org: Org, now: number): boolean {
  if (org.plan === 'teams' || org.plan === 'enterprise') return true;
  return org.plan === 'teams-trial' && org.trialEndsAt !== null && org.trialEndsAt > now;
}

/** A Teams plan (trial included) and the subscription in good standing. */
export function isManagementEligible(org: Org, now: number): boolean {
  return org.standing === 'good' && hasTeamsPlan(org, now);
}

/**
 * Audiences are a Teams and Enterprise feature (trial included), independent of standing. A personal
 * project has no organisation (null), and a project whose organisation is gone none found (undefined):
 * neither has audiences.
 */
export function hasAudiences(org: Org | null | undefined, now: number): boolean {
  return org !== null && org !== undefined && hasTeamsPlan(org, now);
}
