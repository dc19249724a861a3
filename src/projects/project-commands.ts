// Console commands for projects, their environments and audiences.
import { FlagwireError } from '../errors.js';
import { randomId } from '../model/ids.js';
import { requireAudience, requireOrg, requireProject, requireUser } from '../model/records/lookups.js';
import { hasAudiences } from '../model/plans.js';
import type { Audience, AudienceRule, Project, ProjectKind } from '../model/projects.js';
import { kLimits } from '../model/schemas.js';
import type { AuditEntry } from '../model/audit.js';
import type { StoreWriter } from '../store/interfaces.js';
import { type Actor, actorFor, personOrOperator, type Principal, writeAudit } from '../actor/audit-actor.js';
import { exactList, requireName, sameName } from '../model/input-checks.js';
import { can, describeRole } from '../model/permissions.js';
import { renamePlansEnvironment } from '../release-plans/plan-environments.js';
import { listAllFlags, putFlag } from '../flags/records/flag-store.js';
import { getOrg } from '../model/records/org-records.js';
import { putProject, listPersonalProjects, listOrgProjects, listAudiences, putAudience } from '../model/records/project-records.js';
import type { ProjectAuditAction } from './audit-actions.js';
import { getRole } from '../model/records/member-records.js';

const kEnvName = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export interface ProjectCreateInput {
  name: string;
  orgId?: string;
  ownerUserId?: string;
  kind?: ProjectKind;
  environments?: string[];
  /**
   * Who asks: the web console's signed-in user (an organisation's project only, made by its Admin or
   * Owner, the roles that change who belongs to it), or the operator at the command line, checked by nothing.
   */
  principal: Principal;
}

/** `id`: a fixed id, for the demo seed only (the README walk-through names its projects); otherwise a random one. */
export function projectCreate(w: StoreWriter, input: ProjectCreateInput, now: number, id = `prj_${randomId(12)}`): Project {
  const person = personOrOperator(w, input.principal, 'create a project');
  if ((input.orgId === undefined) === (input.ownerUserId === undefined)) {
    throw new FlagwireError('INVALID_REQUEST', 'give exactly one of --org (organisation project) and --owner (personal project)');
  }
  if (input.orgId !== undefined) requireOrg(w, input.orgId);
  if (input.ownerUserId !== undefined) requireUser(w, input.ownerUserId);
  if (person !== null) checkMayCreateProject(w, input.orgId, person.userId);
  const kind = input.kind ?? 'single';
  if (kind !== 'single' && kind !== 'multi') throw new FlagwireError('INVALID_REQUEST', 'kind must be single or multi');
  const environments = (input.environments ?? []).map(checkEnvName);
  if (kind === 'single' && environments.length > 0) {
    throw new FlagwireError('INVALID_REQUEST', 'a single-environment project has no environments; use --kind multi');
  }
  if (new Set(environments).size !== environments.length) throw new FlagwireError('INVALID_REQUEST', 'environment names repeat');
  const name = requireName('name', input.name);
  const siblings = input.orgId !== undefined ? listOrgProjects(w, input.orgId) : listPersonalProjects(w, input.ownerUserId!);
  const taken = siblings.find((p) => sameName(p.name, name));
  if (taken) {
    const where = input.orgId !== undefined ? `organisation ${input.orgId}` : `the personal projects of user ${input.ownerUserId}`;
    throw new FlagwireError(
      'INVALID_REQUEST',
      `a project named "${taken.name}" already exists in ${where} (${taken.id}); project names are unique there, ignoring case`,
    );
  }
  const project: Project = {
    id,
    name,
    kind,
    orgId: input.orgId ?? null,
    ownerUserId: input.ownerUserId ?? null,
    environments,
    createdAt: now,
  };
  putProject(w, project);
  return project;
}

function checkMayCreateProject(w: StoreWriter, orgId: string | undefined, userId: string): void {
  requireUser(w, userId);
  if (orgId === undefined) throw new FlagwireError('INVALID_REQUEST', 'the web console creates projects of organisations only');
  const role = getRole(w, orgId, userId);
  if (role === undefined || !can(role, 'manageMembers')) {
    throw new FlagwireError(
      'FORBIDDEN',
      `Creating a project needs the Admin or Owner role in organisation ${orgId}; user ${userId} ${describeRole(role)}.`,
    );
  }
}

/**
 * Who changes environments and audiences: the web console's signed-in user, audited as `user:<id>`, who
 * must be an Admin or Owner of the project's organisation (or own the personal project); the CLI is the
 * operator, audited as `console`.
 */
