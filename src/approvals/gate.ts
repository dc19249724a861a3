// The approvals gate (issue 46; docs/approvals.md). Every writer command runs through it (runCommand in
// src/writer/thread/commands.ts, the one place commands run: the writer thread, the command line, the
// demo seed), so a change to a guarded environment cannot go around it, whatever the surface: the
// Management API, the web console, the command line, flags as code, a flag file followed, a release plan
// falling due.
//
// A command runs as ever, in a nested transaction. If what it wrote touches no project with a policy,
// its writes are kept: nothing more is read (the common case costs one nested transaction). Otherwise
// its writes are rolled back and judged against the store as it was: each record's view in each guarded
// environment (src/store/interfaces.ts: EnvironmentBearing), before and after, given the flag states
// evaluation there reads now or will once the project's release plans run and its pending requests are
// applied (EnvRead): what an approved plan or a pending request will read is guarded as what is read now,
// and a change to it names them (alters). None moved: the command runs again and is kept. One moved: the
// change applies only for a bypass token of every environment touched (a release plan it makes is approved
// so), or a release plan that was itself approved; from anyone else it becomes a change request (or edits
// the author's own pending one), and nothing of it is applied.
import { FlagwireError } from '../errors.js';
import type { ApprovalAuditAction } from './audit-actions.js';
import type { AuditEntry } from '../model/audit.js';
import { randomId } from '../model/ids.js';
import type { ApprovalRule, Project } from '../model/projects.js';
import type { Change } from '../store/changes.js';
import type { EnvRead, EnvReads, NewAuditEntry, StoreReader, StoreWriter, Tentative } from '../store/interfaces.js';
import { asAuthor, isAuthorOf, withCoAuthor } from './authors.js';
import { envName, rulesOf } from './policy.js';
import { kApprovedPlanRecords, kChangeRequestRecords, type ChangeRequest, type RequestActor } from './records.js';
import { compact, keyOf, kMaxPendingPerProject, pendingRequests, pendingRequestsBy, summaryOf, unsequenced } from './requests.js';
import { same } from '../model/json-same.js';
import { changedPaths, movedAt } from './record-diff.js';
import { fieldsOf, merged, proposedOf, rebased } from './request-apply.js';
import { mailApprovers, type RequestNotice } from './request-notices.js';
import { type RequestHeadline, requestHeadline } from './request-view.js';
import { getProject } from '../model/records/project-records.js';

/** A command's outcome: applied (its value), or held as a change request; with the audit entries written. */
export type Gated<T> =
  | { applied: true; value: T; entries: AuditEntry[] }
  | { applied: false; request: ChangeRequest; entries: AuditEntry[]; edited: boolean };

type Run<T> = () => { value: T; entries: AuditEntry[] };

/**
 * The capabilities' write checks (src/capabilities.ts checkWrites), run on what a command wrote, reading
 * the store as it left it: a change they refuse is refused whether it would be applied or held, or edit
 * its author's request (what a request holds is checked again where it is applied, inside the approval's
 * command).
 */
type Check = (r: StoreReader, changes: readonly Change[]) => void;

/** Only checks: a trial that is always rolled back. */
const checkedRollBack = (w: StoreReader, check: Check) => (changes: readonly Change[]) => {
  check(w, changes);
  return true;
};

/**
 * Runs `run` (a command, its audit entries collected) through the gate. `asker`: the audit actor the
 * command acts for (audit-actor.ts actorIdOf), when it names one: a change it refuses may be one its
 * author makes to their own pending request, which is checked on top of that request instead.
 */
