// A flag definition compiled for evaluation: its rule as closures and every answer it can give, built
// once. An evaluation picks one of these answers (evaluate.ts): it allocates no result.
//
// What is stored is plain data (a flag state's typed variants; parse.ts checks them); closures cannot
// cross a thread, so each eval worker compiles a flag state once when it compiles the flag version
// (compileFlag through src/evaluation/engine/variants.ts) and keeps it while the version is current (src/evaluation/engine/engine.ts
// drops its caches when the store's sequence moves). compileFlagSet does the same for a whole document.
import { type FlagMetadata, type FlagValueType, type VariantValue, variantType } from './definition.js';
import type { DefinitionProblem } from './problems.js';
import { RuleCompiler, type SharedRules } from './compile-rule.js';
import type { Rule } from './rule-node.js';
import { kMaxBuiltChars, kMaxBuiltItems, kWorkBudget } from './work-budget.js';

/** A flag of a parsed definition: `$ref`s resolved, the default variant null when there is none. */
export interface ParsedFlag {
  readonly state: 'ENABLED' | 'DISABLED';
  readonly variants: Readonly<Record<string, VariantValue>>;
  readonly defaultVariant: string | null;
  /** The rule; null when the flag has none (absent, or {}). */
  readonly targeting: Readonly<Record<string, unknown>> | null;
  readonly metadata: FlagMetadata;
}

/** A definition as parse.ts returns it: valid, plain data (storable, and sendable to a worker). */
export interface ParsedDefinition {
  readonly flags: Readonly<Record<string, ParsedFlag>>;
  readonly metadata: FlagMetadata;
}

/**
 * Why an evaluation ended as it did: OpenFeature's reasons. flagd-core gives all but SPLIT, which only
 * Flagwire's percentage gives (src/evaluation/engine/variants.ts).
 */
export type ResolutionReason = 'STATIC' | 'TARGETING_MATCH' | 'SPLIT' | 'DEFAULT' | 'DISABLED' | 'ERROR';
/** flagd-core's error codes, less PARSE_ERROR: a definition whose rule would fail to load is refused instead. */
export type ResolutionErrorCode = 'FLAG_NOT_FOUND' | 'GENERAL' | 'TYPE_MISMATCH';

/** An evaluation's answer. A value of undefined means "the caller's own default", as in flagd-core. */
export interface Resolution {
  readonly value: VariantValue | undefined;
  readonly variant: string | undefined;
  readonly reason: ResolutionReason;
  readonly errorCode: ResolutionErrorCode | undefined;
  readonly errorMessage: string | undefined;
  readonly flagMetadata: FlagMetadata;
}

/** Every answer a flag can give that does not depend on the variant a rule names. */
export interface FlagAnswers {
  readonly disabled: Resolution;
  /** No rule: the default variant (STATIC), or the caller's default when there is none (DEFAULT). */
  readonly static: Resolution;
  /** The rule gave null: the default variant, or the caller's default (both DEFAULT). */
  readonly default: Resolution;
  /** The rule threw. */
  readonly ruleFailed: Resolution;
  /** The rule overran its evaluation's work budget (work-budget.ts). */
  readonly overBudget: Resolution;
  /** TARGETING_MATCH for each variant, by name. */
  readonly matches: ReadonlyMap<string, Resolution>;
}

export interface CompiledFlag {
  readonly key: string;
  readonly enabled: boolean;
  readonly type: FlagValueType;
  readonly variants: ReadonlyMap<string, VariantValue>;
  readonly defaultVariant: string | null;
  readonly rule: Rule | null;
  /** The flag set's metadata overlaid with the flag's own. */
  readonly metadata: FlagMetadata;
  readonly answers: FlagAnswers;
}

export interface CompiledFlagSet {
  readonly flags: ReadonlyMap<string, CompiledFlag>;
  readonly metadata: FlagMetadata;
}

