// The `env` parameter against a project and a token: the spec's 400s and the 403 in one place.
import { FlagwireError } from '../errors.js';
import type { Project } from './projects.js';

export function validEnvironmentsText(project: Project): string {
  return project.environments.length === 0
    ? 'this project has no environments yet'
    : `valid environments: ${project.environments.join(', ')}`;
}

/**
 * Where `env` came from: a single flag's route (GET or PATCH /api/v1/flags/{id}), the list's, or the
 * console's `flags import --env` (a multi-environment project's environment the file sets), or an
 * export in flagd's format (`flagwire export --env`, GET /api/v1/export?env=).
 */
export type EnvRoute = 'flag' | 'list' | 'import' | 'export';

/** `env` checked against a project: the environment to use (null: none), or the problem to report. */
export type EnvParam = { env: string | null; problem: null } | { env: null; problem: string };

const kDropEnv: Record<EnvRoute, string> = {
  flag: 'This flag belongs to a single-environment project, which has no environments; drop the "env" query parameter.',
  list: 'This project is a single-environment project, which has no environments; drop the "env" query parameter.',
  import: 'This project is a single-environment project, which has no environments; drop --env.',
  export:
    'This project is a single-environment project, which has no environments; drop the environment (--env, or the "env" query parameter).',
};

/** What a request that must name an environment and does not is told (the valid ones follow). */
const kAddEnv: Record<EnvRoute, string> = {
  flag: 'This flag belongs to a multi-environment project: add the "env" query parameter',
  list: 'This project is a multi-environment project: add the "env" query parameter',
  import: 'This project is a multi-environment project: name the environment the file sets with --env',
  export:
    'This project is a multi-environment project and flagd\'s format has none: name the environment to export (--env, or the "env" query parameter)',
};

/**
 * Checks `env` for a request on `project`: a single-environment project must not get it, a
 * multi-environment one must name one of its environments. `required` says whether a
 * multi-environment request must name one (PATCH) or may omit it (GET: environments form).
 * The problem is returned, not thrown, so that PATCH reports it together with the body's.
 */
export function checkEnvParam(project: Project, env: string | null, required: boolean, route: EnvRoute): EnvParam {
  if (project.kind === 'single') return env === null ? { env: null, problem: null } : { env: null, problem: kDropEnv[route] };
  if (env === null) {
    if (!required) return { env: null, problem: null };
    return { env: null, problem: `${kAddEnv[route]} (${validEnvironmentsText(project)}).` };
  }
  if (!project.environments.includes(env))
    return { env: null, problem: `Unknown environment "${env}"; ${validEnvironmentsText(project)}.` };
  return { env, problem: null };
}

/** checkEnvParam, with its problem as the 400. */
export function resolveEnvParam(project: Project, env: string | null, required: boolean, route: EnvRoute): string | null {
  const checked = checkEnvParam(project, env, required, route);
  if (checked.problem !== null) throw new FlagwireError('INVALID_REQUEST', checked.problem);
  return checked.env;
}

/** `allowed` is the token's environment list; [] means every environment. */
export function isEnvironmentAllowed(allowed: readonly string[], env: string): boolean {
  return coversEveryEnvironment(allowed) || allowed.includes(env);
}

/** Whether `allowed` (a token's environment list) covers every environment, those added later included. */
function coversEveryEnvironment(allowed: readonly string[]): boolean {
  return allowed.length === 0;
}

/**
 * The 403 unless `allowed` (a token's environment list) covers every environment: for what carries the
 * changes of every environment, those added later included (a webhook), as a plan in an environment
 * outside the list is refused. Listing every current environment is not enough: a new one is not in it.
 */
export function requireEveryEnvironment(allowed: readonly string[], what: string): void {
  if (coversEveryEnvironment(allowed)) return;
  throw new FlagwireError(
    'ENVIRONMENT_NOT_PERMITTED',
    `${what} carries the changes of every environment; this token is limited to: ${allowed.join(', ')}. Use a token for every environment.`,
  );
}

/** The 403 unless `allowed` (a token's environment list) includes `env`; no environment (null) is never refused. */
export function requireEnvironmentAllowed(allowed: readonly string[], env: string | null): void {
  if (env === null || isEnvironmentAllowed(allowed, env)) return;
  throw new FlagwireError(
    'ENVIRONMENT_NOT_PERMITTED',
    `This token may not access environment "${env}"; it is limited to: ${allowed.join(', ')}.`,
  );
}
