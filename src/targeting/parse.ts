// The flag-definition parser: a flagd document in, either the parsed definition (valid, `$ref`s
// resolved, ready for compileFlagSet) or every problem found, each naming its flag and JSON path:
//
//   flags.new-checkout.targeting.if[0]: unknown operator "foo"
//
// Refused, beyond the schema (definition.ts): empty names, variants of mixed types, a default variant that
// is not a variant, a `$ref` to no evaluator or in a cycle, and every rule flagd-core would fail to load
// (an unknown operator, wrong arity, a constant sub-expression that fails). A rule is compiled here once
// to find those; what is stored is the definition, compiled again by each worker (compiled-flag.ts).
import { type ValueError, ValueErrorType } from '../typebox.js';
import { compileFlagSet, type ParsedDefinition, type ParsedFlag } from './compiled-flag.js';
import { RuleCompiler } from './compile-rule.js';
import {
  type FlagDefinition,
  type FlagDefinitionDocument,
  type FlagValueType,
  kFlagDefinitionDocument,
  variantType,
} from './definition.js';
import { type DefinitionProblem, formatPath, kProblems, type PathStep } from './problems.js';
import { RefResolver } from './refs.js';

export type ParseResult =
  | { readonly ok: true; readonly definition: ParsedDefinition }
  | { readonly ok: false; readonly problems: DefinitionProblem[] };

const kArticle: Readonly<Record<FlagValueType, string>> = { boolean: 'boolean', string: 'string', number: 'number', object: 'JSON object' };

