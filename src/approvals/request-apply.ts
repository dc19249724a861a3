// Applying a change request (docs/approvals.md): each record it changes is written as it is now with
// only the paths the request changes set (record-diff.ts), so a change made since to anything else of
// the record is kept; a path the request changes that moved since refuses the whole request, and nothing
// is written (no lost update). The records are written as a node's copy writes them, with their own
// times moved to now (EnvironmentBearing.onApply), and the request's audit entries are appended naming
// its approvers.
import { FlagwireError } from '../errors.js';
import { changeOf, type Change } from '../store/changes.js';
import type { StoreReader, StoreWriter } from '../store/interfaces.js';
import { changedPaths, movedAt, valueAt, withValueAt } from './record-diff.js';
import { kApprovedPlanRecords, type ChangeRequest, type RequestEvent } from './records.js';
import { keyOf } from './requests.js';

/**
 * What applying the request would write now, or why it cannot be applied. `as`: records as they are to
 * be read instead of as stored, by key (keyOf): the gate asks what it was before a command wrote them.
 */
export function merged(
  r: StoreReader,
  request: ChangeRequest,
  as?: ReadonlyMap<string, unknown>,
): { ok: true; changes: Change[] } | { ok: false; problem: string } {
  const out: Change[] = [];
  for (const [i, change] of request.changes.entries()) {
    const found = r.changeBearing(change.kind);
    if (found === undefined)
      return { ok: false, problem: `it holds a change of kind ${change.kind}, which no longer bears on an environment` };
    const base = request.base[i] ?? null;
    const key = as === undefined ? undefined : keyOf(r, change);
    const current = key !== undefined && as!.has(key) ? as!.get(key) : (found.bearing.stored(r, change.value) ?? null);
    const proposed = proposedOf(r, change);
    const paths = changedPaths(base, proposed);
    const moved = movedAt(paths, base, current);
    if (moved.length > 0) {
      const what = `${found.bearing.kind.name} ${nameOf(base ?? proposed)}`;
      const where = moved[0]!.length === 0 ? '' : ` (${moved.map((p) => p.join('.')).join(', ')})`;
      return { ok: false, problem: `the ${what} changed since this request was made${where}` };
    }
    if (found.removal) {
      out.push(change);
      continue;
    }
    let value: unknown = current;
    for (const path of paths) value = withValueAt(value, path, valueAt(proposed, path));
    out.push(changeOf(change.kind, value));
  }
  return { ok: true, changes: out };
}

/** Applies an approved request in the open transaction; refuses (REQUEST_CONFLICT) if its records moved. */
export function applyRequest(w: StoreWriter, request: ChangeRequest, approvers: readonly RequestEvent[], now: number): void {
  const plan = merged(w, request);
  if (!plan.ok) {
    throw new FlagwireError(
      'REQUEST_CONFLICT',
      `Change request ${request.id} cannot be applied: ${plan.problem}. Nothing was changed; its author can withdraw it and make the change again from the current state.`,
    );
  }
  const delayMs = Math.max(0, now - request.updatedAt);
  const changes = plan.changes.map((change) => {
    const found = w.changeBearing(change.kind)!;
    const onApply = found.bearing.onApply;
    return found.removal || onApply === undefined ? change : changeOf(change.kind, onApply(change.value, now, delayMs));
  });
  w.applyChanges(changes);
  for (const change of changes) {
    const found = w.changeBearing(change.kind)!;
    // A plan made here is approved: what it changes as it runs applies without another request.
    if (found.bearing.isPlan === true && !found.removal) {
      w.putKeyed(kApprovedPlanRecords, { planId: found.bearing.kind.key(change.value), requestId: request.id, at: now });
    }
  }
  const approvedBy = approvers.map(({ id, name }) => ({ id, name }));
  for (const entry of request.audit) w.appendAudit({ ...entry, at: now, request: { id: request.id, approvedBy } });
}

/**
 * The request laid on the records as they are now: each record it changes as it is now, with the paths
 * the request changes set (`changes`), and as it is now with those paths at the request's base values
 * (`base`), so a path that moved since still reads as moved, and nothing the request does not change is
 * part of it. An edit is made on top of this (gate.ts), so a field someone else changed since is neither
 * undone by the edit nor added to the request as a change it does not make. A record made, removed, or
 * gone since is kept as the request holds it.
 */
export function rebased(r: StoreReader, request: ChangeRequest): { changes: Change[]; base: unknown[] } {
  const changes: Change[] = [];
  const base: unknown[] = [];
  for (const [i, change] of request.changes.entries()) {
    const found = r.changeBearing(change.kind);
    const was = request.base[i] ?? null;
    const current = found === undefined ? null : (found.bearing.stored(r, change.value) ?? null);
    if (found === undefined || found.removal || was === null || current === null) {
      changes.push(change);
      base.push(was);
      continue;
    }
    let value: unknown = current;
    let before: unknown = current;
    for (const path of changedPaths(was, change.value)) {
      value = withValueAt(value, path, valueAt(change.value, path));
      before = withValueAt(before, path, valueAt(was, path));
    }
    changes.push(changeOf(change.kind, value));
    base.push(before);
  }
  return { changes, base };
}

/** The record a change leaves: its value, or null where it deletes the record. */
export function proposedOf(r: StoreReader, change: Change): unknown {
  return r.changeBearing(change.kind)?.removal === true ? null : change.value;
}

/** What a request changes, field by field: each record's key, and each path it sets with the value it sets there. */
export function fieldsOf(r: StoreReader, changes: readonly Change[], base: readonly unknown[]): [string, string, unknown][] {
  return changes.flatMap((change, i) => {
    const proposed = proposedOf(r, change);
    return changedPaths(base[i] ?? null, proposed).map((path): [string, string, unknown] => [
      keyOf(r, change),
      path.join('.'),
      valueAt(proposed, path),
    ]);
  });
}

function nameOf(record: unknown): string {
  const value = record as { name?: unknown; id?: unknown } | null;
  return typeof value?.name === 'string' ? `"${value.name}"` : typeof value?.id === 'string' ? value.id : '';
}