interface AsUser {
  /** Who asks: the web console's user, the command line's --as user or the operator (principalOf). */
  principal: Principal;
}

export function envAdd(w: StoreWriter, input: { projectId: string; name: string } & AsUser, now: number): Project {
  const project = requireMultiProject(w, input.projectId);
  const actor = actorFor(w, input.principal, project, 'configure', now);
  const name = checkEnvName(input.name);
  if (project.environments.includes(name)) throw new FlagwireError('INVALID_REQUEST', `environment "${name}" already exists`);
  const next = { ...project, environments: [...project.environments, name] };
  putProject(w, next);
  audit(w, actor, project.id, 'env.add', name, { environment: { before: null, after: name } }, now);
  return next;
}

/** Renames the environment in the project and in every flag; tokens keep the old name (spec: Token settings). */
export function envRename(w: StoreWriter, input: { projectId: string; from: string; to: string } & AsUser, now: number): Project {
  const project = requireMultiProject(w, input.projectId);
  const actor = actorFor(w, input.principal, project, 'configure', now);
  const to = checkEnvName(input.to);
  if (!project.environments.includes(input.from)) {
    throw new FlagwireError(
      'INVALID_REQUEST',
      `unknown environment "${input.from}"; valid environments: ${project.environments.join(', ')}`,
    );
  }
  if (project.environments.includes(to)) throw new FlagwireError('INVALID_REQUEST', `environment "${to}" already exists`);
  const rename = (e: string) => (e === input.from ? to : e);
  const next: Project = { ...project, environments: project.environments.map(rename) };
  if (project.protectedEnvironments) next.protectedEnvironments = project.protectedEnvironments.map(rename);
  // A guarded environment stays guarded under its new name (src/approvals).
  if (project.approvals) next.approvals = project.approvals.map((rule) => ({ ...rule, env: rule.env === null ? null : rename(rule.env) }));
  putProject(w, next);
  // Archived flags too: a restored flag keeps its state under the new name.
  for (const flag of listAllFlags(w, project.id)) {
    if (flag.kind !== 'groupflag' || !Object.hasOwn(flag.environments, input.from)) continue;
    const { [input.from]: moved, ...rest } = flag.environments;
    putFlag(w, { ...flag, environments: { ...rest, [to]: moved! }, updatedAt: Math.max(now, flag.updatedAt + 1) });
  }
  renamePlansEnvironment(w, project.id, input.from, to, now);
  audit(w, actor, project.id, 'env.rename', to, { environment: { before: input.from, after: to } }, now);
  return next;
}

/**
 * Marks an environment protected or not (docs/web-console.md: Protected environments): the web console
 * asks to confirm a change to a protected one. An Admin's or Owner's setting, audited; nothing else reads it.
 */
export function envProtect(w: StoreWriter, input: { projectId: string; env: string; protect: boolean } & AsUser, now: number): Project {
  const project = requireMultiProject(w, input.projectId);
  const actor = actorFor(w, input.principal, project, 'configure', now);
  if (!project.environments.includes(input.env)) {
    throw new FlagwireError(
      'INVALID_REQUEST',
      `unknown environment "${input.env}"; valid environments: ${project.environments.join(', ')}`,
    );
  }
  const before = project.protectedEnvironments ?? [];
  if (before.includes(input.env) === input.protect) return project;
  const after = input.protect ? [...before, input.env] : before.filter((e) => e !== input.env);
  const { protectedEnvironments: _, ...rest } = project;
  const next: Project = after.length > 0 ? { ...rest, protectedEnvironments: after } : rest;
  putProject(w, next);
  audit(w, actor, project.id, 'env.protect', input.env, { protected: { before: !input.protect, after: input.protect } }, now);
  return next;
}

export interface AudienceCreateInput extends AsUser {
  projectId: string;
  name: string;
  rules: AudienceRule[];
}

export function audienceCreate(w: StoreWriter, input: AudienceCreateInput, now: number): Audience {
  const project = requireProject(w, input.projectId);
  const actor = actorFor(w, input.principal, project, 'configure', now);
  requireAudiencePlan(w, project, now);
  const audience: Audience = {
    id: `aud_${randomId(12)}`,
    projectId: input.projectId,
    name: uniqueAudienceName(w, input.projectId, input.name, null),
    rules: checkRules(input.rules),
    updatedAt: now,
  };
  putAudience(w, audience);
  audit(w, actor, audience.projectId, 'audience.create', null, { audience: { before: null, after: audienceFields(audience) } }, now);
  return audience;
}

