// Flagwire's own flag file (docs/flags-as-code.md): everything a project's flags are, in a file that
// export writes and plan and apply read. Keys are names; a value the file leaves out is its default,
// except the two parts a file may leave unmanaged (project-model.ts): `audiences`, and a group flag's
// flag-wide `cohorts`. A group flag's environment without cohorts (or with `[]`) inherits the flag-wide
// list, as a PATCH with `cohorts: []` does (plan.ts resolves it).
//
//   {
//     "flagwire": 1,
//     "kind": "multi",
//     "environments": ["staging", "production"],
//     "audiences": { "beta-testers": { "rules": [{ "attribute": "plan", "values": ["beta"] }] } },
//     "flags": {
//       "new-checkout": {
//         "description": "", "tags": [], "bucketing": "fractional", "cohorts": [],
//         "environments": {
//           "production": { "enabled": true, "trafficPercentage": 50, "cohorts": [], "audience": "beta-testers" }
//         }
//       }
//     }
//   }
//
// `bucketing` is written only for a flag made fractional (issue 44); a flag without it is a modulo flag,
// and a file cannot change a stored flag's (plan.ts refuses it). `type`, `owner` and `lifetimeDays`
// (issue 99) are written only where set; left out, each is its default (release, nobody, the type's).
//
// A state may carry typed variants as flagd writes them (variants, defaultVariant, targeting,
// metadata). A file's `$evaluators` are the project's shared fragments (src/fragments), which a rule
// names as `{"$ref": "name"}`: a rule keeps its references, as the stored flag does, and an evaluator
// that refers to another is read written out (a fragment uses no `$ref`). A file without `$evaluators`
// leaves the project's fragments as they are, and its rules may name them. Its `experiments` are the
// project's experiments (experiments.ts), each running exactly while its flag state names it.
import { type Static, type TSchema, Type } from '../typebox.js';
import { FlagwireError } from '../errors.js';
import type { TypedVariants } from '../model/flags.js';
import type { AudienceRule, ProjectKind } from '../model/projects.js';
import {
  Bucketing,
  Cohorts,
  Description,
  Enabled,
  ExperimentKey,
  kLifecycleProperties,
  kLimits,
  kNameRegExp,
  kTypedProperties,
  nameRuleText,
  Tags,
  TrafficPercentage,
} from '../model/schemas.js';
import { compileValidator, unicodeProblems } from '../model/validation.js';
import { checkEnvName, checkRules } from '../projects/project-commands.js';
import { mergeTyped, typedProblems } from '../flags/variant-rules.js';
import { normaliseCohorts } from '../flags/patch-rules.js';
import { bucketingField } from '../flags/bucketing.js';
import { lifecycleFields } from '../flags/lifecycle.js';
import { exactList, sameName } from '../model/input-checks.js';
import { RefResolver } from '../targeting/refs.js';
import { type DefinitionProblem, formatPath, listedProblems, problemText } from '../targeting/problems.js';
import { Targeting as FlagdTargeting } from '../targeting/definition.js';
import { UnleashModel } from '../model/unleash-model.js';
import { unleashStateProblems } from '../unleash/rules/model-problems.js';
import { byCodePoint, defaultModelState, type ModelFlag, type ModelState, type ProjectModel } from './project-model.js';
import { type FragmentRules, kNoFragments } from '../flags/records/fragment-records.js';
import { fragmentNameProblem, fragmentRuleProblems } from '../fragments/fragment-commands.js';
import { ExperimentInFile } from '../experiments/schemas.js';
import { fileExperiments, readFileExperiments } from './experiments.js';

/** The format's version: a file says which it is written in. */
export const kFileVersion = 1;

const AudienceName = Type.String({ 'x-error': 'must be the name of an audience (string) or null' });

const StateFields = {
  enabled: Enabled,
  trafficPercentage: TrafficPercentage,
  cohorts: Type.Optional(Cohorts),
  audience: Type.Optional(Type.Union([AudienceName, Type.Null()], { 'x-error': 'must be the name of an audience (string) or null' })),
  ...kTypedProperties,
  experiment: Type.Optional(ExperimentKey),
  unleash: Type.Optional(UnleashModel),
};

