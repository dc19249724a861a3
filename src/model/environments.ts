// The `env` parameter against a project and a token: the spec's 400s and the 403 in one place.
import { FlagwireError } from '../errors.js';
import type { Project } from '../store/records.js';

export function validEnvironmentsText(project: Project): string {
  return project.environments.length === 0
    ? 'this project has no environments yet'
    : `valid environments: ${project.environments.join(', ')}`;
}

/**
 * Checks `env` for a request on `project`: null is returned for a single-environment project (which
 * must not get `env`), the environment name for a multi-environment one. `required` says whether a
 * multi-environment request must name one (PATCH) or may omit it (GET: environments form).
 */
export function resolveEnvParam(project: Project, env: string | null, required: boolean): string | null {
  if (project.kind === 'single') {
    if (env !== null) {
      throw new FlagwireError(
        'INVALID_REQUEST',
        'This flag belongs to a single-environment project, which has no environments; drop the "env" query parameter.',
      );
    }
    return null;
  }
  if (env === null) {
    if (!required) return null;
    throw new FlagwireError(
      'INVALID_REQUEST',
      `This flag belongs to a multi-environment project: add the "env" query parameter (${validEnvironmentsText(project)}).`,
    );
  }
  if (!project.environments.includes(env)) {
    throw new FlagwireError('INVALID_REQUEST', `Unknown environment "${env}"; ${validEnvironmentsText(project)}.`);
  }
  return env;
}

/** `allowed` is the token's environment list; [] means every environment. */
export function isEnvironmentAllowed(allowed: readonly string[], env: string): boolean {
  return allowed.length === 0 || allowed.includes(env);
}

export function environmentNotPermitted(allowed: readonly string[], env: string): FlagwireError {
  return new FlagwireError(
    'ENVIRONMENT_NOT_PERMITTED',
    `This token may not access environment "${env}"; it is limited to: ${allowed.join(', ')}.`,
  );
}
