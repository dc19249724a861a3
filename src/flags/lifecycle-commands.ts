// Commands of a flag's lifecycle (issue 99; docs/api.md: Flag lifecycle): its type, owner and lifetime
// changed, and the flag archived and restored. Archiving in a guarded environment is held for approval
// by the approvals gate as any other write is (environment-state.ts: an archived flag bears nothing).
import { FlagwireError } from '../errors.js';
import { actorFor, type Actor, type Principal, tokenProject, writeAudit } from '../actor/audit-actor.js';
import { requireEnvironmentAllowed } from '../model/environments.js';
import type { Flag } from '../model/flags.js';
import type { Project } from '../model/projects.js';
import { requireProject } from '../model/records/lookups.js';
import type { StoreWriter } from '../store/interfaces.js';
import { putFlag } from './records/flag-store.js';
import { compileValidator } from '../model/validation.js';
import { LifecyclePatch } from './lifecycle-shapes.js';
import { requireFlag, requireProjectFlag } from './flag-lookups.js';
import { requireFlagUnchanged } from './flag-version.js';
import type { FlagAuditAction } from './audit-actions.js';
import type { FieldChanges } from './patch-rules.js';
import { requireRefsWithin } from './flag-commands.js';

const kLifecyclePatchValidator = compileValidator(LifecyclePatch, { quoteKeys: true });

/** A lifecycle command's flag and who asks (a Management API token, a user, the operator). */
export interface LifecycleInput {
  flagId: string;
  principal: Principal;
  /** The If-Match header, or the command line's --if-version ('' or absent: no precondition). */
  ifMatch?: string;
}

/**
 * The flag and who acts, resolved in the transaction that writes (as flagPatch's): a token finds flags of
 * its own project only. `everyEnvironment`: the change is to every environment at once (archive, restore),
 * so a token limited to some of them is refused.
 */
function lifecycleTarget(w: StoreWriter, input: LifecycleInput, now: number, everyEnvironment: boolean) {
  const { principal } = input;
  const project: Project =
    principal.kind === 'token' ? tokenProject(w, principal, now) : requireProject(w, requireFlag(w, input.flagId).projectId);
  const actor = actorFor(w, principal, project, 'editFlags', now);
  const flag = requireProjectFlag(w, project.id, input.flagId);
  if (everyEnvironment) for (const env of project.environments) requireEnvironmentAllowed(actor.environments, env);
  requireFlagUnchanged(flag, input.ifMatch ?? '');
  return { flag, actor };
}

function store(w: StoreWriter, actor: Actor, next: Flag, action: FlagAuditAction, changes: FieldChanges, now: number): void {
  putFlag(w, next);
  writeAudit(w, actor, { projectId: next.projectId, action, flagId: next.id, changes }, now);
}

const kLifecycleKeys = ['type', 'owner', 'lifetimeDays'] as const;

/**
 * `flag` with a lifecycle merge patch applied (absent keeps, null returns to the default), and what
 * changed. A pure rule: the API's, the command line's and flags as code's.
 */
export function patchLifecycle(flag: Flag, patch: LifecyclePatch): { flag: Flag; changes: FieldChanges } {
  const next: Record<string, unknown> = { ...flag };
  const changes: FieldChanges = {};
  for (const key of kLifecycleKeys) {
    const value = patch[key];
    if (value === undefined) continue;
    const after = value === null ? undefined : key === 'owner' ? String(value).trim() : value;
    if (after === flag[key]) continue;
    changes[key] = { before: flag[key] ?? null, after: after ?? null };
    if (after === undefined) delete next[key];
    else next[key] = after;
  }
  return { flag: next as unknown as Flag, changes };
}

/** PATCH /api/v1/flags/{id}/lifecycle and `flag lifecycle`: a merge patch of type, owner and lifetime. */
export function flagLifecycle(w: StoreWriter, input: LifecycleInput & { patch: unknown }, now: number): Flag {
  const { flag, actor } = lifecycleTarget(w, input, now, false);
  if (!kLifecyclePatchValidator.check(input.patch))
    throw new FlagwireError('INVALID_REQUEST', kLifecyclePatchValidator.problems(input.patch).join('; '));
  const { flag: patched, changes } = patchLifecycle(flag, input.patch);
  if (Object.keys(changes).length === 0) return flag;
  const next = { ...patched, updatedAt: Math.max(now, flag.updatedAt + 1) };
  store(w, actor, next, 'flag.lifecycle', changes, now);
  return next;
}

/**
 * POST /api/v1/flags/{id}/archive and `flag archive`: the flag leaves every evaluation surface, keeps its
 * name, history and audit. Archiving an archived flag changes nothing.
 */
export function flagArchive(w: StoreWriter, input: LifecycleInput, now: number): Flag {
  const { flag, actor } = lifecycleTarget(w, input, now, true);
  if (flag.archivedAt !== undefined) return flag;
  const next: Flag = { ...flag, archivedAt: now, updatedAt: Math.max(now, flag.updatedAt + 1) };
  store(w, actor, next, 'flag.archive', { archivedAt: { before: null, after: now } }, now);
  return next;
}

/** POST /api/v1/flags/{id}/restore and `flag restore`: the flag serves again as it was archived. */
export function flagRestore(w: StoreWriter, input: LifecycleInput, now: number): Flag {
  const { flag, actor } = lifecycleTarget(w, input, now, true);
  if (flag.archivedAt === undefined) return flag;
  const { archivedAt, ...rest } = flag;
  const next = { ...rest, updatedAt: Math.max(now, flag.updatedAt + 1) } as Flag;
  // The fragments its rules name may have grown while it was archived: served again, it must fit.
  requireRefsWithin(w, next, 'patch');
  store(w, actor, next, 'flag.restore', { archivedAt: { before: archivedAt, after: null } }, now);
  return next;
}
