// Console commands for projects, their environments and audiences.
import { FlagwireError } from '../errors.js';
import { randomId } from '../model/ids.js';
import { requireAudience, requireOrg, requireProject, requireUser } from '../model/lookups.js';
import { hasAudiences } from '../model/plans.js';
import { kLimits } from '../model/schemas.js';
import type { Audience, AudienceRule, Project, ProjectKind } from '../store/records.js';
import type { StoreWriter } from '../store/store.js';
import { requireName } from './checks.js';

const kEnvName = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export interface ProjectCreateInput {
  name: string;
  orgId?: string;
  ownerUserId?: string;
  kind?: ProjectKind;
  environments?: string[];
}

export function projectCreate(w: StoreWriter, input: ProjectCreateInput, now: number): Project {
  if ((input.orgId === undefined) === (input.ownerUserId === undefined)) {
    throw new FlagwireError('INVALID_REQUEST', 'give exactly one of --org (organisation project) and --owner (personal project)');
  }
  if (input.orgId !== undefined) requireOrg(w, input.orgId);
  if (input.ownerUserId !== undefined) requireUser(w, input.ownerUserId);
  const kind = input.kind ?? 'single';
  if (kind !== 'single' && kind !== 'multi') throw new FlagwireError('INVALID_REQUEST', 'kind must be single or multi');
  const environments = (input.environments ?? []).map(checkEnvName);
  if (kind === 'single' && environments.length > 0) {
    throw new FlagwireError('INVALID_REQUEST', 'a single-environment project has no environments; use --kind multi');
  }
  if (new Set(environments).size !== environments.length) throw new FlagwireError('INVALID_REQUEST', 'environment names repeat');
  const project: Project = {
    id: `prj_${randomId(12)}`,
    name: requireName('name', input.name),
    kind,
    orgId: input.orgId ?? null,
    ownerUserId: input.ownerUserId ?? null,
    environments,
    createdAt: now,
  };
  w.putProject(project);
  return project;
}

export function envAdd(w: StoreWriter, input: { projectId: string; name: string }): Project {
  const project = requireMultiProject(w, input.projectId);
  const name = checkEnvName(input.name);
  if (project.environments.includes(name)) throw new FlagwireError('INVALID_REQUEST', `environment "${name}" already exists`);
  const next = { ...project, environments: [...project.environments, name] };
  w.putProject(next);
  return next;
}

/** Renames the environment in the project and in every flag; tokens keep the old name (spec: Token settings). */
export function envRename(w: StoreWriter, input: { projectId: string; from: string; to: string }, now: number): Project {
  const project = requireMultiProject(w, input.projectId);
  const to = checkEnvName(input.to);
  if (!project.environments.includes(input.from)) {
    throw new FlagwireError('INVALID_REQUEST', `unknown environment "${input.from}"; valid environments: ${project.environments.join(', ')}`);
  }
  if (project.environments.includes(to)) throw new FlagwireError('INVALID_REQUEST', `environment "${to}" already exists`);
  const next = { ...project, environments: project.environments.map((e) => (e === input.from ? to : e)) };
  w.putProject(next);
  for (const flag of w.listFlags(project.id)) {
    if (flag.kind !== 'groupflag' || !Object.hasOwn(flag.environments, input.from)) continue;
    const { [input.from]: moved, ...rest } = flag.environments;
    w.putFlag({ ...flag, environments: { ...rest, [to]: moved! }, updatedAt: Math.max(now, flag.updatedAt + 1) });
  }
  return next;
}

export interface AudienceCreateInput {
  projectId: string;
  name: string;
  rules: AudienceRule[];
}

export function audienceCreate(w: StoreWriter, input: AudienceCreateInput, now: number): Audience {
  requireAudiencePlan(w, requireProject(w, input.projectId), now);
  const audience: Audience = {
    id: `aud_${randomId(12)}`,
    projectId: input.projectId,
    name: requireName('name', input.name),
    rules: checkRules(input.rules),
    updatedAt: now,
  };
  w.putAudience(audience);
  return audience;
}

export interface AudienceUpdateInput {
  audienceId: string;
  name?: string;
  rules?: AudienceRule[];
}

export function audienceUpdate(w: StoreWriter, input: AudienceUpdateInput, now: number): Audience {
  const audience = requireAudience(w, input.audienceId);
  requireAudiencePlan(w, requireProject(w, audience.projectId), now);
  const next: Audience = {
    ...audience,
    name: input.name === undefined ? audience.name : requireName('name', input.name),
    rules: input.rules === undefined ? audience.rules : checkRules(input.rules),
    updatedAt: now,
  };
  w.putAudience(next);
  return next;
}

/** Audiences are a Teams and Enterprise feature (spec: Audience); personal projects have none. */
function requireAudiencePlan(w: StoreWriter, project: Project, now: number): void {
  const org = project.orgId === null ? undefined : w.getOrg(project.orgId);
  if (!org || !hasAudiences(org, now)) {
    throw new FlagwireError('PLAN_REQUIRED', 'Audiences need an organisation project on the Teams or Enterprise plan (or an active Teams trial).');
  }
}

function requireMultiProject(w: StoreWriter, projectId: string): Project {
  const project = requireProject(w, projectId);
  if (project.kind !== 'multi') throw new FlagwireError('INVALID_REQUEST', 'a single-environment project has no environments');
  return project;
}

function checkEnvName(name: string): string {
  if (typeof name !== 'string' || name.length > kLimits.environmentNameLength || !kEnvName.test(name)) {
    throw new FlagwireError(
      'INVALID_REQUEST',
      `environment name "${String(name)}" must be 1-${kLimits.environmentNameLength} letters, digits, "_", "." or "-", starting with a letter or digit`,
    );
  }
  return name;
}

function checkRules(rules: AudienceRule[]): AudienceRule[] {
  if (!Array.isArray(rules) || rules.length === 0) throw new FlagwireError('INVALID_REQUEST', 'an audience needs at least one --rule ATTR=V1[,V2...]');
  return rules.map((rule) => {
    const attribute = typeof rule.attribute === 'string' ? rule.attribute.trim() : '';
    const values = Array.isArray(rule.values) ? [...new Set(rule.values.filter((v) => typeof v === 'string' && v !== ''))] : [];
    if (attribute === '' || values.length === 0) {
      throw new FlagwireError('INVALID_REQUEST', 'each rule needs an attribute and at least one value (ATTR=V1[,V2...])');
    }
    if (attribute === 'targetingKey' || attribute === 'cohort' || attribute === 'env') {
      throw new FlagwireError('INVALID_REQUEST', `"${attribute}" is never an attribute (spec: Evaluation API); choose another name`);
    }
    return { attribute, values };
  });
}