export function gate<T>(w: StoreWriter, run: Run<T>, now: number, asker: string | null, check: Check): Gated<T> {
  let trial: Tentative<{ value: T; entries: AuditEntry[] }>;
  try {
    trial = w.tentatively(run, (changes) => {
      check(w, changes);
      return touchesPolicy(w, changes);
    });
  } catch (err) {
    if (!(err instanceof FlagwireError) || asker === null) throw err;
    const mine = ownPendingBeneath(w, asker, run, check);
    if (mine === null) throw err;
    const { value: request, entries } = w.collectAudit(() => edit(w, mine, asker, run, check, now));
    return { applied: false, request, entries, edited: true };
  }
  if (trial.kept) return { applied: true, ...trial.value };
  // Rolled back: the store reads as before the command from here.
  const judged = judge(w, trial.changes);
  const apply = () => ({ applied: true as const, ...applyTelling(w, trial.changes, run, now, asker) });
  if (judged === null || appliesApprovedRequest(w, trial.changes)) return apply();
  const author = authorOf(w, trial.value.entries, trial.changes, judged);
  if (author.id.startsWith('token:')) {
    const tokenId = author.id.slice('token:'.length);
    if (judged.rules.every((rule) => rule.bypassTokens.includes(tokenId))) {
      // Its changes as applied, not the trial's: a command draws new ids when it runs again.
      const made: Change[] = [];
      const recorded: Run<T> = () =>
        w.tentatively(run, (changes) => {
          made.push(...changes);
          return false;
        }).value;
      const done = { applied: true as const, ...applyTelling(w, trial.changes, recorded, now, asker) };
      approveBypassPlans(w, made, judged, tokenId, now);
      return done;
    }
  }
  if (author.id.startsWith('plan:')) {
    // A plan made through an approved request carries that approval; one made before, none.
    if (w.getKeyed(kApprovedPlanRecords, author.id.slice('plan:'.length)) !== undefined) return apply();
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
  const { value: held, entries } = w.collectAudit(() => hold(w, judged, author, trial.changes, trial.value.entries, run, check, now));
  return { applied: false, request: held.request, entries, edited: held.edited };
}

/**
 * Runs the command for good (the store reads as before it), and tells of each pending request it makes
 * stale: one that could be applied before it and no longer can (a field it changes moved) is audited
 * `request.stale`, as done by who made the command (`asker`, when one of its entries names them; else
 * its first entry's actor), and its approvers are told (announce). Only requests holding a record
 * `changes` writes are read, and only one whose fields there the command moved is judged, before and
 * after: a request is applicable or not by those fields alone, so one whose fields did not move is as
 * applicable as it was (this runs at every applied write to a project with a policy).
 */
function applyTelling<T>(
  w: StoreWriter,
  changes: readonly Change[],
  run: Run<T>,
  now: number,
  asker: string | null,
): { value: T; entries: AuditEntry[] } {
  const keys = new Set(changes.map((change) => keyOf(w, change)));
  const projects = new Set<string>();
  for (const change of changes) {
    const found = w.changeBearing(change.kind);
    if (found !== undefined) projects.add(found.bearing.projectOf(change.value));
  }
  const watched = [...projects]
    .flatMap((projectId) => pendingRequests(w, projectId))
    .filter((request) => request.changes.some((change) => keys.has(keyOf(w, change))));
  // The records they hold that the command writes, as they are before it.
  const before = new Map<string, unknown>();
  for (const request of watched)
    for (const change of request.changes) {
      const key = keyOf(w, change);
      if (keys.has(key) && !before.has(key)) before.set(key, storedOf(w, change));
    }
  const done = run();
  const actor = done.entries.find((entry) => entry.actor === asker) ?? done.entries[0];
  if (watched.length === 0 || actor === undefined) return done;
  const told = w.collectAudit(() => {
    for (const { id } of watched.filter((request) => movesFieldsOf(w, request, before))) {
      const request = w.getKeyed(kChangeRequestRecords, id);
      if (request?.status === 'pending' && merged(w, request, before).ok && !merged(w, request).ok) {
        announce(w, request, { id: actor.actor, name: actor.actorName }, 'stale', now);
      }
    }
  });
  return { value: done.value, entries: [...done.entries, ...told.entries] };
}

/** Whether a field `request` changes, in a record written since `before` (keyOf: the record as it was), moved. */
function movesFieldsOf(r: StoreReader, request: ChangeRequest, before: ReadonlyMap<string, unknown>): boolean {
  return request.changes.some((change, i) => {
    const key = keyOf(r, change);
    if (!before.has(key)) return false;
    return movedAt(changedPaths(request.base[i] ?? null, proposedOf(r, change)), before.get(key), storedOf(r, change)).length > 0;
  });
}

/**
 * The asker's pending request (theirs as its author: authors.ts) on top of which a command refused on
 * the records as they are is not refused (a default variant among the variants it adds; a flag made
 * again under the name a request deleting it frees); null when there is none. Each is tried on its own,
 * the last changed first, rolled back.
 */
function ownPendingBeneath<T>(w: StoreWriter, asker: string, run: Run<T>, check: Check): ChangeRequest | null {
  for (const request of pendingRequestsBy(w, asAuthor(w, { id: asker, name: asker }))) {
    try {
      w.tentatively(
        () => {
          w.applyChanges(rebased(w, request).changes);
          return run();
        },
        checkedRollBack(w, check),
      );
      return request;
    } catch (err) {
      if (!(err instanceof FlagwireError)) throw err;
    }
  }
  return null;
}

/**
 * A bypass token's change was applied: a release plan it made for a guarded environment is approved as
 * its immediate writes are, so what the plan changes when it falls due needs no request. `changes` are
 * the command's, as applied.
 */
function approveBypassPlans(w: StoreWriter, changes: readonly Change[], judged: Judged, tokenId: string, now: number): void {
  const reads = readsOf(w, judged.project.id);
  for (const change of changes) {
    const found = w.changeBearing(change.kind);
    if (found === undefined || found.removal || found.bearing.isPlan !== true) continue;
    if (judged.rules.some((rule) => found.bearing.view(w, change.value, rule.env, (only) => reads(rule.env, only)) !== null)) {
      const planId = found.bearing.kind.key(change.value);
      w.putKeyed(kApprovedPlanRecords, { planId, requestId: null, bypassTokenId: tokenId, at: now });
    }
  }
}

/** Whether any change is to a record that bears on a project with an approval policy. */
function touchesPolicy(r: StoreReader, changes: readonly Change[]): boolean {
  for (const change of changes) {
    const bearing = r.changeBearing(change.kind);
    if (bearing === undefined) continue;
    const project = getProject(r, bearing.bearing.projectOf(change.value));
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
  /** The release plans and pending requests whose change would read what this one moves (ChangeRequest.alters). */
  alters: string[];
}

/**
 * What evaluation in an environment of the project reads now or will (EnvRead), by environment, read
 * once each and only when a kind's view asks: every record of the kinds that read (a flag's state, a
 * plan's states to come), and what each pending change request's changes would read, named by the request.
 * What is planned (the plans' and the requests') is read apart, so a view that asks only for it (a flag's:
 * EnvReads 'planned') reads no flag's state now.
 */
function readsOf(r: StoreReader, projectId: string): (env: string | null, only?: 'planned') => readonly EnvRead[] {
  const read = (env: string | null, planned: boolean): EnvRead[] => {
    const reads: EnvRead[] = [];
    for (const bearing of r.environmentBearings()) {
      if (bearing.reads === undefined || bearing.list === undefined || (bearing.isPlan === true) !== planned) continue;
      for (const value of bearing.list(r, projectId)) reads.push(...bearing.reads(r, value, env));
    }
    if (!planned) return reads;
    for (const request of pendingRequests(r, projectId)) {
      for (const change of request.changes) {
        const found = r.changeBearing(change.kind);
        if (found === undefined || found.removal || found.bearing.reads === undefined) continue;
        for (const read of found.bearing.reads(r, change.value, env)) reads.push({ ...read, by: request.id });
      }
    }
    return reads;
  };
  const memo = new Map<string, EnvRead[]>();
  const once = (key: string, make: () => EnvRead[]): EnvRead[] => {
    const known = memo.get(key);
    if (known !== undefined) return known;
    const reads = make();
    memo.set(key, reads);
    return reads;
  };
  return (env, only) => {
    const planned = once(`planned ${JSON.stringify(env)}`, () => read(env, true));
    return only === 'planned' ? planned : once(`all ${JSON.stringify(env)}`, () => [...read(env, false), ...planned]);
  };
}

/** The guarded environments `changes` move (read against the store as it was before them); null: none. */
function judge(r: StoreReader, changes: readonly Change[]): Judged | null {
  let project: Project | null = null;
  let reads: ReturnType<typeof readsOf> | null = null;
  // By environment: each change reads the project afresh, so one rule arrives as several equal objects.
  const touched = new Map<string | null, ApprovalRule>();
  const alters = new Set<string>();
  for (const change of compact(r, changes)) {
    const found = r.changeBearing(change.kind);
    if (found === undefined) continue;
    const { bearing, removal } = found;
    const owner = getProject(r, bearing.projectOf(change.value));
    if (owner === undefined) continue;
    const rules = rulesOf(owner);
    if (rules.length === 0) continue;
    if (project !== null && project.id !== owner.id) throw new Error('a command changed guarded environments of two projects');
    project = owner;
    reads ??= readsOf(r, owner.id);
    const stored = bearing.stored(r, change.value);
    for (const rule of rules) {
      const envReads = reads;
      const moved = (only: readonly EnvRead[] | null) => {
        // A plan's own reads are all planned: the same list answers both.
        const read: EnvReads = only === null ? (which) => envReads(rule.env, which) : () => only;
        const after = removal ? null : bearing.view(r, change.value, rule.env, read);
        // A plan ending (cancelled, run, completed) changes nothing there by itself.
        if (bearing.isPlan === true && after === null) return false;
        return !same(bearing.view(r, stored, rule.env, read), after);
      };
      if (!moved(null)) continue;
      touched.set(rule.env, rule);
      // Not moved by itself but through what a plan or a pending request will read: it alters them.
      if (moved([])) continue;
      for (const [by, planned] of byPlan(reads(rule.env, 'planned'))) if (moved(planned)) alters.add(by);
    }
  }
  return project === null || touched.size === 0 ? null : { project, rules: [...touched.values()], alters: [...alters] };
}

/** Reads by the plan or request that will read them; what is read now (`by` null) left out. */
function byPlan(reads: readonly EnvRead[]): Map<string, EnvRead[]> {
  const out = new Map<string, EnvRead[]>();
  for (const read of reads) if (read.by !== null) out.set(read.by, [...(out.get(read.by) ?? []), read]);
  return out;
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
 * authors.ts) is edited (the change made on top of it, its approvals voided), or a new one is opened;
 * `edited` says which.
 */
function hold<T>(
  w: StoreWriter,
  judged: Judged,
  actor: RequestActor,
  changes: readonly Change[],
  entries: readonly AuditEntry[],
  run: Run<T>,
  check: Check,
  now: number,
): { request: ChangeRequest; edited: boolean } {
  const compacted = compact(
    w,
    changes.filter((change) => change.kind !== 'audit'),
  );
  const keys = new Set(compacted.map((change) => keyOf(w, change)));
  const pending = pendingRequests(w, judged.project.id);
  const author = asAuthor(w, actor);
  const mine = pending.find((q) => isAuthorOf(q, author) && q.changes.some((change) => keys.has(keyOf(w, change))));
  const envs = judged.rules.map((rule) => rule.env);
  if (mine !== undefined) return { request: edit(w, mine, actor.id, run, check, now), edited: true };
  if (pending.length >= kMaxPendingPerProject) {
    throw new FlagwireError(
      'APPROVAL_REQUIRED',
      `${judgedEnvs(judged)} needs approval, and project ${judged.project.id} has ${pending.length} change requests pending already, the most it holds: nothing was changed. Decide or withdraw some first.`,
    );
  }
  const held = changing(
    w,
    compacted,
    compacted.map((change) => storedOf(w, change)),
  );
  const request: ChangeRequest = {
    id: `chr_${randomId(16)}`,
    projectId: judged.project.id,
    status: 'pending',
    environments: envs,
    summary: summaryOf(w, entries, held.changes),
    author,
    version: 1,
    createdAt: now,
    updatedAt: now,
    changes: held.changes,
    base: held.base,
    ...(judged.alters.length === 0 ? {} : { alters: judged.alters }),
    audit: unsequenced(entries),
    approvals: [],
    comments: [],
    decided: null,
  };
  w.putKeyed(kChangeRequestRecords, request);
  announce(w, request, author, 'opened', now);
  return { request, edited: false };
}

/** The changes that change something (a record written as it was changes nothing), each with its base. */
function changing(r: StoreReader, changes: readonly Change[], base: readonly unknown[]): { changes: Change[]; base: unknown[] } {
  const kept = changes.flatMap((change, i) => (fieldsOf(r, [change], [base[i]]).length > 0 ? [i] : []));
  return { changes: kept.map((i) => changes[i]!), base: kept.map((i) => base[i]) };
}

/**
 * An author (`editorId`, an audit actor) changed records of their pending request again: the change is
 * made on top of the request's, laid on the records as they are now (rebased: what others changed since
 * is neither undone nor made part of the request), rolled back as the first was, and the request becomes
 * both, its next version, with the editor among its authors. A field the edit sets to the value it has
 * now is no change, and is not added. A change that adds nothing leaves it as it is; one that does voids
 * its approvals.
 */
function edit<T>(w: StoreWriter, request: ChangeRequest, editorId: string, run: Run<T>, check: Check, now: number): ChangeRequest {
  const onNow = rebased(w, request);
  const bases = new Map(onNow.changes.map((change, i) => [keyOf(w, change), onNow.base[i]]));
  const trial = w.tentatively(
    () => {
      w.applyChanges(onNow.changes);
      return run();
    },
    checkedRollBack(w, check),
  );
  if (trial.kept) throw new Error('an edit is always rolled back');
  const compacted = compact(
    w,
    trial.changes.filter((change) => change.kind !== 'audit'),
  );
  const held = changing(
    w,
    compacted,
    compacted.map((change) => {
      const key = keyOf(w, change);
      return bases.has(key) ? bases.get(key) : storedOf(w, change);
    }),
  );
  if (same(fieldsOf(w, held.changes, held.base), fieldsOf(w, request.changes, request.base))) return request;
  // The guarded environments the request and its edit move together (the store reads as before both),
  // and the plans and other requests they alter (the request itself is not one of them).
  const judged = judge(w, held.changes);
  const envs = judged?.rules.map((rule) => rule.env) ?? [];
  const alters = [...new Set([...(request.alters ?? []), ...(judged?.alters ?? [])])].filter((id) => id !== request.id);
  const audit = mergeAudit(request.audit, unsequenced(trial.value.entries));
  const editor = asAuthor(w, { id: editorId, name: trial.value.entries.find((e) => e.actor === editorId)?.actorName ?? editorId });
  const next: ChangeRequest = {
    ...withCoAuthor(request, editor),
    version: (request.version ?? 1) + 1,
    environments: [...new Set([...request.environments, ...envs])],
    ...(alters.length === 0 ? {} : { alters }),
    summary: summaryOf(w, audit, held.changes),
    changes: held.changes,
    base: held.base,
    audit,
    approvals: [],
    updatedAt: now,
  };
  w.putKeyed(kChangeRequestRecords, next);
  announce(w, next, request.author, 'edited', now, request.approvals.length > 0 ? 'its approvals were voided' : undefined);
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

/** The audit action of each notice. */
const kNoticeActions = { opened: 'request.open', edited: 'request.edit', stale: 'request.stale' } as const;

/** Audits the request opened, edited or gone stale (a `request` event to webhooks), and mails who may approve it. */
function announce(w: StoreWriter, request: ChangeRequest, actor: RequestActor, notice: RequestNotice, now: number, note?: string): void {
  const view = auditRequest(w, request, actor, kNoticeActions[notice], now, note);
  mailApprovers(w, request, view, notice, now);
}

/**
 * Audits an act on a request (its webhook event: `request`): the entry names the request as every surface
 * shows it, without its diff (its title, status, environments, author, approvals of those required,
 * whether it is stale and why). Returns that view.
 */
export function auditRequest(
  w: StoreWriter,
  request: ChangeRequest,
  actor: RequestActor,
  action: Exclude<ApprovalAuditAction, 'approvals.set' | 'approvals.clear'>,
  now: number,
  note?: string,
): RequestHeadline {
  const view = requestHeadline(w, request);
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
        after: {
          id: request.id,
          title: view.title,
          summary: request.summary,
          status: request.status,
          environments: view.environments,
          author: view.author,
          approvals: view.approvals.length,
          required: view.required,
          stale: view.stale,
          problem: view.problem,
          ...(note === undefined ? {} : { note }),
        },
      },
    },
  });
  return view;
}
