// What applying a flag file to a project would change: the project's model (project-model.ts) against
// the file's, field by field. One function for `flagwire plan`, the API's plan and apply itself, so that
// what plan shows is what apply does.
import { createHash } from 'node:crypto';
import type { AuditEntry } from '../model/audit.js';
import { kFlagAuditActions } from '../flags/audit-actions.js';
import { sameCohorts } from '../flags/patch-rules.js';
import { bucketingChangeProblem, bucketingOf } from '../flags/bucketing.js';
import { sameJson } from '../flags/variant-rules.js';
import { sameName } from '../model/input-checks.js';
import { kProjectAuditActions } from '../projects/audit-actions.js';
import { kFragmentAuditActions } from '../fragments/audit-actions.js';
import type { StoreReader } from '../store/interfaces.js';
import { fileFlag } from './flag-file.js';
import { formatPath } from '../targeting/problems.js';
import type { FieldChange, PlannedChange } from './schemas.js';
import { defaultModelState, type ModelExperiment, type ModelFlag, type ModelState, type ProjectModel } from './project-model.js';
import { comparableExperiment, sameExperiment } from './experiments.js';
import { kExperimentAuditActions } from '../experiments/audit-actions.js';

export interface PlanOptions {
  /** Delete the project's flags that the file does not name. */
  prune: boolean;
}

export type PlanOutcome = { ok: true; changes: PlannedChange[]; notInFile: string[] } | { ok: false; problems: string[] };

/**
 * The changes that make `current` what `desired` says, environments first, then audiences, then shared
 * fragments (which flags may name), then flags, each by name; a fragment the file drops (with prune) is
 * deleted last, once no flag of the file names it.
 */
export function planChanges(current: ProjectModel, desired: ProjectModel, options: PlanOptions): PlanOutcome {
  const problems = projectProblems(current, desired);
  if (problems.length > 0) return { ok: false, problems };
  inheritCohorts(current, desired);
  const changes: PlannedChange[] = [];
  for (const env of desired.environments) {
    if (!current.environments.includes(env)) changes.push({ op: 'create', kind: 'environment', name: env, fields: [], consoleOnly: true });
  }
  for (const [name, rules] of Object.entries(desired.audiences ?? {})) {
    // By own key: an audience may be named "toString" (names are data, not an object's properties).
    const stored = current.audiences !== null && Object.hasOwn(current.audiences, name) ? current.audiences[name] : undefined;
    if (stored === undefined)
      changes.push({ op: 'create', kind: 'audience', name, fields: [{ path: 'rules', before: null, after: rules }], consoleOnly: true });
    else if (!sameJson(stored, rules))
      changes.push({ op: 'update', kind: 'audience', name, fields: [{ path: 'rules', before: stored, after: rules }], consoleOnly: true });
  }
  for (const [name, rule] of Object.entries(desired.fragments ?? {})) {
    const stored = current.fragments !== null && Object.hasOwn(current.fragments, name) ? current.fragments[name] : undefined;
    if (stored === undefined)
      changes.push({ op: 'create', kind: 'fragment', name, fields: [{ path: 'rule', before: null, after: rule }], consoleOnly: false });
    else if (!sameJson(stored, rule))
      changes.push({ op: 'update', kind: 'fragment', name, fields: [{ path: 'rule', before: stored, after: rule }], consoleOnly: false });
  }
  for (const [name, flag] of Object.entries(desired.flags)) {
    const stored = Object.hasOwn(current.flags, name) ? current.flags[name] : undefined;
    if (stored === undefined) {
      const fields = leafChanges(null, fileFlag(flag));
      changes.push({ op: 'create', kind: 'flag', name, fields, consoleOnly: flag.kind === 'groupflag' && (flag.cohorts?.length ?? 0) > 0 });
      continue;
    }
    const fields = leafChanges(fileFlag(comparable(stored, flag)), fileFlag(flag));
    if (fields.length > 0)
      changes.push({ op: 'update', kind: 'flag', name, fields, consoleOnly: fields.some((f) => isConsoleOnlyField(f, flag)) });
  }
  const notInFile = Object.keys(current.flags).filter((name) => !Object.hasOwn(desired.flags, name));
  if (options.prune) for (const name of notInFile) changes.push({ op: 'delete', kind: 'flag', name, fields: [], consoleOnly: true });
  if (options.prune && desired.fragments !== null) {
    for (const name of Object.keys(current.fragments ?? {}))
      if (!Object.hasOwn(desired.fragments, name)) changes.push({ op: 'delete', kind: 'fragment', name, fields: [], consoleOnly: false });
  }
  const experiments = experimentChanges(current.experiments ?? [], desired.experiments, options);
  changes.push(...experiments.changes);
  return { ok: true, changes, notInFile: options.prune ? [] : [...notInFile, ...experiments.notInFile] };
}

