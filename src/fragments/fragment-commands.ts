// Shared fragments as writer commands: made, changed and deleted by a token, a person or the operator
// (one command each, given who asks as a Principal), audited, and heard by webhooks as flag changes.
// A fragment decides the answers of every flag whose rule names it, in every environment, so the rules
// that keep those flags loadable are checked with every flag that uses it, and a fragment in use is not
// deleted. Those checks read the store and grow with the rule's size: for the Management API's and the
// console's changes they are made before the writer's transaction, on the side thread
// (fragment-prepare.ts), and the writer only verifies that the project did not change since.
import { type Actor, actorInProject, type Principal, writeAudit } from '../actor/audit-actor.js';
import { FlagwireError } from '../errors.js';
import type { Flag, TypedVariants } from '../model/flags.js';
import { sameJson, sharedRuleProblems, typedProblems } from '../flags/variant-rules.js';
import { requireEveryEnvironment } from '../model/environments.js';
import type { Project } from '../model/projects.js';
import { checkedBody, type ReceivedBody } from '../model/request-body.js';
import { compileValidator } from '../model/validation.js';
import type { StoreReader, StoreWriter } from '../store/interfaces.js';
import { kMaxRuleBytes, ruleRefs } from '../targeting/refs.js';
import type { FragmentAuditAction } from './audit-actions.js';
import { fragmentRefsProblem } from '../flags/fragment-refs.js';
import {
  fragmentRule,
  fragmentRuleText,
  fragmentRules,
  kFragmentRecords,
  projectFragments,
  type Fragment,
  type FragmentRules,
  type ProjectFragments,
} from '../flags/records/fragment-records.js';
import type { PreparedFragmentPut } from './fragment-prepare.js';
import { FragmentCreate, type FragmentBody, type FragmentDeleted, FragmentUpdate, kFragmentNamePattern } from './schemas.js';
import { listAllFlags } from '../flags/records/flag-store.js';

const kCreateValidator = compileValidator(FragmentCreate, { quoteKeys: false });
const kUpdateValidator = compileValidator(FragmentUpdate, { quoteKeys: true });

/** Fragments a project may have. */
export const kMaxFragments = 100;
/**
 * The most a project's fragments may weigh, as the compact JSON of their rules: as much as one rule may
 * weigh resolved. Evaluation reads them all in one record, once per store revision, when it compiles a
 * flag of the project.
 */
export const kMaxFragmentBytes = kMaxRuleBytes;
/** What the environment limit's refusal calls a fragment: it decides flags in every environment. */
const kFragmentWhat = 'A shared fragment';

export function fragmentNotFound(): FlagwireError {
  return new FlagwireError('NOT_FOUND', 'No shared fragment with this name exists in this project.');
}

/** A fragment as every surface shows it. */
export function fragmentView(fragment: Fragment): FragmentBody {
  return { name: fragment.name, rule: fragmentRule(fragment), createdAt: fragment.createdAt, updatedAt: fragment.updatedAt };
}

/**
 * fragmentView's JSON, as JSON.stringify writes it, with the rule's stored text put in as it is: a
 * change's answer, which would otherwise parse a rule of up to a megabyte only to write it out again.
 */
export function fragmentJson(fragment: Fragment): string {
  const { name, createdAt, updatedAt } = fragment;
  return `{"name":${JSON.stringify(name)},"rule":${fragmentRuleText(fragment)},"createdAt":${JSON.stringify(createdAt)},"updatedAt":${JSON.stringify(updatedAt)}}`;
}

/** One state of a flag whose rule names a fragment: the flag, and its environment (null: a single flag). */
export interface FragmentUse {
  flag: Flag;
  env: string | null;
  typed: TypedVariants;
}

/** Every flag state of the project whose rule refers to `name`, in the flags' order. */
export function fragmentUses(r: StoreReader, projectId: string, name: string): FragmentUse[] {
  const uses: FragmentUse[] = [];
  // Archived flags too: a restored flag's rule must still find its fragments.
  for (const flag of listAllFlags(r, projectId)) {
    const states: [string | null, TypedVariants | undefined][] =
      flag.kind === 'flag' ? [[null, flag.state.typed]] : Object.entries(flag.environments).map(([env, s]) => [env, s.typed]);
    for (const [env, typed] of states) if (typed !== undefined && ruleRefs(typed.targeting).has(name)) uses.push({ flag, env, typed });
  }
  return uses;
}

/** A flag state as a problem names it: `flag "checkout"`, `flag "checkout" in production`. */
function useText(use: FragmentUse): string {
  return `flag ${JSON.stringify(use.flag.name)}${use.env === null ? '' : ` in ${use.env}`}`;
}

