// Shared fragments (issue 47): a project's named JsonLogic rules, flagd's `$evaluators`, which a flag's
// rule uses as `{"$ref": "NAME"}`. One record per project holds them all: evaluation reads a project's
// fragments in one read when it compiles a flag, a project with none has no record (nothing is read but
// a miss), and a fragment deleted is the record written without it, so the kind needs no deletion.
// Relayed: evaluation, OFREP, flag sets and snapshots read them.
import { keyedRecords } from '../../store/record-kinds.js';
import type { StoreReader } from '../../store/interfaces.js';

export interface Fragment {
  /** Its `$evaluators` key: what `{"$ref": NAME}` names (fragment-rules.ts kFragmentName). */
  name: string;
  /**
   * A JsonLogic rule with flagd's operators; never itself a `$ref` user (fragment-rules.ts says why). Kept
   * as its compact JSON text (a record written before holds the value): read it through fragmentRule or
   * fragmentRuleText, never here.
   */
  rule: FragmentRuleValue;
  createdAt: number;
  updatedAt: number;
}

/**
 * A fragment's rule as stored: its compact JSON text, or the value itself in a record written before the
 * text (docs/decisions.md: A shared fragment's rule kept as its JSON text). A rule is always an object, so
 * a string is never the rule itself.
 */
export type FragmentRuleValue = string | Record<string, unknown>;

export interface ProjectFragments {
  projectId: string;
  /** By name. */
  fragments: Fragment[];
  /** The latest change to any of them (a deletion included): what a project's configuration tag names. */
  updatedAt: number;
}

export const kFragmentRecords = keyedRecords<ProjectFragments>()({
  name: 'fragments',
  database: 'fragments',
  relayed: true,
  key: (record) => record.projectId,
});

/** A project's fragments as rules by name, as a rule's `$ref`s are resolved from them. */
export type FragmentRules = Readonly<Record<string, Record<string, unknown>>>;

export const kNoFragments: FragmentRules = Object.freeze({});

/** The project's fragments record; undefined when it never had one. */
export function projectFragments(r: Pick<StoreReader, 'getKeyed'>, projectId: string): ProjectFragments | undefined {
  return r.getKeyed(kFragmentRecords, projectId);
}

/** Each text's rule, parsed once: a record read is shared by its readers, which must not change it. */
const kParsedRules = new WeakMap<Fragment, Record<string, unknown>>();

/** The fragment's rule as a value (parsed once per fragment read; the same value each time). */
export function fragmentRule(fragment: Fragment): Record<string, unknown> {
  if (typeof fragment.rule !== 'string') return fragment.rule;
  let rule = kParsedRules.get(fragment);
  if (rule === undefined) {
    rule = JSON.parse(fragment.rule) as Record<string, unknown>;
    kParsedRules.set(fragment, rule);
  }
  return rule;
}

/** The fragment's rule as compact JSON text: what JSON.stringify writes of fragmentRule's value. */
export function fragmentRuleText(fragment: Fragment): string {
  return typeof fragment.rule === 'string' ? fragment.rule : JSON.stringify(fragment.rule);
}

/** The project's fragments as rules by name (kNoFragments when it has none). */
export function fragmentRules(record: ProjectFragments | undefined): FragmentRules {
  if (record === undefined || record.fragments.length === 0) return kNoFragments;
  return Object.fromEntries(record.fragments.map((f) => [f.name, fragmentRule(f)]));
}

/** The project's fragments, by name. */
export function listFragments(r: Pick<StoreReader, 'getKeyed'>, projectId: string): Fragment[] {
  return projectFragments(r, projectId)?.fragments ?? [];
}