// A flag's bucketing (issue 44): written only for a fractional flag; left out, the flag is a modulo flag.
// Its type, owner and lifetime (issue 99): each written only where the flag has it; left out, its default.
const FlagFields = {
  description: Type.Optional(Description),
  tags: Type.Optional(Tags),
  bucketing: Type.Optional(Bucketing),
  ...kLifecycleProperties,
};

const SingleFileFlag = Type.Object({ ...FlagFields, ...StateFields }, { additionalProperties: false });
const EnvFileState = Type.Object(StateFields, { additionalProperties: false });
const GroupFileFlag = Type.Object(
  {
    ...FlagFields,
    cohorts: Type.Optional(Cohorts),
    environments: Type.Record(Type.String(), EnvFileState, { 'x-error': 'must be an object keyed by environment name' }),
  },
  { additionalProperties: false },
);

const FileAudience = Type.Object(
  {
    rules: Type.Array(Type.Object({ attribute: Type.String(), values: Type.Array(Type.String()) }, { additionalProperties: false }), {
      minItems: 1,
      'x-error': 'must be a non-empty array of {attribute, values}',
    }),
  },
  { additionalProperties: false },
);

// A file's experiments (experiments.ts): by key; in a multi-environment project's file, by environment, then key.
const SingleExperiments = Type.Record(Type.String(), ExperimentInFile, { 'x-error': 'must be an object keyed by experiment key' });
const MultiExperiments = Type.Record(Type.String(), SingleExperiments, {
  'x-error': 'must be an object keyed by environment name, then experiment key',
});

function fileSchema<F extends TSchema, E extends TSchema>(kind: ProjectKind, flag: F, experiments: E) {
  return Type.Object(
    {
      flagwire: Type.Literal(kFileVersion, { 'x-error': `must be ${kFileVersion}, the version of the flag file this Flagwire reads` }),
      kind: Type.Literal(kind),
      environments: Type.Optional(Type.Array(Type.String(), { 'x-error': 'must be an array of environment names' })),
      audiences: Type.Optional(Type.Record(Type.String(), FileAudience)),
      $evaluators: Type.Optional(Type.Record(Type.String(), FlagdTargeting)),
      flags: Type.Record(Type.String(), flag, { 'x-error': 'must be an object keyed by flag name' }),
      experiments: Type.Optional(experiments),
    },
    { additionalProperties: false },
  );
}

const SingleFile = fileSchema('single', SingleFileFlag, SingleExperiments);
const MultiFile = fileSchema('multi', GroupFileFlag, MultiExperiments);
/** A Flagwire flag file, of either kind of project (the OpenAPI document's component; plan and apply check it by its kind). */
export const FlagFile = Type.Union([SingleFile, MultiFile], {
  description: 'A Flagwire flag file (docs/flags-as-code.md), as GET /api/v1/export writes it',
});
type SingleFile = Static<typeof SingleFile>;
type MultiFile = Static<typeof MultiFile>;
type FileState = Static<typeof EnvFileState>;

const kValidators = {
  single: compileValidator(SingleFile, { quoteKeys: false }),
  multi: compileValidator(MultiFile, { quoteKeys: false }),
};

export type FileParse = { ok: true; model: ProjectModel } | { ok: false; problems: string[] };

/**
 * Reads a flag file: JSON text, or the value JSON.parse gave. Every problem is listed, each with its path.
 * `stored`: the project's fragments, which the rules of a file without `$evaluators` are checked with.
 */
export function parseFlagFile(input: unknown, stored: FragmentRules = kNoFragments): FileParse {
  let value: unknown = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch (err) {
      return { ok: false, problems: [`the file is not valid JSON (${(err as Error).message})`] };
    }
  }
  // Every string stored must be valid Unicode: a lone surrogate written as an escape is refused, not stored.
  const unicode = unicodeProblems(value, { quoteKeys: false });
  if (unicode.length > 0) return { ok: false, problems: unicode };
  const kind = isRecord(value) ? value.kind : undefined;
  if (kind !== 'single' && kind !== 'multi') return { ok: false, problems: [kindProblem(value)] };
  const validator = kValidators[kind];
  if (!validator.check(value)) return { ok: false, problems: validator.problems(value) };
  return new FileReader(value, stored).read();
}

