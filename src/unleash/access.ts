// Who may read a project's flags in Unleash's model (GET /api/client/features, its stream) and report an
// SDK's registration and counts (POST /api/client/register, /metrics): a token of the project,
// as for a flag set (src/sync/access.ts), since the answer shows rules and cohort lists. Unleash's server
// SDKs send their token as the whole Authorization header (`customHeaders: {Authorization: '<token>'}`),
// so a header without "Bearer " is read as the token itself. The token decides the project (spec:
// Authentication 2); Unleash's SDKs name no environment, so a project with environments is read through
// a token limited to exactly one of them, which is the one served.
import type { TokenUseLog } from '../capability/capability.js';
import { kClientKeyPrefix } from '../client-keys/records.js';
import { FlagwireError } from '../errors.js';
import type { AuthFailures } from '../http/auth-failures.js';
import { validEnvironmentsText } from '../model/environments.js';
import type { Project } from '../model/projects.js';
import { type AccessReader, authorizeToken } from '../model/records/token-access.js';
import type { Token } from '../model/tokens.js';
import type { StoreReader } from '../store/interfaces.js';
import { identifyToken } from '../tokens/auth.js';
import { getToken } from '../model/records/token-records.js';

export interface FeaturesGrant {
  readonly token: Token;
  readonly project: Project;
  /** null: a single-environment project. */
  readonly environment: string | null;
}

const kMissing =
  'Send a token of the project in the header "Authorization": Unleash\'s SDKs send customHeaders: {Authorization: "<token>"}.';

const kClientKey =
  "This is a client key, for Unleash's front-end SDKs (/api/frontend): Unleash's server SDKs read the flags' rules, so they need a token of the project (POST /api/v1/tokens).";

export class FeaturesAccess {
  constructor(
    private readonly store: StoreReader,
    private readonly authFailures: AuthFailures,
    private readonly activity: TokenUseLog,
  ) {}

  /**
   * The grant of a `method` request with `authorization` from `ip` at `now`, or the refusal (thrown),
   * recorded on the token when one was named; `check` (a POST's body) runs once the token is granted, so
   * that a body it refuses is recorded on the token as that refusal, not as a use.
   */
  grant(
    authorization: string,
    ip: string,
    method: 'GET' | 'POST',
    path: string,
    now: number,
    check: (granted: FeaturesGrant) => void = () => {},
  ): FeaturesGrant {
    this.authFailures.check(ip, now);
    let token: Token;
    try {
      if (authorization === '') throw new FlagwireError('MISSING_TOKEN', kMissing);
      const header = /^bearer /i.test(authorization) ? authorization : `Bearer ${authorization}`;
      // A client key is public (it goes in browsers and apps): it never reads rules, so it is refused by its prefix, never looked up.
      if (header.slice(7).trim().startsWith(`${kClientKeyPrefix}_`)) throw new FlagwireError('MALFORMED_TOKEN', kClientKey);
      token = identifyToken(this.store, header);
    } catch (err) {
      this.authFailures.record(ip, now);
      throw err;
    }
    try {
      const granted = authorizeFeatures(this.store, token, now);
      check(granted);
      this.activity.used(token.id, method, path, method === 'GET' ? 200 : 202, now);
      return granted;
    } catch (err) {
      if (err instanceof FlagwireError) this.activity.refused(token.id, err, method, path, now);
      throw err;
    }
  }

  /**
   * Whether `granted` still holds at `now`, the token as `store` has it now (revoked, expired, its plan
   * lapsed, its environment gone: no longer): an open stream asks before each change it sends.
   */
  static stillGranted(store: AccessReader, granted: FeaturesGrant, now: number): boolean {
    const token = getToken(store, granted.token.id);
    if (token === undefined) return false;
    try {
      const again = authorizeFeatures(store, token, now);
      return again.project.id === granted.project.id && again.environment === granted.environment;
    } catch (err) {
      if (err instanceof FlagwireError) return false;
      throw err;
    }
  }
}

function authorizeFeatures(store: AccessReader, token: Token, now: number): FeaturesGrant {
  const { project } = authorizeToken(store, token, now);
  if (project.kind === 'single') return { token, project, environment: null };
  const environment = token.environments.length === 1 ? token.environments[0]! : null;
  // 403, not 400: Unleash's SDKs print no body, and on a 401 or 403 they say the key is not allowed to
  // connect (a 400 they report as its number alone), which points at the fix: another token.
  if (environment === null) {
    throw new FlagwireError(
      'FORBIDDEN',
      "This token covers every environment of a project that has several, and Unleash's SDKs name none: use a token limited to one environment, the one to serve " +
        `(${validEnvironmentsText(project)}).`,
    );
  }
  if (!project.environments.includes(environment)) {
    throw new FlagwireError('NOT_FOUND', `Unknown environment "${environment}" for this project; ${validEnvironmentsText(project)}.`);
  }
  return { token, project, environment };
}
