// The spec's response shapes: flag (flat and environments form), flag list, token description.
import { effectiveState } from '../model/flag-state.js';
import type { Flag, Project, Token } from '../store/records.js';

export interface FlatFlag {
  id: string;
  name: string;
  kind: Flag['kind'];
  description: string;
  tags: string[];
  updatedAt: number;
  enabled: boolean;
  trafficPercentage: number;
  cohorts: string[];
  audienceId: string | null;
  environment?: string;
}

export interface EnvironmentEntry {
  enabled: boolean;
  trafficPercentage: number;
  cohorts: string[];
  audienceId: string | null;
  updatedAt: number;
}

export interface EnvironmentsFlag {
  id: string;
  name: string;
  kind: 'groupflag';
  description: string;
  tags: string[];
  updatedAt: number;
  environments: Record<string, EnvironmentEntry>;
}

/** Flat form: a single flag, or one environment of a group flag (with `environment` set). */
export function flatFlag(flag: Flag, env: string | null): FlatFlag {
  const state = effectiveState(flag, env);
  const out: FlatFlag = {
    id: flag.id,
    name: flag.name,
    kind: flag.kind,
    description: flag.description,
    tags: flag.tags,
    updatedAt: flag.updatedAt,
    enabled: state.enabled,
    trafficPercentage: state.trafficPercentage,
    cohorts: state.cohorts,
    audienceId: state.audienceId,
  };
  if (flag.kind === 'groupflag' && env !== null) out.environment = env;
  return out;
}

/** Environments form of a group flag: one entry per environment of the project, effective cohorts. */
export function environmentsFlag(flag: Flag & { kind: 'groupflag' }, project: Project): EnvironmentsFlag {
  const environments: Record<string, EnvironmentEntry> = {};
  for (const env of project.environments) {
    const state = effectiveState(flag, env);
    environments[env] = {
      enabled: state.enabled,
      trafficPercentage: state.trafficPercentage,
      cohorts: state.cohorts,
      audienceId: state.audienceId,
      updatedAt: flag.updatedAt,
    };
  }
  return {
    id: flag.id, name: flag.name, kind: 'groupflag', description: flag.description, tags: flag.tags,
    updatedAt: flag.updatedAt, environments,
  };
}

/** A group flag without `env` is in environments form; everything else is flat. */
export function representFlag(flag: Flag, project: Project, env: string | null): FlatFlag | EnvironmentsFlag {
  return flag.kind === 'groupflag' && env === null ? environmentsFlag(flag, project) : flatFlag(flag, env);
}

export function tokenDescription(token: Token, project: Project) {
  return {
    id: token.id,
    name: token.name,
    project: { id: project.id, name: project.name },
    permission: token.permission,
    environments: token.environments,
    expiresAt: token.expiresAt,
  };
}
