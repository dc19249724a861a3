// `flagwire flags import`: a flagd flag-definition document into a project, in one writer command, so
// in one transaction: every flag of the file is created or updated by key (the flag's name), or, when
// anything in the file is refused, nothing is written. docs/decisions.md (Typed variants: import).
//
// What the file sets is what flagd expresses: the state (ENABLED is `enabled: true`), the variants, the
// default variant, the rule as written, its `$ref`s kept, and the file's `$evaluators` as the project's
// shared fragments (src/fragments), made or changed by name before the flags, as flags are (the file
// wins; docs/decisions.md: Shared fragments), an evaluator's own references written out; and the
// metadata, the flag-set's overlaid with the flag's own (a stored flag holds its own). A new flag
// is on for everyone its rule reaches (trafficPercentage 100, no cohorts, no audience), so it answers as
// flagd answers; an existing one keeps Flagwire's own gate (percentage, cohorts, audience), which the
// file cannot express. Each create and update goes through the Management API's own create and patch
// (flag-commands.ts): the same checks and the same audit entries, one per flag changed; an update that
// changes nothing writes nothing. Flags of the project that the file does not name are left alone.
//
// A flag of the file may carry Flagwire's `x-flagwire-bucketing` ("modulo" or "fractional"; flagd ignores
// a flag's unknown keys, and `flagwire export --format flagd` writes it for a fractional flag): a new flag
// is made with it; an existing flag's must be the same (a bucketing never changes: bucketing.ts).
//
// A flag whose own metadata names `flagwireExposureMarker` (a state with an experiment, as Flagwire's
// export names its exposures in twin variants: src/flags/flagd-flag.ts) is imported as the export says
// the same state without the twins (src/flags/flagd-exposure-undo.ts): the twins dropped, the targeting
// the plain gate and rule, the marker dropped from the metadata (experimentKey kept, as all metadata is).
// A flag with the marker whose shape is not one the export writes is refused, naming it: never guessed.
import { FlagwireError } from '../errors.js';
import type { Flag } from '../model/flags.js';
import { resolveEnvParam } from '../model/environments.js';
import { requireProject } from '../model/records/lookups.js';
import type { StoreWriter } from '../store/interfaces.js';
import { parseFlagDefinition } from '../targeting/parse.js';
import { formatPath, listedProblems, problemText } from '../targeting/problems.js';
import { actorFor, type Principal } from '../actor/audit-actor.js';
import { createFlagAs, patchFlagAs } from '../flags/flag-commands.js';
import { compiledOnUse } from '../typebox.js';
import { Bucketing, schemaErrorText } from '../model/schemas.js';
import { bucketingChangeProblem, bucketingOf, kBucketingKey } from '../flags/bucketing.js';
import type { FlagDefinitionDocument } from '../targeting/definition.js';
import { RefResolver } from '../targeting/refs.js';
import { type FragmentOutcome, putFragmentAs } from './fragment-commands.js';
import { listFlags } from '../flags/records/flag-store.js';
import { namesExposureMarker, withoutExposureTwins, type UndoneExposures, type WrittenFlagdFlag } from '../flags/flagd-exposure-undo.js';

const kBucketingCheck = compiledOnUse(Bucketing);

export interface FlagsImportInput {
  projectId: string;
  /** The file's content: JSON text, or the value JSON.parse gave (not yet checked). */
  document: unknown;
  /** A multi-environment project: the environment whose state the file sets. */
  env: string | null;
  /** Who asks: the command line's --as user or the operator (principalOf). */
  principal: Principal;
}

export interface ImportedFlag {
  key: string;
  id: string;
  outcome: 'created' | 'updated' | 'unchanged';
}

export interface ImportedFragment {
  name: string;
  outcome: FragmentOutcome;
}

export interface FlagsImportResult {
  projectId: string;
  env: string | null;
  /** The file's `$evaluators`, as the project's shared fragments. */
  fragments: ImportedFragment[];
  flags: ImportedFlag[];
}

