// Commands for API tokens: create, rotate, revoke (spec: Token lifecycle, Authentication), one per verb for
// the web console and the command line, each given who asks: only a person changes tokens.
import { FlagwireError } from '../errors.js';
import type { Org } from '../model/accounts.js';
import { hashSecret, kTokenIdLength, newTokenSecret, randomId } from '../model/ids.js';
import { requireOrg, requireProject, requireToken } from '../model/records/lookups.js';
import { can, canManageToken, describeRole, holdsTokenSlot, inRotationGrace, tokenStatus } from '../model/permissions.js';
import { isManagementEligible } from '../model/plans.js';
import type { Project } from '../model/projects.js';
import type { Token, TokenView } from '../model/tokens.js';
import type { StoreWriter } from '../store/interfaces.js';
import { cleanList, requireName } from '../model/input-checks.js';
import { type PersonActor, personActor, type Principal, writeAudit } from '../actor/audit-actor.js';
import { putToken, listTokens } from '../model/records/token-records.js';
import type { TokenAuditAction } from './audit-actions.js';
import { getRole } from '../model/records/member-records.js';

export const kMaxActiveTokens = 50;
const kDayMs = 24 * 3600 * 1000;
export const kExpiryChoices = { never: 0, '30d': 30, '90d': 90, '365d': 365 } as const;
export type ExpiryChoice = keyof typeof kExpiryChoices;

export type { TokenView };

export interface CreatedToken extends TokenView {
  /** Shown once, at creation. */
  secret: string;
}

export function tokenView(token: Token): TokenView {
  const { secretHash: _hidden, ...view } = token;
  return view;
}

/** Who asks for a token's change: only a person (a token never makes, rotates or revokes a token). */
interface AsPerson {
  /** The web console's signed-in user, or the command line's --as user. */
  principal: Principal;
}

export interface TokenCreateInput extends AsPerson {
  projectId: string;
  name: string;
  permission: string;
  environments?: string[];
  expires?: string;
}

export function tokenCreate(w: StoreWriter, input: TokenCreateInput, now: number): CreatedToken {
  const person = personActor(w, input.principal, 'create a token');
  const { project, org } = tokenProject(w, input.projectId, now);
  const role = getRole(w, org.id, person.userId);
  if (!can(role, 'createToken')) {
    throw new FlagwireError(
      'FORBIDDEN',
      `Creating a token needs the Editor, Admin or Owner role in organisation ${org.id}; user ${person.userId} ${describeRole(role)}.`,
    );
  }
  if (input.permission !== 'read' && input.permission !== 'write') {
    throw new FlagwireError('INVALID_REQUEST', 'permission must be read or write');
  }
  const expires = input.expires ?? 'never';
  if (!Object.hasOwn(kExpiryChoices, expires)) {
    throw new FlagwireError(
      'INVALID_REQUEST',
      `expiry must be one of never, 30d, 90d, 365d (the maximum lifetime is 365 days), not "${expires}"`,
    );
  }
  const environments = cleanList(input.environments ?? []);
  if (environments.length > 0 && project.kind === 'single') {
    throw new FlagwireError('INVALID_REQUEST', 'a single-environment project has no environments to limit a token to');
  }
  const unknown = environments.filter((e) => !project.environments.includes(e));
  if (unknown.length > 0) {
    throw new FlagwireError(
      'INVALID_REQUEST',
      `unknown environment ${unknown.map((e) => `"${e}"`).join(', ')}; valid environments: ${project.environments.join(', ')}`,
    );
  }
  const days = kExpiryChoices[expires as ExpiryChoice];
  return issueToken(
    w,
    {
      projectId: project.id,
      name: requireName('name', input.name),
      permission: input.permission,
      environments,
      expiresAt: days === 0 ? 0 : now + days * kDayMs,
      createdBy: person.userId,
    },
    now,
    { actor: person, action: 'token.create', replaces: null },
  );
}

/**
 * The longest a rotated token's old secret may keep working: long enough to roll a change out over a
 * week's deploys, short enough that a leaked secret rotated away is dead within the week.
 */
export const kMaxGracePeriodSeconds = 7 * 24 * 3600;

export interface TokenRotateInput extends AsPerson {
  tokenId: string;
  /** How long the old secret keeps authenticating, in whole seconds from 0 (none, the default) to 7 days. */
  gracePeriodSeconds?: unknown;
}

/** A rotation's answer: the replacement with its secret, and until when the old secret works (null: it no longer does). */
export interface RotatedToken extends CreatedToken {
  replaced: { id: string; graceEndsAt: number | null };
}

export function tokenRotate(w: StoreWriter, input: TokenRotateInput, now: number): RotatedToken {
  const person = personActor(w, input.principal, 'rotate a token');
  const graceSeconds = gracePeriodSeconds(input.gracePeriodSeconds);
  const token = requireManageableToken(w, input.tokenId, person, 'rotate', now);
  const graceEndsAt = graceSeconds === 0 ? null : now + graceSeconds * 1000;
  putToken(w, { ...token, revokedAt: now, ...(graceEndsAt === null ? {} : { graceEndsAt }) });
  const created = issueToken(
    w,
    {
      projectId: token.projectId,
      name: token.name,
      permission: token.permission,
      environments: token.environments,
      // Same expiry setting: the replacement lives as long as the original was set to, from now.
      expiresAt: token.expiresAt === 0 ? 0 : now + (token.expiresAt - token.createdAt),
      createdBy: token.createdBy,
      // Whoever rotates it holds its new secret: a change made with it counts as theirs too.
      rotatedBy: person.userId,
    },
    now,
    { actor: person, action: 'token.rotate', replaces: token.id, gracePeriodSeconds: graceSeconds },
  );
  return { ...created, replaced: { id: token.id, graceEndsAt } };
}