function kindProblem(value: unknown): string {
  if (isRecord(value) && isRecord(value.flags) && value.flagwire === undefined)
    return 'this looks like a flagd flag-definition file: import it with `flagwire flags import`; plan and apply read a Flagwire flag file (`flagwire export`)';
  if (!isRecord(value)) return 'the file must be a JSON object (a Flagwire flag file, as `flagwire export` writes)';
  return 'kind must be "single" or "multi" (the kind of project the file describes)';
}

/** The checks a schema cannot make, and the model they leave. */
class FileReader {
  private readonly problems: string[] = [];
  private readonly refs: RefResolver;
  private readonly refProblems: DefinitionProblem[] = [];
  /** The fragments the file's rules name: its `$evaluators` (written out), or the project's when it has none. */
  private readonly fragments: FragmentRules;
  /** The file's `$evaluators` as fragments; null when it has none. */
  private readonly own: Record<string, Record<string, unknown>> | null;

  constructor(
    private readonly file: SingleFile | MultiFile,
    stored: FragmentRules,
  ) {
    this.refs = new RefResolver(file.$evaluators ?? {}, this.refProblems);
    this.refs.resolveAll();
    this.own = file.$evaluators === undefined ? null : this.evaluators(file.$evaluators);
    this.fragments = this.own ?? stored;
  }

  /** The file's evaluators, each written out, by name, each checked as a fragment's name and rule. */
  private evaluators(evaluators: Record<string, Record<string, unknown>>): Record<string, Record<string, unknown>> {
    const names = Object.keys(evaluators).sort(byCodePoint);
    return Object.fromEntries(
      names.map((name) => {
        const rule = (this.refs.resolvedEvaluator(name) ?? {}) as Record<string, unknown>;
        const path = formatPath(['$evaluators', name]);
        const nameProblem = fragmentNameProblem(name);
        // A refused evaluator is reported by the resolver already: its rule is not checked again.
        if (nameProblem !== null) this.problems.push(`${path}: ${nameProblem}`);
        else if (this.refs.resolvedEvaluator(name) !== null)
          for (const p of fragmentRuleProblems(rule)) this.problems.push(`${path}: ${p}`);
        return [name, rule];
      }),
    );
  }

  read(): FileParse {
    const { file } = this;
    const environments = this.environments();
    const audiences = file.audiences === undefined ? null : this.audiences(file.audiences);
    // fromEntries, not assignment: a flag named "__proto__" is a key like any other (assigned, it would set the prototype).
    const flags: Record<string, ModelFlag> = Object.fromEntries(
      Object.keys(file.flags)
        .sort(byCodePoint)
        .map((name) => {
          this.checkName(['flags', name], name);
          const flag =
            file.kind === 'single'
              ? this.singleFlag(name, (file as SingleFile).flags[name]!)
              : this.groupFlag(name, (file as MultiFile).flags[name]!, environments);
          return [name, flag];
        }),
    );
    const experiments =
      file.experiments === undefined
        ? {}
        : { experiments: readFileExperiments(file.kind, file.experiments, environments, flags, this.problems) };
    this.problems.push(...this.refProblems.map(problemText));
    if (this.problems.length > 0) return { ok: false, problems: this.problems };
    return { ok: true, model: { kind: file.kind, environments, audiences, flags, fragments: this.own, ...experiments } };
  }

