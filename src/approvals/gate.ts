// The approvals gate (issue 46; docs/approvals.md). Every writer command runs through it (runCommand in
// src/command-runner/commands.ts, the one place commands run: the writer thread, the command line, the
// demo seed), so a change to a guarded environment cannot go around it, whatever the surface: the
// Management API, the web console, the command line, flags as code, a flag file followed, a release plan
// falling due.
//
// A command runs as ever, in a nested transaction. If what it wrote touches no project with a policy,
// its writes are kept: nothing more is read (the common case costs one nested transaction). Otherwise
// its writes are rolled back and judged against the store as it was: each record's view in each guarded
// environment (src/store/interfaces.ts: EnvironmentBearing), before and after. None moved: the command runs again
// and is kept. One moved: the change applies only for a bypass token of every environment touched, or a
// release plan that was itself approved; from anyone else it becomes a change request (or edits the
// author's own pending one), and nothing of it is applied.
import { FlagwireError } from '../errors.js';
import type { ApprovalAuditAction } from './audit-actions.js';
import type { AuditEntry } from '../model/audit.js';
import { randomId } from '../model/ids.js';
import type { ApprovalRule, Project } from '../model/projects.js';
import type { Change } from '../store/changes.js';
import type { NewAuditEntry, StoreReader, StoreWriter, Tentative } from '../store/interfaces.js';
import { asAuthor, isAuthorOf, withCoAuthor } from './authors.js';
import { envName, rulesOf } from './policy.js';
import { kApprovedPlanRecords, kChangeRequestRecords, type ChangeRequest, type RequestActor } from './records.js';
import { compact, keyOf, kMaxPendingPerProject, pendingRequests, pendingRequestsBy, summaryOf, unsequenced } from './requests.js';
import { same } from './record-diff.js';

/** A command's outcome: applied (its value), or held as a change request; with the audit entries written. */
export type Gated<T> =
  | { applied: true; value: T; entries: AuditEntry[] }
  | { applied: false; request: ChangeRequest; entries: AuditEntry[] };

type Run<T> = () => { value: T; entries: AuditEntry[] };

/**
 * Runs `run` (a command, its audit entries collected) through the gate. `asker`: the audit actor the
 * command acts for (audit-actor.ts actorIdOf), when it names one: a change it refuses may be one its
 * author makes to their own pending request, which is checked on top of that request instead.
 */
export function gate<T>(w: StoreWriter, run: Run<T>, now: number, asker: string | null): Gated<T> {
  let trial: Tentative<{ value: T; entries: AuditEntry[] }>;
  try {
    trial = w.tentatively(run, (changes) => touchesPolicy(w, changes));
  } catch (err) {
    if (!(err instanceof FlagwireError) || asker === null) throw err;
    const mine = ownPendingBeneath(w, asker, run);
    if (mine === null) throw err;
    const { value: request, entries } = w.collectAudit(() => edit(w, mine, asker, run, now));
    return { applied: false, request, entries };
  }
  if (trial.kept) return { applied: true, ...trial.value };
  // Rolled back: the store reads as before the command from here.
  const judged = judge(w, trial.changes);
  if (judged === null || appliesApprovedRequest(w, trial.changes)) return { applied: true, ...run() };
  const author = authorOf(w, trial.value.entries, trial.changes, judged);
  if (author.id.startsWith('token:')) {
    const tokenId = author.id.slice('token:'.length);
    if (judged.rules.every((rule) => rule.bypassTokens.includes(tokenId))) return { applied: true, ...run() };
  }
  if (author.id.startsWith('plan:')) {
    // A plan made through an approved request carries that approval; one made before, none.
    if (w.getKeyed(kApprovedPlanRecords, author.id.slice('plan:'.length)) !== undefined) return { applied: true, ...run() };
    throw new FlagwireError(
      'APPROVAL_REQUIRED',
      `${author.name} was not approved, and ${judgedEnvs(judged)} needs approval: nothing was changed. Make it again; it becomes a change request.`,
    );
  }
  const unheld = trial.changes.filter((change) => change.kind !== 'audit' && w.changeBearing(change.kind) === undefined);
  if (unheld.length > 0) {
    throw new FlagwireError(
      'APPROVAL_REQUIRED',
      `This change also changes ${[...new Set(unheld.map((c) => c.kind))].join(', ')}, which a change request cannot hold, and it changes ${judgedEnvs(judged)}, which needs approval: nothing was changed. An Admin or Owner can clear the environment's approval policy first (flagwire approvals clear).`,
    );
  }
  const { value: request, entries } = w.collectAudit(() => hold(w, judged, author, trial.changes, trial.value.entries, run, now));
  return { applied: false, request, entries };
}

/**
 * The asker's pending request (theirs as its author: authors.ts) on top of which a command refused on
 * the records as they are is not refused (a default variant among the variants it adds; a flag made
 * again under the name a request deleting it frees); null when there is none. Each is tried on its own,
 * the last changed first, rolled back.
 */
