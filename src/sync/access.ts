// Who may read a flag set (issue 44, item 2): a flag set shows rules and cohort lists, so unlike an
// evaluation answer it needs a token of its project, and its environment limit is honoured. The token is
// asked of the Management API's rules, not copied: identified as the Management API identifies it
// (src/tokens/auth.ts, the per-address lockout counting what it counts), authorised by the model's rule
// (src/model/records/token-access.ts: revoked, expired, organisation's plan), the environment by
// src/model/environments.ts; its uses and refusals go to its activity and denial mail through
// ActivityRecorder.refused, as the Management API's do (spec: Authentication 11, Events).
//
// A token of another project is answered as an unknown project is: a token never learns whether
// another project exists.
import { identifyToken } from '../tokens/auth.js';
import type { TokenUseLog } from '../capability/capability.js';
import type { AuthFailures } from '../http/auth-failures.js';
import { FlagwireError } from '../errors.js';
import { requireEnvironmentAllowed, validEnvironmentsText } from '../model/environments.js';
import { notFoundDetail } from '../model/records/lookups.js';
import type { Project } from '../model/projects.js';
import { authorizeToken } from '../model/records/token-access.js';
import type { Token } from '../model/tokens.js';
import type { StoreReader } from '../store/interfaces.js';
import type { Selector } from './selector.js';
import { getToken } from '../model/records/token-records.js';

/** Where a request's secret came from, for the error that says it was not a token. */
export type SecretSource = 'authorization' | 'provider_id' | 'selector' | 'none';

/** A request for a flag set: what it names, where its secret came from, who sent it and what it is called in the token's activity. */
export interface FlagSetRequest {
  readonly selector: Selector;
  /** `Bearer <secret>` (the Authorization header's form), '' when no secret was sent. */
  readonly authorization: string;
  readonly source: SecretSource;
  /** The client's address: failed authentications count per address (spec: Limits). */
  readonly ip: string;
  /** The token activity's method and path (an HTTP request's; a gRPC call's "GRPC" and its method path). */
  readonly method: string;
  readonly path: string;
}

/** A request allowed: its token, the project and the environment whose set it reads. */
export interface Granted {
  readonly token: Token;
  readonly project: Project;
  readonly environment: string | null;
}

const kMissing =
  'Send a token of the project: gRPC metadata "authorization: Bearer <token>", the provider_id, or ",token=<token>" after the selector (HTTP: the header "Authorization: Bearer <token>").';

export class FlagSetAccess {
  constructor(
    private readonly store: StoreReader,
    private readonly authFailures: AuthFailures,
    private readonly activity: TokenUseLog,
  ) {}

  /** The grant of `request` at `now`, or the refusal (thrown), recorded on the token when one was named. */
  grant(request: FlagSetRequest, now: number): Granted {
    this.authFailures.check(request.ip, now);
    const token = this.identify(request, now);
    try {
      const granted = this.authorize(token, request.selector, now);
      this.activity.used(token.id, request.method, request.path, 200, now);
      return granted;
    } catch (err) {
      if (err instanceof FlagwireError) this.activity.refused(token.id, err, request.method, request.path, now);
      throw err;
    }
  }

  /**
   * Whether an open stream's grant still holds at `now` (its token revoked, expired, its project gone):
   * the refusal, recorded on the token, or null.
   */
  recheck(granted: Granted, selector: Selector, method: string, path: string, now: number): FlagwireError | null {
    const token = getToken(this.store, granted.token.id);
    try {
      if (token === undefined) throw new FlagwireError('UNKNOWN_TOKEN', 'This token no longer exists.');
      this.authorize(token, selector, now);
      return null;
    } catch (err) {
      if (!(err instanceof FlagwireError)) throw err;
      if (token !== undefined) this.activity.refused(token.id, err, method, path, now);
      return err;
    }
  }

  /** The token the request names; a missing, malformed or unknown one counts as a failed authentication of its address. */
  private identify(request: FlagSetRequest, now: number): Token {
    try {
      if (request.source === 'none') throw new FlagwireError('MISSING_TOKEN', kMissing);
      return identifyToken(this.store, request.authorization);
    } catch (err) {
      this.authFailures.record(request.ip, now);
      if (err instanceof FlagwireError && err.code === 'MALFORMED_TOKEN' && request.source !== 'authorization') {
        throw new FlagwireError('MALFORMED_TOKEN', `The ${request.source}'s token is not a Flagwire token (fw_<secret>).`);
      }
      throw err;
    }
  }

  private authorize(token: Token, selector: Selector, now: number): Granted {
    const { project } = authorizeToken(this.store, token, now);
    if (project.id !== selector.projectId) throw new FlagwireError('NOT_FOUND', notFoundDetail('project', selector.projectId));
    const environment = selector.environment;
    if (project.kind === 'multi' && environment === null) {
      throw new FlagwireError(
        'INVALID_REQUEST',
        `This project has environments: select one, flagSetId=${project.id}/<environment>; ${validEnvironmentsText(project)}.`,
      );
    }
    if (project.kind === 'single' && environment !== null) {
      throw new FlagwireError('INVALID_REQUEST', `This project has a single environment: select it as flagSetId=${project.id}.`);
    }
    if (environment !== null && !project.environments.includes(environment)) {
      throw new FlagwireError('NOT_FOUND', `Unknown environment "${environment}" for this project; ${validEnvironmentsText(project)}.`);
    }
    requireEnvironmentAllowed(token.environments, environment);
    return { token, project, environment };
  }
}