  private environments(): string[] {
    const list = this.file.environments ?? [];
    if (this.file.kind === 'single' && list.length > 0)
      this.problems.push('environments: a single-environment project has none; drop the list, or write "kind": "multi"');
    if (this.file.kind === 'multi' && this.file.environments === undefined)
      this.problems.push('environments is required in a file of a multi-environment project (the names of its environments, in order)');
    const seen = new Set<string>();
    list.forEach((env, i) => {
      this.attempt(`environments[${i}]`, () => checkEnvName(env));
      if (seen.has(env)) this.problems.push(`environments[${i}]: "${env}" is listed twice`);
      seen.add(env);
    });
    return list;
  }

  private audiences(audiences: Record<string, Static<typeof FileAudience>>): Record<string, AudienceRule[]> {
    const names = Object.keys(audiences).sort(byCodePoint);
    // fromEntries, not assignment: an audience named "__proto__" is a key like any other.
    return Object.fromEntries(
      names.map((name) => {
        const path = ['audiences', name];
        this.checkName(path, name);
        const other = names.find((n) => n !== name && sameName(n, name));
        if (other !== undefined && other < name)
          this.problems.push(`${formatPath(path)}: "${other}" is the same audience name (names are compared without case)`);
        return [name, this.attempt(`${formatPath([...path, 'rules'])}`, () => checkRules(audiences[name]!.rules)) ?? []];
      }),
    );
  }

  private singleFlag(name: string, flag: Static<typeof SingleFileFlag>): ModelFlag {
    return {
      kind: 'flag',
      description: flag.description ?? '',
      tags: fileTags(flag.tags),
      ...bucketingField(flag.bucketing),
      ...lifecycleFields(flag),
      state: this.state(['flags', name], flag),
    };
  }

  private groupFlag(name: string, flag: Static<typeof GroupFileFlag>, environments: readonly string[]): ModelFlag {
    for (const env of Object.keys(flag.environments)) {
      if (!environments.includes(env))
        this.problems.push(
          `${formatPath(['flags', name, 'environments', env])}: "${env}" is not in the file's environments (${environments.join(', ')})`,
        );
    }
    const states: Record<string, ModelState> = {};
    for (const env of environments) {
      const given = Object.hasOwn(flag.environments, env) ? flag.environments[env] : undefined;
      states[env] = given === undefined ? defaultModelState() : this.state(['flags', name, 'environments', env], given);
    }
    return {
      kind: 'groupflag',
      description: flag.description ?? '',
      tags: fileTags(flag.tags),
      ...bucketingField(flag.bucketing),
      ...lifecycleFields(flag),
      cohorts: flag.cohorts === undefined ? null : normaliseCohorts(flag.cohorts),
      environments: states,
    };
  }

  private state(path: (string | number)[], state: FileState): ModelState {
    const out: ModelState = {
      enabled: state.enabled,
      trafficPercentage: state.trafficPercentage,
      audience: state.audience ?? null,
      cohorts: normaliseCohorts(state.cohorts ?? []),
    };
    const typed = this.typed(path, state);
    if (typed !== undefined) out.typed = typed;
    if (state.experiment !== undefined) out.experiment = state.experiment;
    if (state.unleash !== undefined) {
      out.unleash = state.unleash;
      const at = formatPath([...path, 'unleash']);
      for (const problem of unleashStateProblems(state.unleash, typed !== undefined, state.experiment !== undefined))
        this.problems.push(`${at}${problem.slice('unleash'.length)}`);
    }
    return out;
  }

  /**
   * The state's typed variants, its rule as written (`$ref`s kept), checked as flagd would load them with
   * its references replaced by the fragments (a name of none is a problem).
   */
  private typed(path: (string | number)[], state: FileState): TypedVariants | undefined {
    // With the file's own evaluators, the references are first resolved as a flagd document's are, so a
    // rule over the limits resolved (or naming none) is named at the flag, once, before anything walks it.
    const before = this.refProblems.length;
    if (this.own !== null && state.targeting !== undefined) this.refs.resolve(state.targeting, null, [...path, 'targeting']);
    if (this.refProblems.length > before) return undefined;
    const merged = mergeTyped(undefined, state);
    const where = (p: string) => formatPath(path) + (p === '' ? '' : `.${p}`);
    if (!merged.ok) {
      for (const p of merged.problems) this.problems.push(`${where(p.path)}: ${p.message}`);
      return undefined;
    }
    if (merged.typed === undefined) return undefined;
    for (const p of typedProblems(merged.typed, this.fragments)) this.problems.push(`${where(p.path)}: ${p.message}`);
    return merged.typed;
  }