/**
 * Who changes a project's fragments, resolved once here: a token acts in its own project (another
 * project's fragment is then not found); a person or the operator in the project named, the person
 * needing a flag editor's role. A token must cover every environment: a fragment decides them all.
 */
function actingOn(w: StoreWriter, principal: Principal, projectId: string, now: number): { project: Project; actor: Actor } {
  const acting = actorInProject(w, principal, () => projectId, 'editFlags', now);
  requireEveryEnvironment(acting.actor.environments, kFragmentWhat);
  return acting;
}

/**
 * Why `rule` cannot be a fragment's: flagd's check of a `$evaluators` entry, and no `$ref` of its own
 * (docs/decisions.md: Shared fragments). Each problem as `rule.PATH: message`.
 */
export function fragmentRuleProblems(rule: Record<string, unknown>): string[] {
  const where = (path: string) => (path === '' ? 'rule' : `rule.${path}`);
  if (Object.keys(rule).length === 0) return ['rule must be a JsonLogic rule (one operator), not {}'];
  if (ruleRefs(rule).size > 0) return ['rule uses $ref: a shared fragment may not refer to another (write its rule out)'];
  return sharedRuleProblems(rule).map((p) => `${where(p.path)}: ${p.message}`);
}

/** The bound of a project's fragments, with `fragments` as they would be stored. */
function boundProblems(fragments: readonly Fragment[]): string[] {
  if (fragments.length > kMaxFragments) return [`a project has at most ${kMaxFragments} shared fragments: delete one first`];
  const bytes = fragments.reduce((sum, f) => sum + Buffer.byteLength(fragmentRuleText(f)), 0);
  if (bytes > kMaxFragmentBytes)
    return [
      `a project's shared fragments may weigh at most ${kMaxFragmentBytes / 1024} KiB as JSON; these would weigh ${Math.ceil(bytes / 1024)} KiB`,
    ];
  return [];
}

/** Every flag state that uses `name`, checked with `fragments` as they would be: each problem names its flag. */
function usesProblems(w: StoreReader, projectId: string, name: string, fragments: FragmentRules): string[] {
  const problems: string[] = [];
  for (const use of fragmentUses(w, projectId, name))
    for (const p of typedProblems(use.typed, fragments))
      problems.push(`${useText(use)}: ${p.path === '' ? '' : `${p.path}: `}${p.message}`);
  return problems;
}

/**
 * Writes the project's fragments, by name, over the record `previous` (its version; 0: none). The
 * record's version always moves (two changes in one millisecond included): the project's configuration
 * tag names it, and a provider's flag set is rebuilt only when that tag moves.
 */
function store(w: StoreWriter, project: Project, fragments: Fragment[], previous: number, now: number): void {
  const sorted = [...fragments].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const record: ProjectFragments = { projectId: project.id, fragments: sorted, updatedAt: Math.max(now, previous + 1) };
  w.putKeyed(kFragmentRecords, record);
}

/** `before` and `after`: the rule as compact JSON text (null: none), as the audit keeps it (model/audit.ts). */
function audit(
  w: StoreWriter,
  actor: Actor,
  project: Project,
  action: FragmentAuditAction,
  name: string,
  before: string | null,
  after: string | null,
  now: number,
) {
  writeAudit(w, actor, { projectId: project.id, action, changes: { [`fragments.${name}`]: { before, after } } }, now);
}

/** What writing one fragment by name did. */
export type FragmentOutcome = 'created' | 'updated' | 'unchanged';

const kNameCheck = new RegExp(kFragmentNamePattern);

/** Why `name` cannot name a fragment; null when it can. */
export function fragmentNameProblem(name: string): string | null {
  return kNameCheck.test(name)
    ? null
    : `"${name}" cannot name a shared fragment: a letter, then letters, digits, _ or -, 64 characters at most`;
}

/**
 * What making the fragment `name`, or changing its rule, to `rule` would do to the project's fragments
 * `current` as `r` holds them: nothing (the same rule), a refusal (each problem), or a change. Checked:
 * the rule, the project's bound, and, for a change, every flag that uses it with the new rule (each
 * flag's problem named). It reads only: the side thread makes it before the writer's transaction
 * (fragment-prepare.ts), as the writer does for the callers that check in the transaction.
 */
