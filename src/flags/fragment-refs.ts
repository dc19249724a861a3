// What a project's `$ref`s add to its flags' rules resolved, in all, held to the limit a flagd document's
// references are held to (kMaxAddedRuleBytes; docs/operations.md: Rules: resolved size). A project is the
// document its export writes, and every reader of its rules resolved (the flag checks, a flag set, a
// snapshot, an export) holds up to that much more than its flags wrote. Without it, one write token's
// 0.96 MB fragment named by 20 flags made 19 MB of rules out of 1 MB written, and each further flag
// that named it another MB, without bound (issue 55).
//
// Counted, not resolved: a fragment uses no `$ref` of its own, so its size resolved is its compact JSON,
// and a reference adds that less what it weighs written (refAddedBytes). So the count costs one walk of
// each flag's rule as written, and only in a project that has fragments.
import type { Flag, TypedVariants } from '../model/flags.js';
import type { StoreReader } from '../store/interfaces.js';
import { kProblems } from '../targeting/problems.js';
import { kMaxAddedRuleBytes, refAddedBytes, ruleRefCounts } from '../targeting/refs.js';
import { type FragmentRules, kNoFragments } from './records/fragment-records.js';
import { listFlags } from './records/flag-store.js';

/** Each fragment's size resolved (its compact JSON in UTF-8), by name. */
function fragmentSizes(fragments: FragmentRules): Map<string, number> {
  return new Map(Object.entries(fragments).map(([name, rule]) => [name, Buffer.byteLength(JSON.stringify(rule))]));
}

/** A flag's stored states with typed variants, with where each sits: null for a single flag's one state. */
function typedStates(flag: Flag): [string | null, TypedVariants][] {
  if (flag.kind === 'flag') return flag.state.typed === undefined ? [] : [[null, flag.state.typed]];
  return Object.entries(flag.environments).flatMap(([env, state]) => (state.typed === undefined ? [] : [[env, state.typed] as const]));
}

/** What `typed`'s references add to its rule resolved (a name of no fragment is another check's problem: 0 here). */
function addedBy(typed: TypedVariants, sizes: ReadonlyMap<string, number>): number {
  let added = 0;
  for (const [name, count] of ruleRefCounts(typed.targeting)) {
    const size = sizes.get(name);
    if (size !== undefined) added += count * refAddedBytes(name, size);
  }
  return added;
}

/** The project's references counted: in all, and those of the flag written. */
interface RefsCount {
  total: number;
  /** What the written flag's stored version added (0 for a new flag). */
  before: number;
  /** What the written flag's states add, by state (the first that adds anything first). */
  written: [string | null, number][];
}

/**
 * What the project's references add to its flags' rules with `fragments` as its fragments and `written`
 * (a flag as a create or patch would leave it) in place of its stored version.
 */
function countRefs(r: Pick<StoreReader, 'listKeyedBy'>, projectId: string, fragments: FragmentRules, written: Flag | null): RefsCount {
  const sizes = fragmentSizes(fragments);
  const count: RefsCount = { total: 0, before: 0, written: [] };
  for (const flag of listFlags(r, projectId)) {
    let added = 0;
    for (const [, typed] of typedStates(flag)) added += addedBy(typed, sizes);
    if (flag.id === written?.id) count.before = added;
    else count.total += added;
  }
  if (written !== null)
    for (const [env, typed] of typedStates(written)) {
      const added = addedBy(typed, sizes);
      count.total += added;
      if (added > 0) count.written.push([env, added]);
    }
  return count;
}

/**
 * Why `flag`, as a create or patch would write it, may not be: its project's references would add more
 * than the limit to its flags' rules, and more than its stored version's did (a write that adds nothing
 * passes, whatever the project held before the limit); null when they would not. The problem names the
 * first state whose rule adds anything (its environment: null for a single flag), for the caller to word
 * as its other rule problems.
 */
export function flagRefsProblem(
  r: Pick<StoreReader, 'listKeyedBy'>,
  flag: Flag,
  fragments: FragmentRules,
): { env: string | null; message: string } | null {
  if (fragments === kNoFragments) return null;
  const count = countRefs(r, flag.projectId, fragments, flag);
  const added = count.written.reduce((sum, [, bytes]) => sum + bytes, 0);
  if (count.total <= kMaxAddedRuleBytes || added <= count.before) return null;
  const [env, first] = count.written[0]!;
  return { env, message: kProblems.projectRefsAddTooMuch(first, count.total, kMaxAddedRuleBytes) };
}

/**
 * Why the project's fragments may not become `fragments` (one of them changed): its flags' references
 * would then add more than the limit to their rules; null when they would not.
 */
export function fragmentRefsProblem(r: Pick<StoreReader, 'listKeyedBy'>, projectId: string, fragments: FragmentRules): string | null {
  const { total } = countRefs(r, projectId, fragments, null);
  return total <= kMaxAddedRuleBytes ? null : kProblems.projectRefsAddTooMuch(null, total, kMaxAddedRuleBytes);
}