  /** A flag or audience name as the API stores it: trimmed already (a name with spaces at either end would never match). */
  private checkName(path: string[], name: string): void {
    if (name.length === 0 || name.length > kLimits.nameLength || !kNameRegExp.test(name))
      this.problems.push(`${formatPath(path)}: the name ${nameRuleText(kLimits.nameLength)}`);
    else if (name.trim() !== name) this.problems.push(`${formatPath(path)}: a name has no spaces at either end ("${name.trim()}")`);
  }

  private attempt<T>(path: string, fn: () => T): T | undefined {
    try {
      return fn();
    } catch (err) {
      if (!(err instanceof FlagwireError)) throw err;
      this.problems.push(`${path}: ${err.detail}`);
      return undefined;
    }
  }
}

/**
 * A file's tags as the commands store them (each once, in order). Lists are read as the API reads
 * them, cohorts included (normaliseCohorts), as audience rules are (checkRules): a list that repeats
 * a value would otherwise differ from the stored one on every plan, and never apply.
 */
function fileTags(tags: readonly string[] | undefined): string[] {
  return exactList(tags ?? []);
}

/** The model as a file's content, every key in one order: the same model gives the same bytes. */
export function fileDocument(model: ProjectModel): Record<string, unknown> {
  const doc: Record<string, unknown> = { flagwire: kFileVersion, kind: model.kind };
  if (model.kind === 'multi') doc.environments = model.environments;
  if (model.audiences !== null) {
    doc.audiences = Object.fromEntries(Object.entries(model.audiences).map(([name, rules]) => [name, { rules }]));
  }
  // A project without fragments writes no `$evaluators`: its file is the one it was before fragments existed.
  if (model.fragments !== null && Object.keys(model.fragments).length > 0) doc.$evaluators = model.fragments;
  doc.flags = Object.fromEntries(Object.entries(model.flags).map(([name, flag]) => [name, fileFlag(flag)]));
  // Likewise a project without experiments writes no `experiments`.
  if (model.experiments !== undefined && model.experiments.length > 0) doc.experiments = fileExperiments(model.kind, model.experiments);
  return doc;
}

export function fileFlag(flag: ModelFlag): Record<string, unknown> {
  const base = { description: flag.description, tags: flag.tags, ...bucketingField(flag.bucketing), ...lifecycleFields(flag) };
  if (flag.kind === 'flag') return { ...base, ...fileState(flag.state) };
  return {
    ...base,
    ...(flag.cohorts === null ? {} : { cohorts: flag.cohorts }),
    environments: Object.fromEntries(Object.entries(flag.environments).map(([env, state]) => [env, fileState(state)])),
  };
}

function fileState(state: ModelState): Record<string, unknown> {
  const out: Record<string, unknown> = {
    enabled: state.enabled,
    trafficPercentage: state.trafficPercentage,
    cohorts: state.cohorts,
    audience: state.audience,
  };
  const { typed } = state;
  if (typed !== undefined) {
    out.variants = typed.variants;
    out.defaultVariant = typed.defaultVariant;
    if (Object.keys(typed.targeting).length > 0) out.targeting = typed.targeting;
    if (typed.metadata !== undefined && Object.keys(typed.metadata).length > 0) out.metadata = typed.metadata;
  }
  if (state.experiment !== undefined) out.experiment = state.experiment;
  if (state.unleash !== undefined) out.unleash = state.unleash;
  return out;
}

/** A file refused: nothing of it was applied, and why. */
export function fileRefusal(problems: readonly string[]): FlagwireError {
  return new FlagwireError('INVALID_REQUEST', `The file cannot be applied, nothing changed: ${listedProblems(problems)}`);
}

/** A file's text: two-space JSON with a final newline (what Git diffs well). */
export function fileText(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
