// Who makes a change, and who it is audited as. A command is given a Principal (who asked: a token, a
// signed-in or `--as` user, the operator at the command line, a release plan) and resolves it once, in
// the transaction that applies the change, into an Actor (actorFor; personActor where only a person may
// act): the audit's `token:<id>`, `user:<id>`, `console` or `plan:<id>`, its name, and the environments
// it may change. One command per verb then serves the Management API, the web console and the command
// line alike.
import { projectRole } from '../model/records/member-records.js';
import { FlagwireError } from '../errors.js';
import { requireProject, requireUser } from '../model/records/lookups.js';
import { can, describeRole } from '../model/permissions.js';
import type { User } from '../model/accounts.js';
import type { Project } from '../model/projects.js';
import type { Token } from '../model/tokens.js';
import type { NewAuditEntry, StoreReader, StoreWriter } from '../store/interfaces.js';
import { authorizeTokenWrite } from '../model/records/token-access.js';
import type { Action } from '../model/permissions.js';
import { getUser } from '../model/records/org-records.js';

/**
 * Who asks for a change, as it crosses to the writer: a Management API token, a user (the web
 * console's signed-in user, or the command line's `--as USER_ID`), the operator at the command line
 * (no `--as`), or a release plan acting on its own schedule.
 */
export type Principal =
  | { readonly kind: 'token'; readonly tokenId: string }
  | {
      readonly kind: 'user';
      readonly userId: string;
      /** Signed in through this organisation's identity provider: acts in it alone (org-scope.ts). */
      readonly viaOrgId?: string;
    }
  | { readonly kind: 'operator' }
  | { readonly kind: 'plan'; readonly planId: string; readonly what: string };

export const kOperator: Principal = { kind: 'operator' };

/** The audit actor id a principal acts as (actorFor's, personActor's): `token:<id>`, `user:<id>`, `console`, `plan:<id>`. */
export function actorIdOf(principal: Principal): string {
  switch (principal.kind) {
    case 'token':
      return `token:${principal.tokenId}`;
    case 'user':
      return `user:${principal.userId}`;
    case 'operator':
      return kConsoleActor.id;
    case 'plan':
      return `plan:${principal.planId}`;
  }
}

/** A user's principal (the web console's signed-in user, the command line's `--as`); none given, the operator. */
export function principalOf(userId: string | undefined): Principal {
  return userId === undefined ? kOperator : { kind: 'user', userId };
}

/**
 * The project a token acts in, the token authorised again as the change is applied (it, its project or
 * its organisation may have changed while the change waited for the write lock). A command acting for
 * a token looks the thing it changes up in this project only: another project's thing is not found.
 */
export function tokenProject(w: StoreWriter, principal: Extract<Principal, { kind: 'token' }>, now: number): Project {
  return authorizeTokenWrite(w, principal.tokenId, now).project;
}

/** What a user lacking `action` is told, for a personal project and for an organisation's. */
const kNeeds: Partial<Record<Action, { personal: string; org: string }>> = {
  editFlags: { personal: 'change its flags', org: 'Changing flags needs the Editor, Admin or Owner role' },
  configure: { personal: 'change it', org: 'Changing environments and audiences needs the Admin or Owner role' },
};

/**
 * Resolves who asks into who acts on `project`, once, inside the transaction that applies the change:
 * a token must still be allowed to write and belong to the project; a user must hold `action` there;
 * the operator and a plan act as themselves.
 */
export function actorFor(w: StoreWriter, principal: Principal, project: Project, action: Action, now: number): Actor {
  switch (principal.kind) {
    case 'token': {
      const auth = authorizeTokenWrite(w, principal.tokenId, now);
      // A command looks things up in tokenProject first; reaching here with another project is a bug.
      if (auth.project.id !== project.id) throw new Error(`token ${principal.tokenId} acting outside its project ${auth.project.id}`);
      return tokenActor(auth.token);
    }
    case 'user':
      return userActor(w, project, principal.userId, action);
    case 'operator':
      return kConsoleActor;
    case 'plan':
      return planActor(principal.planId, principal.what);
  }
}

/**
 * Who acts on a project's records, resolved once in the transaction: a token acts in its own project
 * (another project's record is then not found); a person or the operator in the project `projectOf`
 * names (the project of the record named, or its 404), the person needing `action` there.
 */
