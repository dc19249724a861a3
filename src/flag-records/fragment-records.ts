// Shared fragments (issue 47): a project's named JsonLogic rules, flagd's `$evaluators`, which a flag's
// rule uses as `{"$ref": "NAME"}`. One record per project holds them all: evaluation reads a project's
// fragments in one read when it compiles a flag, a project with none has no record (nothing is read but
// a miss), and a fragment deleted is the record written without it, so the kind needs no deletion.
// Relayed: evaluation, OFREP, flag sets and snapshots read them.
import { keyedRecords } from '../store/record-kinds.js';
import type { StoreReader } from '../store/interfaces.js';

export interface Fragment {
  /** Its `$evaluators` key: what `{"$ref": NAME}` names (fragment-rules.ts kFragmentName). */
  name: string;
  /** A JsonLogic rule with flagd's operators; never itself a `$ref` user (fragment-rules.ts says why). */
  rule: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

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

/** The project's fragments as rules by name (kNoFragments when it has none). */
export function fragmentRules(record: ProjectFragments | undefined): FragmentRules {
  if (record === undefined || record.fragments.length === 0) return kNoFragments;
  return Object.fromEntries(record.fragments.map((f) => [f.name, f.rule]));
}

/** The project's fragments, by name. */
export function listFragments(r: Pick<StoreReader, 'getKeyed'>, projectId: string): Fragment[] {
  return projectFragments(r, projectId)?.fragments ?? [];
}