export interface AudienceUpdateInput extends AsUser {
  audienceId: string;
  name?: string;
  rules?: AudienceRule[];
}

export function audienceUpdate(w: StoreWriter, input: AudienceUpdateInput, now: number): Audience {
  const audience = requireAudience(w, input.audienceId);
  const project = requireProject(w, audience.projectId);
  const actor = actorFor(w, input.principal, project, 'configure', now);
  requireAudiencePlan(w, project, now);
  const name = input.name === undefined ? audience.name : uniqueAudienceName(w, audience.projectId, input.name, audience.id);
  const rules = input.rules === undefined ? audience.rules : checkRules(input.rules);
  // As a flag patch: a change to nothing writes nothing and leaves no audit entry.
  if (name === audience.name && JSON.stringify(rules) === JSON.stringify(audience.rules)) return audience;
  const next: Audience = { ...audience, name, rules, updatedAt: now };
  putAudience(w, next);
  audit(
    w,
    actor,
    audience.projectId,
    'audience.update',
    null,
    { audience: { before: audienceFields(audience), after: audienceFields(next) } },
    now,
  );
  return next;
}

/** What an audience audit entry records: the whole audience, so the entry says which one and what it matched. */
function audienceFields(audience: Audience): Pick<Audience, 'id' | 'name' | 'rules'> {
  return { id: audience.id, name: audience.name, rules: audience.rules };
}

/** Audience names are unique in their project, ignoring case (`except`: the audience being renamed). */
function uniqueAudienceName(w: StoreWriter, projectId: string, raw: string, except: string | null): string {
  const name = requireName('name', raw);
  const taken = listAudiences(w, projectId).find((a) => a.id !== except && sameName(a.name, name));
  if (taken) throw new FlagwireError('INVALID_REQUEST', `an audience named "${taken.name}" already exists in this project (${taken.id})`);
  return name;
}

/** Project changes from the command line are audited as `console`; from the web console as the user. */
function audit(
  w: StoreWriter,
  actor: Actor,
  projectId: string,
  action: ProjectAuditAction,
  env: string | null,
  changes: AuditEntry['changes'],
  now: number,
): void {
  writeAudit(w, actor, { projectId, action, env, changes }, now);
}

/** Audiences are a Teams and Enterprise feature (spec: Audience); personal projects have none. */
function requireAudiencePlan(w: StoreWriter, project: Project, now: number): void {
  const org = project.orgId === null ? undefined : getOrg(w, project.orgId);
  if (!org || !hasAudiences(org, now)) {
    throw new FlagwireError(
      'PLAN_REQUIRED',
      'Audiences need an organisation project on the Teams or Enterprise plan (or an active Teams trial).',
    );
  }
}

function requireMultiProject(w: StoreWriter, projectId: string): Project {
  const project = requireProject(w, projectId);
  if (project.kind !== 'multi') throw new FlagwireError('INVALID_REQUEST', 'a single-environment project has no environments');
  return project;
}

export function checkEnvName(name: string): string {
  if (typeof name !== 'string' || name.length > kLimits.environmentNameLength || !kEnvName.test(name)) {
    throw new FlagwireError(
      'INVALID_REQUEST',
      `environment name "${String(name)}" must be 1-${kLimits.environmentNameLength} letters, digits, "_", "." or "-", starting with a letter or digit`,
    );
  }
  return name;
}

export function checkRules(rules: AudienceRule[]): AudienceRule[] {
  if (!Array.isArray(rules) || rules.length === 0)
    throw new FlagwireError('INVALID_REQUEST', 'an audience needs at least one --rule ATTR=V1[,V2...]');
  return rules.map((rule) => {
    const attribute = typeof rule.attribute === 'string' ? rule.attribute.trim() : '';
    const values = Array.isArray(rule.values) ? exactList(rule.values.filter((v): v is string => typeof v === 'string')) : [];
    if (attribute === '' || values.length === 0) {
      throw new FlagwireError('INVALID_REQUEST', 'each rule needs an attribute and at least one value (ATTR=V1[,V2...])');
    }
    if (attribute === 'targetingKey' || attribute === 'cohort' || attribute === 'env') {
      throw new FlagwireError('INVALID_REQUEST', `"${attribute}" is never an attribute (spec: Evaluation API); choose another name`);
    }
    return { attribute, values };
  });
}