/** The rotation's grace period, checked before anything is read or written: a bad one changes nothing. */
function gracePeriodSeconds(value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > kMaxGracePeriodSeconds) {
    throw new FlagwireError(
      'INVALID_REQUEST',
      `gracePeriodSeconds must be a whole number of seconds from 0 (none) to ${kMaxGracePeriodSeconds} (7 days)`,
    );
  }
  return value;
}

/** Revokes a token; one still in a rotation's grace period has its grace ended now. */
export function tokenRevoke(w: StoreWriter, input: { tokenId: string } & AsPerson, now: number): { id: string; revokedAt: number } {
  const person = personActor(w, input.principal, 'revoke a token');
  const token = requireManageableToken(w, input.tokenId, person, 'revoke', now);
  const inGrace = inRotationGrace(token, now);
  putToken(w, inGrace ? { ...token, graceEndsAt: now } : { ...token, revokedAt: now });
  writeAudit(
    w,
    person,
    {
      projectId: token.projectId,
      action: 'token.revoke' satisfies TokenAuditAction,
      changes: {
        token: { before: { id: token.id, name: token.name }, after: null },
        ...(inGrace ? { graceEndsAt: { before: token.graceEndsAt, after: now } } : {}),
      },
    },
    now,
  );
  return { id: token.id, revokedAt: inGrace ? token.revokedAt! : now };
}

type TokenSettings = Pick<Token, 'projectId' | 'name' | 'permission' | 'environments' | 'expiresAt' | 'createdBy' | 'rotatedBy'>;

/** Who acted (audited as `user:<id>` with the user's name, which is not always the token's creator: an Admin may rotate). */
interface TokenAudit {
  actor: PersonActor;
  action: Exclude<TokenAuditAction, 'token.revoke'>;
  /** The token a rotation revoked. */
  replaces: string | null;
  /** A rotation's grace period for the old secret (0: none). */
  gracePeriodSeconds?: number;
}

function issueToken(w: StoreWriter, settings: TokenSettings, now: number, audit: TokenAudit): CreatedToken {
  // Expired tokens that were never revoked still hold a slot (spec: Limits).
  const active = listTokens(w, settings.projectId).filter(holdsTokenSlot).length;
  if (active >= kMaxActiveTokens) {
    throw new FlagwireError(
      'INVALID_REQUEST',
      `This project already has ${kMaxActiveTokens} active tokens (expired tokens that were not revoked count); revoke one first.`,
    );
  }
  const secret = newTokenSecret();
  const token: Token = { id: randomId(kTokenIdLength), ...settings, createdAt: now, revokedAt: null, secretHash: hashSecret(secret) };
  putToken(w, token);
  writeAudit(
    w,
    audit.actor,
    {
      projectId: token.projectId,
      action: audit.action,
      changes: {
        token: {
          before: audit.replaces === null ? null : { id: audit.replaces, name: token.name },
          after: { id: token.id, name: token.name },
        },
        ...(audit.gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds: { before: null, after: audit.gracePeriodSeconds } }),
      },
    },
    now,
  );
  return { ...tokenView(token), secret };
}

/** Tokens belong to organisation projects only, and change only while the organisation may use the API. */
function tokenProject(w: StoreWriter, projectId: string, now: number): { project: Project; org: Org } {
  const project = requireProject(w, projectId);
  if (project.orgId === null)
    throw new FlagwireError('INVALID_REQUEST', 'A personal project cannot have tokens; tokens belong to organisation projects.');
  const org = requireOrg(w, project.orgId);
  if (!isManagementEligible(org, now)) {
    throw new FlagwireError(
      'PLAN_REQUIRED',
      `Organisation ${org.id} is not on Teams or Enterprise (or an active Teams trial) in good standing; its tokens are read-only in the console until it is.`,
    );
  }
  return { project, org };
}

function requireManageableToken(w: StoreWriter, tokenId: string, person: PersonActor, verb: 'rotate' | 'revoke', now: number): Token {
  const token = requireToken(w, tokenId);
  const { org } = tokenProject(w, token.projectId, now);
  const role = getRole(w, org.id, person.userId);
  // A Viewer changes nothing: a creator who is now a Viewer no longer may (model/permissions.ts).
  if (!canManageToken(role, verb, token, person.userId)) {
    throw new FlagwireError(
      'FORBIDDEN',
      `Only the token's creator or an Admin of organisation ${org.id} may ${verb} token ${tokenId}, and a Viewer may not; user ${person.userId} ${describeRole(role)}.`,
    );
  }
  // A rotated token still in its grace period may be revoked (ending the grace now), not rotated again.
  if (tokenStatus(token, now) === 'revoked' && !(verb === 'revoke' && inRotationGrace(token, now)))
    throw new FlagwireError('INVALID_REQUEST', `Token ${tokenId} is already revoked.`);
  return token;
}
