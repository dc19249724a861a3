// The rules of a flag's typed variants (issue 25) on create and patch, as pure functions: how the keys
// `variants`, `defaultVariant` and `targeting` of a body combine with what is stored, and whether the
// result may be stored. Whether it is a valid flagd definition is asked of src/targeting/parse.ts (the
// one home of that rule); what the store needs beyond it (a bounded depth, keys and numbers that survive
// msgpack) is checked here first.
import { kExposureMarkerField, type TypedVariants } from '../model/flags.js';
import type { TypedFields } from '../model/schemas.js';
import { evaluatorProblems, flagVariantProblems, type FlagProblem } from '../targeting/parse.js';
import { type DefinitionProblem, formatPath, type PathStep } from '../targeting/problems.js';
import { type FragmentRules, kNoFragments } from './records/fragment-records.js';
import { resolveRule } from './records/fragment-resolve.js';

/**
 * Nesting levels of arrays and objects allowed in a variant value or a rule. The rule compiler, the
 * store's msgpack encoder and the comparison of a patch recurse: a 1 MiB body can nest hundreds of
 * thousands of levels, which would exhaust the writer thread's stack. flagd rules seldom go past ten.
 */
export const kMaxVariantDepth = 64;

export type TypedMerge = { ok: true; typed: TypedVariants | undefined } | { ok: false; problems: FlagProblem[] };

function hasKeys(value: Record<string, unknown> | undefined): boolean {
  return value !== undefined && Object.keys(value).length > 0;
}

/**
 * The typed variants after `input` is applied to `current` (undefined: a boolean flag, or a create).
 * A present key replaces the stored value, an absent one keeps it (the spec's merge-patch rule 1).
 * `variants: {}` makes the state a boolean flag again (as `cohorts: []` clears a list), so it cannot be
 * sent with a default variant or a rule; neither can be set on a state that has no variants. The result
 * is not yet checked as a flagd definition: see typedProblems.
 */
export function mergeTyped(current: TypedVariants | undefined, input: TypedFields): TypedMerge {
  const { variants, defaultVariant, targeting, metadata } = input;
  if (variants === undefined && defaultVariant === undefined && targeting === undefined && metadata === undefined)
    return { ok: true, typed: current };
  const clears = variants !== undefined && !hasKeys(variants);
  const base = clears ? undefined : (variants ?? current?.variants);
  if (base === undefined) {
    const problems: FlagProblem[] = [];
    const why = clears ? '"variants" is {}, which makes this a boolean flag' : 'this flag has no variants';
    if (defaultVariant !== undefined && defaultVariant !== null)
      problems.push({ path: 'defaultVariant', message: `${why}: send "variants" with it, or drop it` });
    if (hasKeys(targeting)) problems.push({ path: 'targeting', message: `${why}: send "variants" with it, or drop it` });
    if (hasKeys(metadata)) problems.push({ path: 'metadata', message: `${why}: send "variants" with it, or drop it` });
    return problems.length > 0 ? { ok: false, problems } : { ok: true, typed: undefined };
  }
  const typed: TypedVariants = {
    variants: base,
    defaultVariant: defaultVariant !== undefined ? defaultVariant : (current?.defaultVariant ?? null),
    targeting: targeting ?? current?.targeting ?? {},
  };
  // Like a list: {} removes it, and a state without metadata has no such key.
  const kept = metadata ?? current?.metadata;
  if (kept !== undefined && hasKeys(kept)) typed.metadata = kept;
  return { ok: true, typed };
}

/**
 * The typed variants a create or patch leaves on a state whose stored ones are `current` (undefined for
 * a create, or a boolean state): `current` itself when nothing changes. The input was checked first
 * (mergeTyped, typedProblems), so a problem here is a bug.
 */
export function appliedTyped(current: TypedVariants | undefined, input: TypedFields): TypedVariants | undefined {
  const merged = mergeTyped(current, input);
  if (!merged.ok) throw new Error('typed variants are checked before they are applied');
  return sameTyped(current, merged.typed) ? current : merged.typed;
}

/**
 * Why `typed` may not be stored, each problem with its path from the flag (or environment); empty when
 * it may. The store's limits first (a rule nested too deep must not reach the recursive compiler), then
 * the flagd definition's rules (parse.ts): mixed types, a default that is not a variant, a rule that
 * would not load. The rule is checked with its `$ref`s replaced by the project's `fragments` (a name of
 * no fragment is a problem), as evaluation compiles it; what is stored keeps the references.
 */