export function checkFragmentPut(
  r: StoreReader,
  projectId: string,
  current: readonly Fragment[],
  name: string,
  rule: Record<string, unknown>,
): FragmentCheck {
  const old = current.find((f) => f.name === name);
  if (old !== undefined && sameJson(fragmentRule(old), rule)) return { kind: 'unchanged' };
  const nameProblem = fragmentNameProblem(name);
  const next = withRule(current, name, rule);
  const rules = fragmentRules({ projectId, fragments: next, updatedAt: 0 });
  // The project's count first (a new fragment has no use yet): it costs a walk of its flags' rules as
  // written, and past it nothing else is worth the time: the rule's own check grows with its size, and
  // each flag's compiles the fragment into it.
  const refs = old === undefined || nameProblem !== null ? null : fragmentRefsProblem(r, projectId, rules);
  const problems =
    nameProblem !== null
      ? [nameProblem]
      : refs !== null
        ? [`used by ${fragmentUses(r, projectId, name).map(useText).join(', ')}: ${refs}`]
        : fragmentRuleProblems(rule);
  if (problems.length === 0) problems.push(...boundProblems(next));
  if (problems.length === 0 && old !== undefined) problems.push(...usesProblems(r, projectId, name, rules));
  return problems.length > 0 ? { kind: 'refused', problems } : { kind: 'change' };
}

/** What checkFragmentPut found. */
export type FragmentCheck = { kind: 'unchanged' } | { kind: 'refused'; problems: string[] } | { kind: 'change' };

/** `current` with the fragment `name`'s rule as `rule` (added when absent): for the checks, which read rules alone. */
function withRule(current: readonly Fragment[], name: string, rule: Record<string, unknown>): Fragment[] {
  const old = current.find((f) => f.name === name);
  if (old === undefined) return [...current, { name, rule, createdAt: 0, updatedAt: 0 }];
  return current.map((f) => (f === old ? { ...f, rule } : f));
}

/**
 * The fragment `name` of `project` made, or its rule changed, by an actor already resolved (the
 * commands below, an import's, flags as code's): checked (checkFragmentPut) and written in the
 * transaction. The same rule writes nothing.
 */
export function putFragmentAs(
  w: StoreWriter,
  project: Project,
  actor: Actor,
  name: string,
  rule: Record<string, unknown>,
  now: number,
): FragmentOutcome {
  const record = projectFragments(w, project.id);
  const check = checkFragmentPut(w, project.id, record?.fragments ?? [], name, rule);
  return writeFragmentPut(w, project, actor, record, name, JSON.stringify(rule), check, now).outcome;
}

/**
 * Writes what `check` found for `rule` (compact JSON, as it is kept) over `record` (the project's
 * fragments as the writer holds them): nothing, the refusal, or the fragment made or changed, and
 * audited. The fragment as it is after. Nothing here walks the rule: the writer's time does not grow with it.
 */
export function writeFragmentPut(
  w: StoreWriter,
  project: Project,
  actor: Actor,
  record: ProjectFragments | undefined,
  name: string,
  rule: string,
  check: FragmentCheck,
  now: number,
): { outcome: FragmentOutcome; fragment: Fragment } {
  const current = record?.fragments ?? [];
  const old = current.find((f) => f.name === name);
  if (check.kind === 'refused') throw new FlagwireError('INVALID_REQUEST', check.problems.join('; '));
  if (check.kind === 'unchanged' && old !== undefined) return { outcome: 'unchanged', fragment: old };
  const fragment: Fragment =
    old === undefined ? { name, rule, createdAt: now, updatedAt: now } : { ...old, rule, updatedAt: Math.max(now, old.updatedAt + 1) };
  const next = old === undefined ? [...current, fragment] : current.map((f) => (f === old ? fragment : f));
  store(w, project, next, record?.updatedAt ?? 0, now);
  const before = old === undefined ? null : fragmentRuleText(old);
  audit(w, actor, project, old === undefined ? 'fragment.create' : 'fragment.update', name, before, rule, now);
  return { outcome: old === undefined ? 'created' : 'updated', fragment };
}

/** The body of a fragment's making or change: as received (checked here), or prepared before the transaction (fragment-prepare.ts). */
export type FragmentPutBody = { received: ReceivedBody; prepared?: undefined } | { prepared: PreparedFragmentPut; received?: undefined };

export type FragmentCreateInput = FragmentPutBody & {
  principal: Principal;
  /** The project, for a person or the operator (a token makes fragments in its own project). */
  projectId: string;
};

/** A fragment's `{name, rule}` body read and checked against the schema (a refusal throws). */
export function readCreateBody(received: ReceivedBody): { name: string; rule: Record<string, unknown> } {
  return checkedBody(received, kCreateValidator);
}

/** A fragment change's `{rule}` body read and checked against the schema (a refusal throws). */
export function readUpdateBody(received: ReceivedBody): Record<string, unknown> {
  return checkedBody(received, kUpdateValidator).rule;
}