function answer(
  reason: ResolutionReason,
  flagMetadata: FlagMetadata,
  value?: VariantValue,
  variant?: string,
  errorCode?: ResolutionErrorCode,
  errorMessage?: string,
): Resolution {
  return Object.freeze({ value, variant, reason, errorCode, errorMessage, flagMetadata });
}

/**
 * The flag's default variant served for `reason`: a fixed answer, built once per compiled flag by its
 * caller. Without a default variant it is flagd's DEFAULT with no value (the caller's own default).
 */
export function defaultVariantAnswer(flag: CompiledFlag, reason: ResolutionReason): Resolution {
  const name = flag.defaultVariant;
  if (name === null) return answer('DEFAULT', flag.metadata);
  return answer(reason, flag.metadata, flag.variants.get(name), name);
}

/** The answer for a failed evaluation (made when it happens: an error's message names its cause). */
export function errorAnswer(code: ResolutionErrorCode, message: string, flagMetadata: FlagMetadata): Resolution {
  return answer('ERROR', flagMetadata, undefined, undefined, code, message);
}

/** What a caller reads when a rule overran its work budget: the limits, and where they are explained. */
export function overBudgetMessage(key: string): string {
  return (
    `Evaluating the targeting rule for flag '${key}' exceeded the work limit of one evaluation ` +
    `(${kWorkBudget} units; lists of ${kMaxBuiltItems} items and strings of ${kMaxBuiltChars} characters made at run time): ` +
    `the caller's default applies (docs/operations.md: Evaluation work)`
  );
}

function compileAnswers(key: string, flag: ParsedFlag, metadata: FlagMetadata): FlagAnswers {
  const matches = new Map<string, Resolution>();
  for (const [name, value] of Object.entries(flag.variants)) matches.set(name, answer('TARGETING_MATCH', metadata, value, name));
  const fallback = flag.defaultVariant;
  const noDefault = answer('DEFAULT', metadata);
  return {
    disabled: answer('DISABLED', metadata),
    static: fallback === null ? noDefault : answer('STATIC', metadata, flag.variants[fallback], fallback),
    default: fallback === null ? noDefault : answer('DEFAULT', metadata, flag.variants[fallback], fallback),
    ruleFailed: errorAnswer('GENERAL', `Error evaluating targeting rule for flag '${key}'`, metadata),
    overBudget: errorAnswer('GENERAL', overBudgetMessage(key), metadata),
    matches,
  };
}

/**
 * One flag, compiled; problems in its rule go to `problems` (none for a definition parse.ts accepted).
 * `shared`: sub-rules its rule may hold that are compiled once for every flag (a project's fragments).
 */
export function compileFlag(
  key: string,
  flag: ParsedFlag,
  setMetadata: FlagMetadata,
  problems: DefinitionProblem[] = [],
  shared: SharedRules | null = null,
): CompiledFlag {
  const metadata = Object.freeze({ ...setMetadata, ...flag.metadata });
  const rule =
    flag.targeting === null ? null : new RuleCompiler(problems, key, shared).compile(flag.targeting, ['flags', key, 'targeting']);
  const first = Object.values(flag.variants)[0]!;
  return {
    key,
    enabled: flag.state === 'ENABLED',
    type: variantType(first),
    variants: new Map(Object.entries(flag.variants)),
    defaultVariant: flag.defaultVariant,
    rule,
    metadata,
    answers: compileAnswers(key, flag, metadata),
  };
}

/** Every flag of a parsed definition, compiled: what an evaluation worker holds for one revision. */
export function compileFlagSet(definition: ParsedDefinition, problems: DefinitionProblem[] = []): CompiledFlagSet {
  const metadata = Object.freeze({ ...definition.metadata });
  const flags = new Map<string, CompiledFlag>();
  for (const [key, flag] of Object.entries(definition.flags)) flags.set(key, compileFlag(key, flag, metadata, problems));
  return { flags, metadata };
}