/**
 * The experiments' changes, where the file declares experiments (none where it does not): each made or
 * changed, field by field, whether it runs among them; those the file does not declare deleted with
 * prune, else named as kept. The Management API may make each (consoleOnly false).
 */
function experimentChanges(
  current: readonly ModelExperiment[],
  desired: readonly ModelExperiment[] | undefined,
  options: PlanOptions,
): { changes: PlannedChange[]; notInFile: string[] } {
  if (desired === undefined) return { changes: [], notInFile: [] };
  const changes: PlannedChange[] = [];
  const named = (e: ModelExperiment) => ({ name: e.key, ...(e.environment === null ? {} : { environment: e.environment }) });
  for (const e of desired) {
    const stored = current.find((c) => sameExperiment(c, e));
    const fields = leafChanges(stored === undefined ? null : comparableExperiment(stored), comparableExperiment(e));
    if (stored === undefined || fields.length > 0)
      changes.push({ op: stored === undefined ? 'create' : 'update', kind: 'experiment', ...named(e), fields, consoleOnly: false });
  }
  const missing = current.filter((c) => !desired.some((e) => sameExperiment(c, e)));
  if (options.prune)
    for (const e of missing) changes.push({ op: 'delete', kind: 'experiment', ...named(e), fields: [], consoleOnly: false });
  const notInFile = options.prune ? [] : missing.map((e) => `experiment ${e.key}${e.environment === null ? '' : ` in ${e.environment}`}`);
  return { changes, notInFile };
}

/** Why the file cannot be applied to this project at all. */
function projectProblems(current: ProjectModel, desired: ProjectModel): string[] {
  const problems: string[] = [];
  if (current.kind !== desired.kind) {
    const what = (k: string) => (k === 'multi' ? 'a multi-environment project' : 'a single-environment project');
    return [`the file describes ${what(desired.kind)} ("kind": "${desired.kind}"), and this is ${what(current.kind)}`];
  }
  const missing = current.environments.filter((env) => !desired.environments.includes(env));
  if (missing.length > 0)
    problems.push(
      `environments: the project has ${missing.map((e) => `"${e}"`).join(', ')}, which the file does not list; environments are never removed, so add ${missing.length > 1 ? 'them' : 'it'} to the file`,
    );
  const stored = Object.keys(current.audiences ?? {});
  for (const name of Object.keys(desired.audiences ?? {})) {
    // Audience names are unique without case: the file's "beta" cannot be created beside the project's
    // "Beta", and a file does not rename one (it names audiences, it has no ids).
    const other = stored.find((n) => n !== name && sameName(n, name));
    if (other !== undefined)
      problems.push(
        `${formatPath(['audiences', name])}: the project has the audience "${other}" (names are compared without case); write its name as the project does`,
      );
  }
  const audiences = new Set([...stored, ...Object.keys(desired.audiences ?? {})]);
  for (const [name, flag] of Object.entries(desired.flags)) {
    const existing = Object.hasOwn(current.flags, name) ? current.flags[name] : undefined;
    const changed = existing === undefined ? null : bucketingProblem(existing, flag);
    if (changed !== null) problems.push(`${formatPath(['flags', name, 'bucketing'])}: ${changed}`);
    for (const [where, state] of statesOf(name, flag)) {
      if (state.audience !== null && !audiences.has(state.audience))
        problems.push(`${where}.audience: there is no audience "${state.audience}" in the project or the file`);
    }
  }
  return problems;
}

/** Why the file's flag cannot have the stored flag's name: its bucketing differs (one never changes). */
function bucketingProblem(stored: ModelFlag, desired: ModelFlag): string | null {
  const wanted = bucketingOf(desired);
  const problem = bucketingChangeProblem(bucketingOf(stored), wanted);
  if (problem === null || desired.bucketing !== undefined) return problem;
  return `${problem} (a flag the file writes without "bucketing" is a modulo flag: write "bucketing": "${bucketingOf(stored)}" to keep this one)`;
}

/**
 * A group flag's environment whose file gives no cohorts (or `[]`) inherits the flag-wide list, as
 * `cohorts: []` in a PATCH does (spec: "an empty list always means inherit"): the file's list where it
 * has one, else the stored one. Sets those environments' effective lists in `desired`.
 */
function inheritCohorts(current: ProjectModel, desired: ProjectModel): void {
  for (const [name, flag] of Object.entries(desired.flags)) {
    if (flag.kind !== 'groupflag') continue;
    const stored = Object.hasOwn(current.flags, name) ? current.flags[name] : undefined;
    const wide = flag.cohorts ?? (stored?.kind === 'groupflag' ? stored.cohorts : null) ?? [];
    for (const state of Object.values(flag.environments)) if (state.cohorts.length === 0) state.cohorts = [...wide];
  }
}

