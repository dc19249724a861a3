// A flagd flag that names its exposures in its variant (issue 58; src/flags/flagd-flag.ts, the top of the
// file), taken back to what Flagwire's translation says of the same state without the twins: what
// `flagwire flags import` stores (docs/decisions.md: flagd names an exposure in its variant). Only the
// shapes flagd-flag.ts writes are undone, and they are recognised by writing them again: the state's
// parts (cohorts, audience rules, percentage, rule, variants) are read off the document, the flag is said
// again from them by flagd-flag.ts's own flagdFlag, with and without the experiment, and the document
// must be the first exactly; the second is the answer. Anything else is refused, never guessed.
import { isDeepStrictEqual } from 'node:util';
import type { EffectiveState } from './records/flag-state.js';
import { kExperimentKeyField, kExposureMarkerField, type SingleFlag, type TypedVariants } from '../model/flags.js';
import type { VariantValue } from '../targeting/definition.js';
import type { Audience, AudienceRule } from '../model/projects.js';
import { type FlagdFlag, flagdFlag } from './flagd-flag.js';

/** A flag of a flagd document as written (parsed by src/targeting/parse.ts). */
export interface WrittenFlagdFlag {
  state: string;
  variants: Record<string, VariantValue>;
  defaultVariant: string | null;
  targeting?: Record<string, unknown>;
  metadata?: Record<string, string | number | boolean>;
}

/** What the flag says without its twins, or why it is not a flag Flagwire wrote. */
export type UndoneExposures =
  | {
      ok: true;
      variants: Record<string, VariantValue>;
      defaultVariant: string | null;
      targeting: Record<string, unknown>;
      metadata: Record<string, string | number | boolean>;
    }
  | { ok: false; problem: string };

/** Whether the flag's own metadata names an exposure marker (then withoutExposureTwins must undo it). */
export function namesExposureMarker(flag: WrittenFlagdFlag): boolean {
  return flag.metadata !== undefined && Object.hasOwn(flag.metadata, kExposureMarkerField);
}

const kProject = 'prj_import';
const kAudience = 'aud_import';

type Node = Record<string, unknown>;

function ifArgs(node: unknown): unknown[] | null {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return null;
  const args = (node as Node).if;
  return Object.keys(node).length === 1 && Array.isArray(args) ? args : null;
}

/** `{"in": [{"var": NAME}, [...]]}`: its name and list, else null. */
function inVar(node: unknown): { name: unknown; list: unknown[] } | null {
  if (node === null || typeof node !== 'object' || Array.isArray(node) || Object.keys(node).length !== 1) return null;
  const args = (node as Node).in;
  if (!Array.isArray(args) || args.length !== 2 || !Array.isArray(args[1])) return null;
  const v = args[0] as Node | null;
  if (v === null || typeof v !== 'object' || Object.keys(v).length !== 1 || typeof v.var !== 'string') return null;
  return { name: v.var, list: args[1] };
}

/** An audience's rules as flagd-flag.ts's allOf(ruleMet) writes them; the string candidates are the values. */
function audienceRules(node: unknown): AudienceRule[] | null {
  const one = inVar(node);
  if (one !== null) return [{ attribute: one.name as string, values: one.list.filter((v): v is string => typeof v === 'string') }];
  const args = ifArgs(node);
  if (args === null || args.length !== 3 || args[2] !== false) return null;
  const first = audienceRules(args[0]);
  const rest = first?.length === 1 ? audienceRules(args[1]) : null;
  return rest === null ? null : [...first!, ...rest];
}

/** The percentage and the typed rule an experiment state's allocation (or 100%'s twinned rule) holds. */
function allocationParts(node: unknown): { p: number; rule: Record<string, unknown> | null } | null {
  const args = ifArgs(node);
  if (args === null) return null;
  const split = args.length === 3 ? ifArgs(args[1]) : null;
  const equal = split?.length === 3 ? ((split[0] as Node | null)?.['==='] as unknown[] | undefined) : undefined;
  const fractional = Array.isArray(equal) ? ((equal[0] as Node | null)?.fractional as unknown[] | undefined) : undefined;
  const bucket = Array.isArray(fractional) ? fractional[1] : undefined;
  if (Array.isArray(bucket) && typeof bucket[1] === 'number') return { p: bucket[1], rule: lastOfIf(split![1]) };
  // No split: the 100% arm of a typed flag, its rule twinned.
  return { p: 100, rule: lastOfIf(node) };
}