export function actorInProject(
  w: StoreWriter,
  principal: Principal,
  projectOf: () => string,
  action: Action,
  now: number,
): { project: Project; actor: Actor } {
  const project = principal.kind === 'token' ? tokenProject(w, principal, now) : requireProject(w, projectOf());
  return { project, actor: actorFor(w, principal, project, action, now) };
}

/** A release plan acting on its own schedule (`what`: `rollout`, `scheduled change`), audited as `plan:<id>`. */
export function planActor(planId: string, what: string): Actor {
  return { id: `plan:${planId}`, name: `${what} ${planId}`, environments: [] };
}

/**
 * The person acting where only a person may (a token's creation, rotation and revocation; an
 * invitation and its answer; a member's role): audited as `user:<id>` with their name, with the user id
 * that these changes' rules and records name (a token's creator, an invitation's inviter).
 */
export interface PersonActor extends Actor {
  userId: string;
}

/**
 * Resolves who asks into the person acting, where only a person may act. A token, a release plan and the
 * operator are refused: no surface sends one (the Management API has no such route, and the command line
 * asks for --as USER_ID where the operator has no say). The user is not looked up as a requirement here:
 * each command's rules check the role first or the user first, in the order its refusals have always
 * come in (a stranger's token create is refused for the role, not as an unknown user).
 */
export function personActor(r: StoreReader, principal: Principal, doing: string): PersonActor {
  if (principal.kind !== 'user') {
    throw new FlagwireError('FORBIDDEN', `Only a person may ${doing} (the web console's user, or --as USER_ID on the command line).`);
  }
  // An unknown user's id stands for their name, as the audit of a token's change always wrote it.
  return personOf(getUser(r, principal.userId) ?? { id: principal.userId, name: principal.userId });
}

/** As personActor, where the operator at the command line may act too, checked by nothing: null for the operator. */
export function personOrOperator(r: StoreReader, principal: Principal, doing: string): PersonActor | null {
  return principal.kind === 'operator' ? null : personActor(r, principal, doing);
}

/** A user as the person acting (a user just made by joining acts as themselves). */
export function personOf(user: Pick<User, 'id' | 'name'>): PersonActor {
  return { id: `user:${user.id}`, name: user.name, environments: [], userId: user.id };
}

/** A user acting on `project`, who must hold `action` in its organisation (or own the personal project). */
function userActor(w: StoreWriter, project: Project, userId: string, action: Action): Actor {
  const user = requireUser(w, userId);
  const role = projectRole(w, project, user.id);
  if (!can(role, action)) {
    const needs = kNeeds[action] ?? { personal: 'do this', org: `This needs a role allowed to ${action}` };
    throw new FlagwireError(
      'FORBIDDEN',
      project.orgId === null
        ? `Only the owner of personal project ${project.id} may ${needs.personal}; user ${user.id} is not its owner.`
        : `${needs.org} in organisation ${project.orgId}; user ${user.id} ${describeRole(role)}.`,
    );
  }
  return personOf(user);
}

/** Who makes a change: audit actor (`token:<id>`, `console` or `user:<id>`), its display name, and its environment limit. */
export interface Actor {
  id: string;
  name: string;
  /** Environments the actor may change; [] means every environment. */
  environments: string[];
}

const kConsoleActor: Actor = { id: 'console', name: 'console', environments: [] };

/** A Management API token, audited as `token:<id>` with its name (spec: Authentication 10), limited to its environments. */
export function tokenActor(token: Token): Actor {
  return { id: `token:${token.id}`, name: token.name, environments: token.environments };
}

/** What a change's audit entry says besides who acted and when; `flagId` and `env` not given are null. */
export interface AuditOf {
  projectId: string;
  action: NewAuditEntry['action'];
  flagId?: string | null;
  env?: string | null;
  changes: NewAuditEntry['changes'];
}

/**
 * The one way a capability's command audits its change: in the command's transaction, as the actor it
 * resolved (actorFor, actorInProject, personActor, planActor). An approved request's entries are the
 * gate's (src/approvals), which replays them with the request named.
 */
export function writeAudit(w: StoreWriter, actor: Pick<Actor, 'id' | 'name'>, entry: AuditOf, now: number): void {
  w.appendAudit({
    at: now,
    projectId: entry.projectId,
    actor: actor.id,
    actorName: actor.name,
    action: entry.action,
    flagId: entry.flagId ?? null,
    env: entry.env ?? null,
    changes: entry.changes,
  });
}
