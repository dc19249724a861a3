// One project environment's flags as a flagd flag-definition document (flagd.dev/schema/v0/flags.json),
// keyed by flag name, that a stock flagd provider answers as Flagwire's OFREP does (docs/design.md §2c).
// Each flag is said as src/flags/flagd-flag.ts says it (the one translation, which the export shares);
// this module makes the document: the flags it can say, its metadata, and the flags left out.
import type { Flag } from '../model/flags.js';
import { type FlagdFlag, flagInFlagd } from '../flags/flagd-flag.js';
import type { Audience } from '../model/projects.js';
import { type FragmentRules, kNoFragments } from '../flags/records/fragment-records.js';
import { ResolvedFragments } from '../flags/records/fragment-resolve.js';

export interface FlagSetInput {
  projectId: string;
  /** null: a single-environment project. */
  environment: string | null;
  /** The project's flags (src/model/flags.ts). */
  flags: readonly Flag[];
  /** The project's audiences (src/model/projects.ts). */
  audiences: readonly Audience[];
  /**
   * The project's shared fragments (src/fragments): each rule is written with its `$ref`s replaced
   * (docs/decisions.md: Shared fragments says why no `$evaluators`). Absent: none.
   */
  fragments?: FragmentRules;
  /** The organisation's plan allows audiences (EvalEngine.audiencesAllowed). */
  audiencesAllowed: boolean;
  /** The store revision it was read at (Flagwire-Revision). */
  revision: number;
}

export interface OmittedFlag {
  flagId: string;
  name: string;
  reason: string;
}

export interface FlagSet {
  /** A flagd flag-definition document, keyed by flag NAME. */
  json: string;
  /** Flags a stock flagd provider would answer differently. */
  omitted: OmittedFlag[];
}

/** The flagd document of one project environment, serialised once, and the flags left out of it. */
export function buildFlagSet(input: FlagSetInput): FlagSet {
  const flags: Record<string, FlagdFlag> = {};
  const omitted: OmittedFlag[] = [];
  // Each fragment resolved once for the whole set, the same object in every rule that names it.
  const ctx = { ...input, fragments: new ResolvedFragments(input.fragments ?? kNoFragments), refs: 'resolved' as const };
  for (const flag of input.flags) {
    const said = flagInFlagd(flag, ctx);
    if (said.flag === null) omitted.push({ flagId: flag.id, name: flag.name, reason: said.omitted });
    else flags[flag.name] = said.flag;
  }
  const flagSetId = input.environment === null ? input.projectId : `${input.projectId}/${input.environment}`;
  const metadata: Record<string, string | number> = {
    flagSetId,
    // The stock providers put their selector (a token rides in it: src/sync/selector.ts) in every answer's
    // flag metadata as `scope` unless the set names one: naming it keeps the token out of answers.
    scope: flagSetId,
    flagwireProject: input.projectId,
  };
  if (input.environment !== null) metadata.flagwireEnvironment = input.environment;
  metadata.flagwireRevision = input.revision;
  if (omitted.length > 0) metadata.flagwireOmitted = omitted.map((o) => o.name).join(',');
  return { json: JSON.stringify({ metadata, flags }), omitted };
}