function lastOfIf(node: unknown): Record<string, unknown> | null {
  const args = ifArgs(node);
  const last = args === null ? undefined : args[args.length - 1];
  return last !== null && typeof last === 'object' && !Array.isArray(last) ? (last as Record<string, unknown>) : null;
}

interface Parts {
  cohorts: string[];
  rules: AudienceRule[] | null;
  p: number;
  rule: Record<string, unknown> | null;
}

/** Every reading of the decision tree's parts worth trying: the one that says the document again wins. */
function readings(targeting: unknown): Parts[] {
  let rest = targeting;
  let cohorts: string[] = [];
  const top = ifArgs(targeting);
  const listed = top?.length === 3 ? inVar(top[0]) : null;
  if (listed !== null && listed.name === 'cohort' && listed.list.every((c) => typeof c === 'string')) {
    cohorts = listed.list as string[];
    rest = top![2];
  }
  const found: Parts[] = [];
  const plain = allocationParts(rest);
  if (plain !== null) found.push({ cohorts, rules: null, ...plain });
  const wrapped = ifArgs(rest);
  const rules = wrapped?.length === 3 ? audienceRules(wrapped[0]) : null;
  const inner = rules === null ? null : allocationParts(wrapped![1]);
  if (inner !== null) found.push({ cohorts, rules, ...inner });
  return found;
}

/**
 * `flag` (its own metadata naming kExposureMarkerField) as Flagwire says the same state without its
 * experiment's twins; its metadata keeps everything but the marker (experimentKey too, as the import
 * keeps a flag's metadata).
 */
export function withoutExposureTwins(flag: WrittenFlagdFlag): UndoneExposures {
  const refused = (why: string): UndoneExposures => ({
    ok: false,
    problem: `it names an exposure marker (metadata "${kExposureMarkerField}") but is not a flag Flagwire's flagd export writes: ${why}; export it again, or remove the marker and its twin variants`,
  });
  const metadata = flag.metadata ?? {};
  const marker = metadata[kExposureMarkerField];
  const id = metadata.id;
  const name = metadata.name;
  const experiment = metadata[kExperimentKeyField];
  if (typeof marker !== 'string' || typeof id !== 'string' || typeof name !== 'string' || typeof experiment !== 'string')
    return refused(`its metadata must name the marker, "${kExperimentKeyField}", "id" and "name" as strings`);
  if (flag.state !== 'ENABLED' || flag.targeting === undefined) return refused('only an enabled flag with targeting has exposure twins');
  const own: Record<string, string | number | boolean> = { ...metadata };
  for (const key of [kExposureMarkerField, kExperimentKeyField, 'id', 'name']) delete own[key];
  const variants: Record<string, VariantValue> = {};
  for (const [variant, value] of Object.entries(flag.variants)) if (!variant.endsWith(marker)) variants[variant] = value;
  const written = { state: flag.state, variants: flag.variants, defaultVariant: flag.defaultVariant, targeting: flag.targeting, metadata };
  for (const parts of readings(flag.targeting)) {
    for (const typed of [false, true]) {
      const audiences: Audience[] =
        parts.rules === null ? [] : [{ id: kAudience, projectId: kProject, name: kAudience, rules: parts.rules, updatedAt: 0 }];
      const state: EffectiveState = {
        enabled: true,
        trafficPercentage: parts.p,
        audienceId: parts.rules === null ? null : kAudience,
        cohorts: parts.cohorts,
      };
      if (typed) {
        const t: TypedVariants = { variants, defaultVariant: flag.defaultVariant, targeting: parts.rule ?? {} };
        if (Object.keys(own).length > 0) t.metadata = own;
        state.typed = t;
      } else if (Object.keys(own).length > 0) continue;
      const record: SingleFlag = {
        id,
        projectId: kProject,
        name,
        description: '',
        tags: [],
        cohorts: parts.cohorts,
        createdAt: 0,
        updatedAt: 0,
        kind: 'flag',
        state,
      };
      const again: FlagdFlag = flagdFlag(record, { ...state, experiment }, audiences);
      if (!isDeepStrictEqual(JSON.parse(JSON.stringify(again)), written)) continue;
      const plain = flagdFlag(record, state, audiences);
      const kept = { ...metadata };
      delete kept[kExposureMarkerField];
      return {
        ok: true,
        variants: plain.variants as Record<string, VariantValue>,
        defaultVariant: plain.defaultVariant,
        targeting: plain.targeting ?? {},
        metadata: kept,
      };
    }
  }
  return refused('its variants, default variant, targeting and metadata are not what the export writes for any state with an experiment');
}