function ownPendingBeneath<T>(w: StoreWriter, asker: string, run: Run<T>): ChangeRequest | null {
  for (const request of pendingRequestsBy(w, asAuthor(w, { id: asker, name: asker }))) {
    try {
      w.tentatively(
        () => {
          w.applyChanges(request.changes);
          return run();
        },
        () => true,
      );
      return request;
    } catch (err) {
      if (!(err instanceof FlagwireError)) throw err;
    }
  }
  return null;
}

/** Whether any change is to a record that bears on a project with an approval policy. */
function touchesPolicy(r: StoreReader, changes: readonly Change[]): boolean {
  for (const change of changes) {
    const bearing = r.changeBearing(change.kind);
    if (bearing === undefined) continue;
    const project = r.getProject(bearing.bearing.projectOf(change.value));
    if (project !== undefined && rulesOf(project).length > 0) return true;
  }
  return false;
}

/**
 * Whether `changes` are an approved request being applied (request-commands.ts requestApprove): a pending
 * request made applied in them, and every record that bears on an environment among its own.
 */
function appliesApprovedRequest(r: StoreReader, changes: readonly Change[]): boolean {
  const applied = changes
    .filter((change) => change.kind === kChangeRequestRecords.name)
    .map((change) => change.value as ChangeRequest)
    .filter((request) => request.status === 'applied' && r.getKeyed(kChangeRequestRecords, request.id)?.status === 'pending');
  if (applied.length === 0) return false;
  const covered = new Set(applied.flatMap((request) => request.changes.map((change) => keyOf(r, change))));
  return changes.every((change) => r.changeBearing(change.kind) === undefined || covered.has(keyOf(r, change)));
}

interface Judged {
  project: Project;
  /** The guarded environments' rules whose view the change moves. */
  rules: ApprovalRule[];
}

/** The guarded environments `changes` move (read against the store as it was before them); null: none. */
function judge(r: StoreReader, changes: readonly Change[]): Judged | null {
  let project: Project | null = null;
  // By environment: each change reads the project afresh, so one rule arrives as several equal objects.
  const touched = new Map<string | null, ApprovalRule>();
  for (const change of compact(r, changes)) {
    const found = r.changeBearing(change.kind);
    if (found === undefined) continue;
    const { bearing, removal } = found;
    const owner = r.getProject(bearing.projectOf(change.value));
    if (owner === undefined) continue;
    const rules = rulesOf(owner);
    if (rules.length === 0) continue;
    if (project !== null && project.id !== owner.id) throw new Error('a command changed guarded environments of two projects');
    project = owner;
    const stored = bearing.stored(r, change.value);
    for (const rule of rules) {
      const before = bearing.view(r, stored, rule.env);
      const after = removal ? null : bearing.view(r, change.value, rule.env);
      if (same(before, after)) continue;
      // A plan ending (cancelled, run, completed) changes nothing there by itself.
      if (bearing.isPlan === true && after === null) continue;
      touched.set(rule.env, rule);
    }
  }
  return project === null || touched.size === 0 ? null : { project, rules: [...touched.values()] };
}

function judgedEnvs(judged: Judged): string {
  return judged.rules.map((rule) => envName(rule.env)).join(' and ');
}

/**
 * Who made the change: the one actor its audit entries name. A plan the change itself writes acts for
 * its maker there (starting or resuming a rollout sets its step as `plan:<id>`), so beside another actor
 * it is not an author; a plan alone (falling due) is.
 */
function authorOf(r: StoreReader, entries: readonly AuditEntry[], changes: readonly Change[], judged: Judged): RequestActor {
  const actors = new Map(entries.map((entry) => [entry.actor, entry.actorName]));
  if (actors.size > 1) {
    for (const change of changes) {
      const found = r.changeBearing(change.kind);
      if (found?.bearing.isPlan === true) actors.delete(`plan:${found.bearing.kind.key(change.value)}`);
    }
  }
  if (actors.size !== 1) {
    throw new FlagwireError(
      'APPROVAL_REQUIRED',
      `${judgedEnvs(judged)} needs approval, and this change names ${actors.size === 0 ? 'no one' : 'more than one'} as its author: nothing was changed.`,
    );
  }
  const [[id, name]] = [...actors] as [[string, string]];
  return { id, name };
}

/**
 * Holds the change as a request: the author's pending request on the same records (theirs as its author:
 * authors.ts) is edited (the change made on top of it, its approvals voided), or a new one is opened.
 */