/** Each state of a flag with the path that names it in the file (`flags.name`, `flags.name.environments.prod`). */
function statesOf(name: string, flag: ModelFlag): [string, ModelState][] {
  if (flag.kind === 'flag') return [[formatPath(['flags', name]), flag.state]];
  return Object.entries(flag.environments).map(([env, state]) => [formatPath(['flags', name, 'environments', env]), state]);
}

/**
 * The stored flag as the file sees it: without the parts the file leaves unmanaged, and with the
 * environments the file adds at the state a new environment starts in (disabled, 0%, inheriting).
 */
function comparable(stored: ModelFlag, desired: ModelFlag): ModelFlag {
  if (stored.kind !== 'groupflag' || desired.kind !== 'groupflag') return stored;
  const environments = { ...stored.environments };
  for (const env of Object.keys(desired.environments)) {
    if (!Object.hasOwn(environments, env)) environments[env] = { ...defaultModelState(), cohorts: [...(stored.cohorts ?? [])] };
  }
  return { ...stored, cohorts: desired.cohorts === null ? null : stored.cohorts, environments };
}

/**
 * Description, tags and a group flag's flag-wide list: console-only edits (spec). A single flag's
 * `cohorts` is its state's, which PATCH sets.
 */
export function isConsoleOnlyField(change: FieldChange, flag: ModelFlag): boolean {
  return change.path === 'description' || change.path === 'tags' || (change.path === 'cohorts' && flag.kind === 'groupflag');
}

/** The leaves that differ, in the file's key order; objects nest only under `environments`. */
function leafChanges(before: Record<string, unknown> | null, after: Record<string, unknown>, prefix = ''): FieldChange[] {
  const out: FieldChange[] = [];
  const keys = [...Object.keys(after), ...Object.keys(before ?? {}).filter((k) => !Object.hasOwn(after, k))];
  for (const key of keys) {
    const a = before === null || !Object.hasOwn(before, key) ? null : before[key];
    const b = Object.hasOwn(after, key) ? after[key] : null;
    const path = `${prefix}${key}`;
    if (key === 'environments' && prefix === '' && isRecord(b)) {
      for (const [env, state] of Object.entries(b)) {
        const was = isRecord(a) && Object.hasOwn(a, env) ? a[env] : null;
        out.push(...leafChanges(isRecord(was) ? was : null, state as Record<string, unknown>, `environments.${env}.`));
      }
      continue;
    }
    if (before !== null && sameLeaf(key, a, b)) continue;
    out.push({ path, before: a, after: b });
  }
  return out;
}

function sameLeaf(key: string, a: unknown, b: unknown): boolean {
  if (key === 'cohorts' && Array.isArray(a) && Array.isArray(b)) return sameCohorts(a as string[], b as string[]);
  return sameJson(a, b);
}

/**
 * A plan's digest: SHA-256 of its project and changes, object keys sorted (a value's key order is not
 * part of the change). Apply recomputes it from the changes it would make, so a saved plan is applied
 * only if those are exactly the changes its reader saw (docs/flags-as-code.md, "A saved plan").
 */
export function planDigest(projectId: string, changes: readonly PlannedChange[]): string {
  return createHash('sha256')
    .update(JSON.stringify(sortedKeys({ projectId, changes })))
    .digest('hex');
}

/** A JSON value with every object's keys in order; values are bounded in depth by the file's checks. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (!isRecord(value)) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortedKeys(value[key])]),
  );
}

/**
 * Whether an audited action changes what a flag file describes: every action the flags capability
 * declares, the projects capability's (environments, audiences), the shared fragments' and the
 * experiments'. Read at the
 * call, not when the module loads, so the order the capabilities' modules load in does not matter.
 */
function changesFlagFile(action: string): boolean {
  return [kFlagAuditActions, kProjectAuditActions, kFragmentAuditActions, kExperimentAuditActions].some((actions) =>
    (actions as readonly string[]).includes(action),
  );
}

const kRevisionPage = 100;

/**
 * A project's revision in flags as code (a plan's `revision`, apply's `ifRevision` and `--if-revision`):
 * the sequence number of one project's audit entry. Not the store's revision (StoreRevision,
 * src/store/interfaces.ts: Flagwire-Revision), which moves with every commit of every project.
 */
export type ProjectRevision = number;

/**
 * The project's revision as flag files see it: the sequence number of its newest audit entry that
 * changed a flag, an environment, an audience, a shared fragment or an experiment (0: none yet). Every such change is audited, in the
 * transaction that makes it, so the number moves with each of them and with nothing else (a token
 * created does not make a planned file stale). The same on every node: audit entries are records.
 */
export function projectRevision(r: StoreReader, projectId: string): ProjectRevision {
  let before: number | null = null;
  for (;;) {
    const page: AuditEntry[] = r.listAudit(projectId, { limit: kRevisionPage, before });
    const hit = page.find((entry) => changesFlagFile(entry.action));
    if (hit !== undefined) return hit.seq;
    if (page.length < kRevisionPage) return 0;
    before = page[page.length - 1]!.seq;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
