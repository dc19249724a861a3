// Client keys as writer commands: made and revoked by a write token, a person or the operator (one
// command each, given who asks as a Principal, as webhooks' are), each audited in the project. The
// secret is drawn here, returned once, and only its hash kept (src/model/ids.ts: the one way Flagwire
// makes and hashes secrets).
import { type Actor, actorInProject, type Principal, writeAudit } from '../actor/audit-actor.js';
import { FlagwireError } from '../errors.js';
import type { AuditEntry } from '../model/audit.js';
import { requireEnvironmentAllowed } from '../model/environments.js';
import { hashSecret, newSecret, randomId } from '../model/ids.js';
import { requireName } from '../model/input-checks.js';
import type { Project } from '../model/projects.js';
import { checkedBody, type ReceivedBody } from '../model/request-body.js';
import { compileValidator } from '../model/validation.js';
import type { StoreWriter } from '../store/interfaces.js';
import type { ClientKey } from './client-key.js';
import { getClientKey, kClientKeyPrefix, listClientKeys, putClientKey } from './records.js';
import { ClientKeyCreate, type ClientKeyCreated, type ClientKeyRevoked, clientKeyView } from './schemas.js';
import type { ClientKeyAuditAction } from './audit-actions.js';

/** Keys a project may have that are not revoked (as its API tokens are bounded: spec, Limits). */
export const kMaxActiveClientKeys = 50;

const kCreateValidator = compileValidator(ClientKeyCreate, { quoteKeys: false });

/** The 404 of a key not found, or another project's (which a token must not learn exists). */
export function clientKeyNotFound(id: string): FlagwireError {
  return new FlagwireError('NOT_FOUND', `Client key ${id} does not exist in this project.`);
}

/**
 * Who changes a project's client keys, resolved once here: a token acts in its own project (another
 * project's key is then not found); a person or the operator in the project `projectOf` names, the
 * person needing a flag editor's role (as for webhooks: a key sends data in, it changes no rule).
 */
function actingOn(w: StoreWriter, principal: Principal, projectOf: () => string, now: number): { project: Project; actor: Actor } {
  return actorInProject(w, principal, projectOf, 'editFlags', now);
}

export interface ClientKeyCreateInput {
  principal: Principal;
  /** The project, for a person or the operator (a token makes keys in its own project). */
  projectId: string;
  /** The body, as the Management API received it; the command line sends its options as JSON (jsonBody). */
  received: ReceivedBody;
}

export function clientKeyCreate(w: StoreWriter, input: ClientKeyCreateInput, now: number): ClientKeyCreated {
  const { project, actor } = actingOn(w, input.principal, () => input.projectId, now);
  const body = checkedBody(input.received, kCreateValidator);
  const name = requireName('name', body.name);
  const environment = keyEnvironment(project, body.environment);
  // A token limited to some environments makes keys of those only (a single project's tokens have no limit).
  requireEnvironmentAllowed(actor.environments, environment);
  const active = listClientKeys(w, project.id).filter((k) => k.revokedAt === null).length;
  if (active >= kMaxActiveClientKeys)
    throw new FlagwireError(
      'INVALID_REQUEST',
      `A project has at most ${kMaxActiveClientKeys} client keys that are not revoked: revoke one first.`,
    );
  const secret = newSecret(kClientKeyPrefix);
  const key: ClientKey = {
    id: `ck_${randomId(16)}`,
    projectId: project.id,
    name,
    environment,
    uses: [...body.uses],
    secretHash: hashSecret(secret),
    createdAt: now,
    createdBy: actor.id,
    createdByName: actor.name,
    revokedAt: null,
  };
  putClientKey(w, key);
  audit(w, actor, key, 'client-key.create', { clientKey: { before: null, after: clientKeyView(key) } }, now);
  return { ...clientKeyView(key), secret };
}

/** A multi-environment project's key names one of its environments; a single one's names none. */
function keyEnvironment(project: Project, environment: string | undefined): string | null {
  if (project.kind === 'single') {
    if (environment !== undefined)
      throw new FlagwireError(
        'INVALID_REQUEST',
        'This project is a single-environment project, which has no environments; drop "environment".',
      );
    return null;
  }
  if (environment === undefined)
    throw new FlagwireError(
      'INVALID_REQUEST',
      `environment is required on a multi-environment project: one of ${project.environments.join(', ')}`,
    );
  if (!project.environments.includes(environment))
    throw new FlagwireError(
      'INVALID_REQUEST',
      `unknown environment "${environment}"; valid environments: ${project.environments.join(', ')}`,
    );
  return environment;
}

export function clientKeyRevoke(w: StoreWriter, input: { principal: Principal; keyId: string }, now: number): ClientKeyRevoked {
  const { project, actor } = actingOn(
    w,
    input.principal,
    () => {
      const key = getClientKey(w, input.keyId);
      if (key === undefined) throw clientKeyNotFound(input.keyId);
      return key.projectId;
    },
    now,
  );
  const key = getClientKey(w, input.keyId);
  if (key === undefined || key.projectId !== project.id) throw clientKeyNotFound(input.keyId);
  requireEnvironmentAllowed(actor.environments, key.environment);
  // Revoking a revoked key changes nothing and answers when it was revoked: a retried revoke is not an error.
  if (key.revokedAt !== null) return { id: key.id, revokedAt: key.revokedAt };
  putClientKey(w, { ...key, revokedAt: now });
  audit(w, actor, key, 'client-key.revoke', { clientKey: { before: clientKeyView(key), after: null } }, now);
  return { id: key.id, revokedAt: now };
}

function audit(
  w: StoreWriter,
  actor: Actor,
  key: ClientKey,
  action: ClientKeyAuditAction,
  changes: AuditEntry['changes'],
  now: number,
): void {
  writeAudit(w, actor, { projectId: key.projectId, action, env: key.environment, changes }, now);
}