export function typedProblems(typed: TypedVariants, fragments: FragmentRules = kNoFragments): FlagProblem[] {
  const problems = [
    ...storableProblems(typed.variants, ['variants']),
    ...storableProblems(typed.targeting, ['targeting']),
    ...storableProblems(typed.metadata ?? {}, ['metadata']),
    ...reservedMetadataProblems(typed.metadata ?? {}),
  ];
  if (problems.length > 0) return problems;
  const refProblems: DefinitionProblem[] = [];
  const targeting = resolveRule(typed.targeting, fragments, refProblems);
  if (refProblems.length > 0) return refProblems.map((p) => ({ path: p.path, message: p.message }));
  return flagVariantProblems({ ...typed, targeting });
}

/**
 * The flag metadata key that names a flag's exposure twins in Flagwire's flagd documents (src/flags/
 * flagd-flag.ts) is the export's alone: stored, a flag would carry it into every flagd document, and the
 * events hook would send any variant ending in it as an exposure (docs/decisions.md).
 */
function reservedMetadataProblems(metadata: Record<string, unknown>): FlagProblem[] {
  if (!Object.hasOwn(metadata, kExposureMarkerField)) return [];
  return [
    {
      path: formatPath(['metadata', kExposureMarkerField]),
      message: "is Flagwire's own: its flagd export names a flag's exposure variants with it, so a flag's metadata cannot hold it",
    },
  ];
}

/**
 * Why `rule` cannot be a shared fragment's (src/fragments): the store's limits, then flagd's check of a
 * `$evaluators` entry. Each problem's path is from the rule ('' for the rule itself).
 */
export function sharedRuleProblems(rule: unknown): FlagProblem[] {
  const problems = storableProblems(rule, []);
  return problems.length > 0 ? problems : evaluatorProblems(rule);
}

/** Listed at most per value: a 1 MiB body of bad numbers must not give a detail many times its size. */
const kMaxStorableProblems = 10;

/**
 * Values a JSON body can hold that the store would not keep as sent: nesting deeper than
 * kMaxVariantDepth, the key `__proto__` (msgpackr reads it back as `__proto_`, so a variant would change
 * its name), numbers JSON.parse made infinite (1e400). Walks without recursion.
 */
function storableProblems(root: unknown, at: PathStep[]): FlagProblem[] {
  const problems: FlagProblem[] = [];
  const stack: { value: unknown; path: PathStep[] }[] = [{ value: root, path: at }];
  while (stack.length > 0 && problems.length < kMaxStorableProblems) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'number' && !Number.isFinite(value)) {
      problems.push({ path: formatPath(path), message: 'is not a finite number' });
    } else if (value !== null && typeof value === 'object') {
      if (path.length - at.length >= kMaxVariantDepth) {
        problems.push({ path: formatPath(at), message: `nests deeper than ${kMaxVariantDepth} levels` });
        break;
      }
      if (Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: [...path, i] });
      } else {
        const record = value as Record<string, unknown>;
        const keys = Object.keys(record);
        if (Object.hasOwn(record, '__proto__'))
          problems.push({ path: formatPath(path), message: 'has the key "__proto__", which cannot be stored' });
        for (let i = keys.length - 1; i >= 0; i--) stack.push({ value: record[keys[i]!], path: [...path, keys[i]!] });
      }
    }
  }
  return problems;
}

/** Two typed parts alike: the same variants, default and rule (JSON objects compared without key order). */
export function sameTyped(a: TypedVariants | undefined, b: TypedVariants | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return (
    a.defaultVariant === b.defaultVariant &&
    sameJson(a.variants, b.variants) &&
    sameJson(a.targeting, b.targeting) &&
    sameJson(a.metadata ?? {}, b.metadata ?? {})
  );
}

/** Structural equality of JSON values; object keys in any order. Recurses at most kMaxVariantDepth levels (typedProblems). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((v, i) => sameJson(v, other[i]));
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  if (keys.length !== Object.keys(y).length) return false;
  return keys.every((k) => Object.hasOwn(y, k) && sameJson(x[k], y[k]));
}

/**
 * The audit's before and after of each typed-variant key that differs: `variants`, `defaultVariant`,
 * `targeting`, `metadata`, each null on the side that has none (a boolean flag; no metadata).
 */
export function typedChanges(
  before: TypedVariants | undefined,
  after: TypedVariants | undefined,
): Record<string, { before: unknown; after: unknown }> {
  const changes: Record<string, { before: unknown; after: unknown }> = {};
  if (!sameJson(before?.variants ?? null, after?.variants ?? null))
    changes.variants = { before: before?.variants ?? null, after: after?.variants ?? null };
  if ((before?.defaultVariant ?? null) !== (after?.defaultVariant ?? null))
    changes.defaultVariant = { before: before?.defaultVariant ?? null, after: after?.defaultVariant ?? null };
  if (!sameJson(before?.targeting ?? null, after?.targeting ?? null))
    changes.targeting = { before: before?.targeting ?? null, after: after?.targeting ?? null };
  if (!sameJson(before?.metadata ?? null, after?.metadata ?? null))
    changes.metadata = { before: before?.metadata ?? null, after: after?.metadata ?? null };
  return changes;
}