/** A JSON Pointer (TypeBox's error paths) as path steps. */
function pointerSteps(pointer: string): PathStep[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** TypeBox says "Expected union value" for a value outside a list of constants: name the constants instead. */
function schemaMessage(error: ValueError): string {
  const options = (error.schema as { anyOf?: { const?: unknown }[] }).anyOf;
  if (error.type === ValueErrorType.Union && options?.every((o) => o.const !== undefined)) {
    return kProblems.notOneOf(options.map((o) => String(o.const)));
  }
  return error.message;
}

function schemaProblem(error: ValueError): DefinitionProblem {
  const steps = pointerSteps(error.path);
  const flag = steps[0] === 'flags' && steps.length > 1 ? String(steps[1]) : null;
  return { flag, path: formatPath(steps), message: schemaMessage(error) };
}

/** Every schema error, the first one only at each path (a missing value is also "not one of ..."). */
function schemaProblems(document: unknown): DefinitionProblem[] {
  const byPath = new Map<string, DefinitionProblem>();
  for (const error of kFlagDefinitionDocument.Errors(document)) {
    const problem = schemaProblem(error);
    if (!byPath.has(problem.path)) byPath.set(problem.path, problem);
  }
  return [...byPath.values()];
}

/** Problems of one flag's variants and default variant (the parts a schema cannot check). */
function checkVariants(key: string, flag: FlagDefinition, problems: DefinitionProblem[]): void {
  const names = Object.keys(flag.variants);
  const report = (path: PathStep[], message: string) => problems.push({ flag: key, path: formatPath(['flags', key, ...path]), message });
  if (names.includes('')) report(['variants'], kProblems.emptyKey('variant'));
  const firstName = names[0]!;
  const firstType = variantType(flag.variants[firstName]!);
  for (const name of names) {
    const type = variantType(flag.variants[name]!);
    if (type !== firstType) report(['variants', name], kProblems.mixedVariants(kArticle[type], kArticle[firstType], firstName));
  }
  const fallback = flag.defaultVariant;
  if (typeof fallback === 'string' && !Object.hasOwn(flag.variants, fallback))
    report(['defaultVariant'], kProblems.unknownDefaultVariant(fallback, names));
}

function hasRule(targeting: Readonly<Record<string, unknown>> | undefined): targeting is Readonly<Record<string, unknown>> {
  return targeting !== undefined && Object.keys(targeting).length > 0;
}

/** Parses a flag-definition document: JSON text, or the value JSON.parse gave. */
export function parseFlagDefinition(input: unknown): ParseResult {
  let document: unknown = input;
  if (typeof input === 'string') {
    try {
      document = JSON.parse(input);
    } catch (err) {
      return { ok: false, problems: [{ flag: null, path: '', message: kProblems.notJson((err as Error).message) }] };
    }
  }
  if (!kFlagDefinitionDocument.Check(document)) return { ok: false, problems: schemaProblems(document) };
  return parseDocument(document);
}

function parseDocument(document: FlagDefinitionDocument): ParseResult {
  const problems: DefinitionProblem[] = [];
  const evaluators = document.$evaluators ?? {};
  if (Object.hasOwn(document.flags, '')) problems.push({ flag: null, path: 'flags', message: kProblems.emptyKey('flag') });
  if (Object.hasOwn(evaluators, '')) problems.push({ flag: null, path: '$evaluators', message: kProblems.emptyKey('evaluator') });

  // Evaluators first: their problems are reported once, at their own paths, not in every flag using them.
  const refs = new RefResolver(evaluators, problems);
  refs.resolveAll();
  const checker = new RuleCompiler(problems, null);
  for (const name of Object.keys(evaluators)) checker.check(refs.resolvedEvaluator(name), ['$evaluators', name]);
  const evaluatorsOk = problems.length === 0;

  const flags: Record<string, ParsedFlag> = {};
  for (const [key, flag] of Object.entries(document.flags)) {
    checkVariants(key, flag, problems);
    const targeting = hasRule(flag.targeting)
      ? (refs.resolve(flag.targeting, key, ['flags', key, 'targeting']) as Record<string, unknown>)
      : null;
    flags[key] = {
      state: flag.state,
      variants: flag.variants,
      defaultVariant: flag.defaultVariant ?? null,
      targeting,
      metadata: flag.metadata ?? {},
    };
  }
  const definition: ParsedDefinition = { flags, metadata: document.metadata ?? {} };
  // Rules are compiled once the evaluators they may include are sound (a problem there would repeat per flag).
  if (evaluatorsOk) compileFlagSet(definition, problems);
  return problems.length === 0 ? { ok: true, definition } : { ok: false, problems };
}

/** A problem of one flag's definition, its path from the flag (`targeting.if[0]`, `defaultVariant`; '' for the flag itself). */
export interface FlagProblem {
  readonly path: string;
  readonly message: string;
}

// The key the one flag of parseFlagVariants' document has: plain, so that its paths start `flags.f`.
const kOneFlagKey = 'f';
const kOneFlagPrefix = formatPath(['flags', kOneFlagKey]);

/**
 * One flag's variants, default variant and targeting, checked by the same rules as a whole document
 * (Flagwire stores each flag's, or each environment's, on its own: no $evaluators, no metadata). Returns
 * every problem, each with its path from the flag; empty when the flag would parse.
 */
export function flagVariantProblems(flag: { variants: unknown; defaultVariant: unknown; targeting: unknown }): FlagProblem[] {
  const result = parseFlagDefinition({ flags: { [kOneFlagKey]: { state: 'ENABLED', ...flag } } });
  if (result.ok) return [];
  return result.problems.map((p) => {
    const rest = p.path.startsWith(kOneFlagPrefix) ? p.path.slice(kOneFlagPrefix.length) : p.path;
    return { path: rest.startsWith('.') ? rest.slice(1) : rest, message: p.message };
  });
}

// The name of parseEvaluatorProblems' one evaluator: plain, so that its paths start `$evaluators.e`.
const kOneEvaluatorName = 'e';
const kOneEvaluatorPrefix = formatPath(['$evaluators', kOneEvaluatorName]);

/**
 * One shared rule (a `$evaluators` entry) checked as a document's evaluator is: every problem, each with
 * its path from the rule ('' for the rule itself); empty when it would load.
 */
export function evaluatorProblems(rule: unknown): FlagProblem[] {
  const result = parseFlagDefinition({ flags: {}, $evaluators: { [kOneEvaluatorName]: rule } });
  if (result.ok) return [];
  return result.problems.map((p) => {
    const rest = p.path.startsWith(kOneEvaluatorPrefix) ? p.path.slice(kOneEvaluatorPrefix.length) : p.path;
    return { path: rest.startsWith('.') ? rest.slice(1) : rest, message: p.message };
  });
}