export function flagsImport(w: StoreWriter, input: FlagsImportInput, now: number): FlagsImportResult {
  const project = requireProject(w, input.projectId);
  const env = resolveEnvParam(project, input.env, true, 'import');
  const value = jsonValue(input.document);
  const parsed = parseFlagDefinition(value);
  if (!parsed.ok) throw refusal(parsed.problems.map(problemText));
  // Valid: parseFlagDefinition accepted it.
  const document = value as FlagDefinitionDocument;

  const actor = actorFor(w, input.principal, project, 'editFlags', now);
  const byName = new Map<string, Flag>(listFlags(w, project.id).map((f) => [f.name, f]));
  const bucketings = fileBucketings(document, byName);
  if (!bucketings.ok) throw refusal(bucketings.problems);
  const untwinned = exposuresUndone(document);
  if (!untwinned.ok) throw refusal(untwinned.problems);
  const evaluators = document.$evaluators ?? {};
  // The file's evaluators are sound (parsed): each is resolved with no problem.
  const resolver = new RefResolver(evaluators, []);
  const fragments: ImportedFragment[] = [];
  for (const name of Object.keys(evaluators)) {
    const rule = resolver.resolvedEvaluator(name) as Record<string, unknown>;
    try {
      fragments.push({ name, outcome: putFragmentAs(w, project, actor, name, rule, now) });
    } catch (err) {
      if (err instanceof FlagwireError && err.code === 'INVALID_REQUEST')
        throw refusal([`${formatPath(['$evaluators', name])}: ${err.detail}`]);
      throw err;
    }
  }
  const flags: ImportedFlag[] = [];
  for (const [key, flag] of Object.entries(parsed.definition.flags)) {
    const undone = untwinned.byKey.get(key);
    const state =
      undone !== undefined
        ? {
            enabled: true,
            variants: undone.variants,
            defaultVariant: undone.defaultVariant,
            targeting: undone.targeting,
            metadata: { ...parsed.definition.metadata, ...undone.metadata },
          }
        : {
            enabled: flag.state === 'ENABLED',
            variants: flag.variants,
            defaultVariant: flag.defaultVariant,
            // As written: its `$ref`s name the fragments just made.
            targeting: flag.targeting === null ? {} : (document.flags[key]!.targeting ?? {}),
            // The flag-set's metadata overlaid with the flag's own, as flagd serves it ({} is none).
            metadata: { ...parsed.definition.metadata, ...flag.metadata },
          };
    try {
      const existing = byName.get(key);
      if (existing === undefined) {
        const named = { name: key, ...(bucketings.byKey.has(key) ? { bucketing: bucketings.byKey.get(key) } : {}) };
        const created = { ...named, ...state, trafficPercentage: 100 };
        const body = env === null ? created : { ...named, environments: { [env]: { ...state, trafficPercentage: 100 } } };
        const made = createFlagAs(w, { projectId: project.id, actor, body }, now);
        flags.push({ key, id: made.id, outcome: 'created' });
      } else {
        const result = patchFlagAs(w, { projectId: project.id, flagId: existing.id, env, actor, patch: state }, now);
        flags.push({ key, id: existing.id, outcome: result.changed ? 'updated' : 'unchanged' });
      }
    } catch (err) {
      // The transaction is abandoned whole: a flag written before this one is not kept either.
      if (err instanceof FlagwireError && err.code === 'INVALID_REQUEST') throw refusal([`${formatPath(['flags', key])}: ${err.detail}`]);
      throw err;
    }
  }
  return { projectId: project.id, env, fragments, flags };
}

/** The file as a value; text that is no JSON stays text, for parseFlagDefinition to say why. */
function jsonValue(document: unknown): unknown {
  if (typeof document !== 'string') return document;
  try {
    return JSON.parse(document);
  } catch {
    return document;
  }
}

type Untwinned = Extract<UndoneExposures, { ok: true }>;

/** Each flag whose metadata names an exposure marker, without its twins, by key; or every flag that cannot be. */
function exposuresUndone(
  document: FlagDefinitionDocument,
): { ok: true; byKey: Map<string, Untwinned> } | { ok: false; problems: string[] } {
  const flags = document.flags as Record<string, WrittenFlagdFlag>;
  const byKey = new Map<string, Untwinned>();
  const problems: string[] = [];
  for (const [key, flag] of Object.entries(flags)) {
    if (!namesExposureMarker(flag)) continue;
    const undone = withoutExposureTwins(flag);
    if (undone.ok) byKey.set(key, undone);
    else problems.push(`${formatPath(['flags', key])}: ${undone.problem}`);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, byKey };
}

type FileBucketings = { ok: true; byKey: Map<string, Bucketing> } | { ok: false; problems: string[] };

/**
 * The bucketing each flag of a valid flagd document names, by key; every problem at once: a value that is
 * no bucketing, or one other than an existing flag's (which nothing may change).
 */
function fileBucketings(document: FlagDefinitionDocument, byName: ReadonlyMap<string, Flag>): FileBucketings {
  const flags = document.flags as Record<string, Record<string, unknown>>;
  const byKey = new Map<string, Bucketing>();
  const problems: string[] = [];
  for (const [key, flag] of Object.entries(flags)) {
    if (!Object.hasOwn(flag, kBucketingKey)) continue;
    const value = flag[kBucketingKey];
    const path = formatPath(['flags', key, kBucketingKey]);
    if (!kBucketingCheck.Check(value)) {
      problems.push(`${path}: ${schemaErrorText(Bucketing)}`);
      continue;
    }
    const existing = byName.get(key);
    const changed = existing === undefined ? null : bucketingChangeProblem(bucketingOf(existing), value);
    if (changed !== null) problems.push(`${path}: ${changed}`);
    byKey.set(key, value);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, byKey };
}

function refusal(problems: readonly string[]): FlagwireError {
  return new FlagwireError('INVALID_REQUEST', `The file was not imported, nothing changed: ${listedProblems(problems)}`);
}
