// Shared fragments as writer commands: made, changed and deleted by a token, a person or the operator
// (one command each, given who asks as a Principal), audited, and heard by webhooks as flag changes.
// A fragment decides the answers of every flag whose rule names it, in every environment, so the rules
// that keep those flags loadable are checked here, in the transaction that writes: a change is checked
// with every flag that uses it, and a fragment in use is not deleted.
import { type Actor, actorInProject, type Principal } from '../actor/audit-actor.js';
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
  fragmentRules,
  kFragmentRecords,
  listFragments,
  projectFragments,
  type Fragment,
  type FragmentRules,
  type ProjectFragments,
} from '../flag-records/fragment-records.js';
import { FragmentCreate, type FragmentBody, type FragmentDeleted, FragmentUpdate, kFragmentNamePattern } from './schemas.js';
import { listFlags } from '../flag-records/flag-store.js';

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
  return { name: fragment.name, rule: fragment.rule, createdAt: fragment.createdAt, updatedAt: fragment.updatedAt };
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
  for (const flag of listFlags(r, projectId)) {
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
  const bytes = fragments.reduce((sum, f) => sum + Buffer.byteLength(JSON.stringify(f.rule)), 0);
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
 * Writes the project's fragments, by name. The record's version always moves (two changes in one
 * millisecond included): the project's configuration tag names it, and a provider's flag set is rebuilt
 * only when that tag moves.
 */
function store(w: StoreWriter, project: Project, fragments: Fragment[], now: number): void {
  const sorted = [...fragments].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const previous = projectFragments(w, project.id)?.updatedAt ?? 0;
  const record: ProjectFragments = { projectId: project.id, fragments: sorted, updatedAt: Math.max(now, previous + 1) };
  w.putKeyed(kFragmentRecords, record);
}

function audit(
  w: StoreWriter,
  actor: Actor,
  project: Project,
  action: FragmentAuditAction,
  name: string,
  before: unknown,
  after: unknown,
  now: number,
) {
  w.appendAudit({
    at: now,
    projectId: project.id,
    actor: actor.id,
    actorName: actor.name,
    action,
    flagId: null,
    env: null,
    changes: { [`fragments.${name}`]: { before, after } },
  });
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
 * The fragment `name` of `project` made, or its rule changed, by an actor already resolved (the
 * commands below, an import's, flags as code's): the rule checked, the project's bound, and, for a
 * change, every flag that uses it checked with the new rule (each flag's problem named). The same rule
 * writes nothing. `ruleProblems`: the rule's own (fragmentRuleProblems), found before the command was
 * sent, off the writer thread (rule-checker.ts); absent, they are found here.
 */
export function putFragmentAs(
  w: StoreWriter,
  project: Project,
  actor: Actor,
  name: string,
  rule: Record<string, unknown>,
  now: number,
  ruleProblems?: readonly string[],
): FragmentOutcome {
  const current = listFragments(w, project.id);
  const old = current.find((f) => f.name === name);
  if (old !== undefined && sameJson(old.rule, rule)) return 'unchanged';
  const nameProblem = fragmentNameProblem(name);
  const fragment: Fragment =
    old === undefined ? { name, rule, createdAt: now, updatedAt: now } : { ...old, rule, updatedAt: Math.max(now, old.updatedAt + 1) };
  const next = old === undefined ? [...current, fragment] : current.map((f) => (f === old ? fragment : f));
  const rules = fragmentRules({ projectId: project.id, fragments: next, updatedAt: now });
  // The project's count first (a new fragment has no use yet): it costs a walk of its flags' rules as
  // written, and past it nothing else is worth the writer's time, which every project's changes wait
  // for: the rule's own check costs about 0.4 s per MiB, and each flag's compiles the fragment into it.
  const refs = old === undefined || nameProblem !== null ? null : fragmentRefsProblem(w, project.id, rules);
  const problems =
    nameProblem !== null
      ? [nameProblem]
      : refs !== null
        ? [`used by ${fragmentUses(w, project.id, name).map(useText).join(', ')}: ${refs}`]
        : [...(ruleProblems ?? fragmentRuleProblems(rule))];
  if (problems.length === 0) problems.push(...boundProblems(next));
  if (problems.length === 0 && old !== undefined) problems.push(...usesProblems(w, project.id, name, rules));
  if (problems.length > 0) throw new FlagwireError('INVALID_REQUEST', problems.join('; '));
  store(w, project, next, now);
  audit(w, actor, project, old === undefined ? 'fragment.create' : 'fragment.update', name, old?.rule ?? null, rule, now);
  return old === undefined ? 'created' : 'updated';
}

export interface FragmentCreateInput {
  principal: Principal;
  /** The project, for a person or the operator (a token makes fragments in its own project). */
  projectId: string;
  /** `{name, rule}` as received; the console and the command line send theirs as JSON (jsonBody). */
  received: ReceivedBody;
}

export function fragmentCreate(w: StoreWriter, input: FragmentCreateInput, now: number): FragmentBody {
  const { project, actor } = actingOn(w, input.principal, input.projectId, now);
  const body = checkedBody(input.received, kCreateValidator);
  if (listFragments(w, project.id).some((f) => f.name === body.name)) {
    const problems = [`a shared fragment named "${body.name}" already exists in this project`, ...fragmentRuleProblems(body.rule)];
    throw new FlagwireError('INVALID_REQUEST', problems.join('; '));
  }
  putFragmentAs(w, project, actor, body.name, body.rule, now);
  return fragmentView(requireFragment(w, project.id, body.name));
}

export interface FragmentUpdateInput {
  principal: Principal;
  projectId: string;
  name: string;
  /** `{rule}` as received. */
  received: ReceivedBody;
  /** The rule's own problems, found from the same bytes off the writer thread (rule-checker.ts); absent: found here. */
  ruleProblems?: string[];
}

/** A fragment's new rule (putFragmentAs's checks); another project's fragment, or none, is not found. */
export function fragmentUpdate(w: StoreWriter, input: FragmentUpdateInput, now: number): FragmentBody {
  const { project, actor } = actingOn(w, input.principal, input.projectId, now);
  requireFragment(w, project.id, input.name);
  const body = checkedBody(input.received, kUpdateValidator);
  putFragmentAs(w, project, actor, input.name, body.rule, now, input.ruleProblems);
  return fragmentView(requireFragment(w, project.id, input.name));
}

function requireFragment(r: Pick<StoreReader, 'getKeyed'>, projectId: string, name: string): Fragment {
  const fragment = listFragments(r, projectId).find((f) => f.name === name);
  if (fragment === undefined) throw fragmentNotFound();
  return fragment;
}

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
  const current = listFragments(w, project.id);
  const old = requireFragment(w, project.id, name);
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
    current.filter((f) => f.name !== old.name),
    now,
  );
  audit(w, actor, project, 'fragment.delete', old.name, old.rule, null, now);
  return { name: old.name, deleted: true };
}