/** Why a fragment cannot be made under a name already taken: that, and the rule's own problems. */
export function takenNameProblems(name: string, rule: Record<string, unknown>): string[] {
  return [`a shared fragment named "${name}" already exists in this project`, ...fragmentRuleProblems(rule)];
}

/** The fragment made, as stored: its routes answer fragmentJson, other callers fragmentView. */
export function fragmentCreate(w: StoreWriter, input: FragmentCreateInput, now: number): Fragment {
  const { project, actor } = actingOn(w, input.principal, input.projectId, now);
  const record = projectFragments(w, project.id);
  if (input.prepared !== undefined) {
    const { check, rule } = preparedPut(w, project.id, input.prepared);
    return writeFragmentPut(w, project, actor, record, input.prepared.name, rule, check, now).fragment;
  }
  const body = readCreateBody(input.received);
  if (record?.fragments.some((f) => f.name === body.name))
    throw new FlagwireError('INVALID_REQUEST', takenNameProblems(body.name, body.rule).join('; '));
  const check = checkFragmentPut(w, project.id, record?.fragments ?? [], body.name, body.rule);
  return writeFragmentPut(w, project, actor, record, body.name, JSON.stringify(body.rule), check, now).fragment;
}

export type FragmentUpdateInput = FragmentPutBody & {
  principal: Principal;
  projectId: string;
  name: string;
};

/**
 * A fragment's new rule (checkFragmentPut's checks); another project's fragment, or none, is not found.
 * The fragment as stored, as fragmentCreate's.
 */
export function fragmentUpdate(w: StoreWriter, input: FragmentUpdateInput, now: number): Fragment {
  const { project, actor } = actingOn(w, input.principal, input.projectId, now);
  const record = projectFragments(w, project.id);
  if (!record?.fragments.some((f) => f.name === input.name)) throw fragmentNotFound();
  const { check, rule } =
    input.prepared !== undefined ? preparedPut(w, project.id, input.prepared) : checkedPut(w, record, input.name, input.received);
  return writeFragmentPut(w, project, actor, record, input.name, rule, check, now).fragment;
}

/** A change's body read and checked here, in the transaction: the callers that prepare nothing (the command line). */
function checkedPut(w: StoreReader, record: ProjectFragments, name: string, received: ReceivedBody) {
  const rule = readUpdateBody(received);
  return { check: checkFragmentPut(w, record.projectId, record.fragments, name, rule), rule: JSON.stringify(rule) };
}

/**
 * What was prepared before the transaction, taken as found while the project is as it was read then:
 * its newest audit entry the same (every change to its flags, audiences and fragments is audited).
 * Otherwise nothing is applied and the change is refused as out of date; the routes prepare it again.
 */
function preparedPut(w: StoreReader, projectId: string, prepared: PreparedFragmentPut): { check: FragmentCheck; rule: string } {
  if (w.lastAuditSeq(projectId) !== prepared.at) throw new FlagwireError('REVISION_CONFLICT', kPreparedOutOfDate);
  // What JSON.stringify wrote from the rule checked: kept as it is (fragment-records.ts).
  return { check: prepared.check, rule: prepared.rule };
}

/** The refusal of a prepared change whose project changed before the writer took it. */
export const kPreparedOutOfDate =
  "The project's flags or shared fragments changed while this change was being checked, and nothing was applied: send it again.";

export interface FragmentDeleteInput {
  principal: Principal;
  projectId: string;
  name: string;
}

/** Deleted unless a flag's rule still names it: then refused, naming every flag (and environment) that does. */
export function fragmentDelete(w: StoreWriter, input: FragmentDeleteInput, now: number): FragmentDeleted {
  const { project, actor } = actingOn(w, input.principal, input.projectId, now);
  return deleteFragmentAs(w, project, actor, input.name, now);
}

/** The fragment `name` deleted by an actor already resolved, unless a flag's rule still names it (each such flag named). */
export function deleteFragmentAs(w: StoreWriter, project: Project, actor: Actor, name: string, now: number): FragmentDeleted {
  const record = projectFragments(w, project.id);
  const old = record?.fragments.find((f) => f.name === name);
  if (record === undefined || old === undefined) throw fragmentNotFound();
  const uses = fragmentUses(w, project.id, old.name);
  if (uses.length > 0) {
    throw new FlagwireError(
      'INVALID_REQUEST',
      `shared fragment "${old.name}" is used by ${uses.map(useText).join(', ')}: change their rules first (remove its {"$ref": "${old.name}"})`,
    );
  }
  store(
    w,
    project,
    record.fragments.filter((f) => f.name !== old.name),
    record.updatedAt,
    now,
  );
  audit(w, actor, project, 'fragment.delete', old.name, fragmentRuleText(old), null, now);
  return { name: old.name, deleted: true };
}