function hold<T>(
  w: StoreWriter,
  judged: Judged,
  actor: RequestActor,
  changes: readonly Change[],
  entries: readonly AuditEntry[],
  run: Run<T>,
  now: number,
): ChangeRequest {
  const held = compact(
    w,
    changes.filter((change) => change.kind !== 'audit'),
  );
  const keys = new Set(held.map((change) => keyOf(w, change)));
  const pending = pendingRequests(w, judged.project.id);
  const author = asAuthor(w, actor);
  const mine = pending.find((q) => isAuthorOf(q, author) && q.changes.some((change) => keys.has(keyOf(w, change))));
  const envs = judged.rules.map((rule) => rule.env);
  if (mine !== undefined) return edit(w, mine, actor.id, run, now);
  if (pending.length >= kMaxPendingPerProject) {
    throw new FlagwireError(
      'APPROVAL_REQUIRED',
      `${judgedEnvs(judged)} needs approval, and project ${judged.project.id} has ${pending.length} change requests pending already, the most it holds: nothing was changed. Decide or withdraw some first.`,
    );
  }
  const request: ChangeRequest = {
    id: `chr_${randomId(16)}`,
    projectId: judged.project.id,
    status: 'pending',
    environments: envs,
    summary: summaryOf(w, entries, held),
    author,
    version: 1,
    createdAt: now,
    updatedAt: now,
    changes: held,
    base: held.map((change) => storedOf(w, change)),
    audit: unsequenced(entries),
    approvals: [],
    comments: [],
    decided: null,
  };
  w.putKeyed(kChangeRequestRecords, request);
  auditRequest(w, request, author, 'request.open', now);
  return request;
}

/**
 * An author (`editorId`, an audit actor) changed records of their pending request again: the change is
 * made on top of the request's (rolled back as the first was), and the request becomes both, its next
 * version, with the editor among its authors. A change that adds nothing leaves it as it is; one that
 * does voids its approvals.
 */
function edit<T>(w: StoreWriter, request: ChangeRequest, editorId: string, run: Run<T>, now: number): ChangeRequest {
  const bases = new Map(request.changes.map((change, i) => [keyOf(w, change), request.base[i]]));
  const trial = w.tentatively(
    () => {
      w.applyChanges(request.changes);
      return run();
    },
    () => true,
  );
  if (trial.kept) throw new Error('an edit is always rolled back');
  const held = compact(
    w,
    trial.changes.filter((change) => change.kind !== 'audit'),
  );
  if (same(held, request.changes)) return request;
  // The guarded environments the request and its edit move together (the store reads as before both).
  const envs = judge(w, held)?.rules.map((rule) => rule.env) ?? [];
  const audit = mergeAudit(request.audit, unsequenced(trial.value.entries));
  const editor = asAuthor(w, { id: editorId, name: trial.value.entries.find((e) => e.actor === editorId)?.actorName ?? editorId });
  const next: ChangeRequest = {
    ...withCoAuthor(request, editor),
    version: (request.version ?? 1) + 1,
    environments: [...new Set([...request.environments, ...envs])],
    summary: summaryOf(w, audit, held),
    changes: held,
    base: held.map((change) => {
      const key = keyOf(w, change);
      return bases.has(key) ? bases.get(key) : storedOf(w, change);
    }),
    audit,
    approvals: [],
    updatedAt: now,
  };
  w.putKeyed(kChangeRequestRecords, next);
  auditRequest(w, next, request.author, 'request.edit', now, request.approvals.length > 0 ? 'its approvals were voided' : undefined);
  return next;
}

/**
 * A request's audit entries with an edit's added: one entry per action on one flag and environment, its
 * fields' first `before` and last `after`, so a request edited many times stays the size of what it
 * changes (and is audited, when applied, as the one change it is).
 */
function mergeAudit(entries: readonly NewAuditEntry[], added: readonly NewAuditEntry[]): NewAuditEntry[] {
  const merged = new Map<string, NewAuditEntry>();
  for (const entry of [...entries, ...added]) {
    const key = JSON.stringify([entry.action, entry.flagId, entry.env]);
    const first = merged.get(key);
    if (first === undefined) {
      merged.set(key, entry);
      continue;
    }
    const changes = { ...first.changes };
    for (const [field, change] of Object.entries(entry.changes)) {
      changes[field] = { before: Object.hasOwn(first.changes, field) ? first.changes[field]!.before : change.before, after: change.after };
    }
    merged.set(key, { ...first, changes });
  }
  return [...merged.values()];
}

/** The record a change replaces, as stored now (null: none). */
function storedOf(r: StoreReader, change: Change): unknown {
  const found = r.changeBearing(change.kind);
  return found === undefined ? null : (found.bearing.stored(r, change.value) ?? null);
}

/** Audits an act on a request (its webhook event: `request`). */
export function auditRequest(
  w: StoreWriter,
  request: ChangeRequest,
  actor: RequestActor,
  action: Exclude<ApprovalAuditAction, 'approvals.set' | 'approvals.clear'>,
  now: number,
  note?: string,
): void {
  w.appendAudit({
    at: now,
    projectId: request.projectId,
    actor: actor.id,
    actorName: actor.name,
    action,
    flagId: null,
    env: request.environments[0] ?? null,
    changes: {
      request: {
        before: null,
        after: { id: request.id, summary: request.summary, status: request.status, ...(note === undefined ? {} : { note }) },
      },
    },
  });
}
