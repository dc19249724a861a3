// Every problem the flag-definition parser reports, worded in one place. A problem names the flag it
// belongs to (null for the document's own parts, such as $evaluators) and the JSON path of the value at
// fault, in the form `flags.new-checkout.targeting.if[0]`; its text is `path: message`.

export interface DefinitionProblem {
  /** The flag whose definition holds the problem; null when it is elsewhere in the document. */
  readonly flag: string | null;
  /** Where, from the document's root: `flags.KEY.targeting.if[0].in[1]`. */
  readonly path: string;
  readonly message: string;
}

/** One step of a JSON path: a property name or an array index. */
export type PathStep = string | number;

const kPlainName = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** `a.b[0]`; a name that is not plain (a dot, a space, a leading digit, ...) is written `["a.b"]`. */
export function formatPath(steps: readonly PathStep[]): string {
  let out = '';
  for (const step of steps) {
    if (typeof step === 'number') out += `[${step}]`;
    else if (kPlainName.test(step)) out += out === '' ? step : `.${step}`;
    else out += `[${JSON.stringify(step)}]`;
  }
  return out;
}

export function problemText(problem: DefinitionProblem): string {
  return problem.path === '' ? problem.message : `${problem.path}: ${problem.message}`;
}

/** Problems listed in a refusal at most; the rest are counted. */
const kMaxListedProblems = 20;

/** A file's problems as one detail: `a; b; and 3 more` (a file with thousands of problems gets a short answer). */
export function listedProblems(problems: readonly string[]): string {
  const listed = problems.slice(0, kMaxListedProblems);
  const more = problems.length - listed.length;
  return listed.join('; ') + (more > 0 ? `; and ${more} more` : '');
}

/** `1048576 bytes (1 MiB)`; past 2^53 bytes a count is no longer exact, so it is not given. */
function byteCount(bytes: number): string {
  if (!Number.isSafeInteger(bytes)) return 'more than 8 PiB';
  const mib = bytes / (1024 * 1024);
  return mib < 0.1 ? `${bytes} bytes` : `${bytes} bytes (${Number.isInteger(mib) ? mib : mib.toFixed(1)} MiB)`;
}

function list(values: readonly string[]): string {
  return values.map((v) => JSON.stringify(v)).join(', ');
}

/** The messages, by cause. */
export const kProblems = {
  notJson: (detail: string) => `not valid JSON (${detail})`,
  notOneOf: (options: readonly string[]) => `must be one of ${list(options)}`,
  emptyKey: (what: string) => `${what} names must not be empty`,
  mixedVariants: (kind: string, firstKind: string, firstName: string) =>
    `a ${kind}, but variant ${JSON.stringify(firstName)} is a ${firstKind}: a flag's variants are all of one type`,
  unknownDefaultVariant: (name: string, variants: readonly string[]) =>
    `default variant ${JSON.stringify(name)} is not one of the variants (${list(variants)})`,
  unknownEvaluator: (name: string, known: readonly string[]) =>
    known.length === 0
      ? `$ref ${JSON.stringify(name)} names no evaluator: the document has no $evaluators`
      : `$ref ${JSON.stringify(name)} names no evaluator (known: ${list(known)})`,
  unknownFragment: (name: string, known: readonly string[]) =>
    known.length === 0
      ? `$ref ${JSON.stringify(name)} names no shared fragment: this project has none`
      : `$ref ${JSON.stringify(name)} names no shared fragment of this project (known: ${list(known)})`,
  refCycle: (chain: readonly string[]) => `$ref cycle: ${chain.join(' -> ')}`,
  ruleTooLarge: (bytes: number, limit: number) =>
    `resolves to ${byteCount(bytes)} of JSON with its $refs replaced; a rule may be at most ${byteCount(limit)} resolved`,
  refsAddTooMuch: (bytes: number, total: number, limit: number) =>
    `its $refs add ${byteCount(bytes)} to it, and the document's references ${byteCount(total)} to its rules in all; they may add at most ${byteCount(limit)}`,
  /** A project's flags' references in all (src/flags/fragment-refs.ts); `bytes`: the rule's own, null for a fragment's change. */
  projectRefsAddTooMuch: (bytes: number | null, total: number, limit: number) =>
    `${bytes === null ? 'with this rule ' : `its $refs add ${byteCount(bytes)} to it, and `}the project's references would add ${byteCount(total)} to its flags' rules in all (each use of a shared fragment counts its size); they may add at most ${byteCount(limit)}`,
  ruleTooDeep: (limit: number) => `nests deeper than ${limit} levels with its $refs replaced`,
  refChainTooLong: (limit: number) => `refers through more than ${limit} evaluators in a row`,
  refNotString: () => '$ref must be the name of an evaluator (a string)',
  severalOperators: (keys: readonly string[]) => `an operation has exactly one operator, found ${keys.length} (${list(keys)})`,
  unknownOperator: (name: string) => `unknown operator ${JSON.stringify(name)}`,
  unsupportedOperator: (name: string) => `operator ${JSON.stringify(name)} is not supported yet`,
  arity: (op: string, expected: string, got: number) => `${op} takes ${expected}, got ${got}`,
  argsNotArray: (op: string) => `${op} takes an array of arguments`,
  varName: () => 'var takes a name (a string) or [name, default] with a string, number, boolean or null default',
  varUp: () => 'var names with ../ refer to an enclosing iteration (map, filter, ...), which are not supported',
  flagdProperty: (name: string) => `unknown $flagd property ${JSON.stringify(name)}: $flagd.flagKey and $flagd.timestamp exist`,
  missingNames: (op: string) => `${op} takes names (strings)`,
  missingSomeShape: () => 'missing_some takes [minimum count, [names]]',
  semVerOperator: (op: unknown) => `sem_ver operator ${JSON.stringify(op)} is not one of "=", "!=", "<", "<=", ">", ">=", "^", "~"`,
  semVerVersion: (text: unknown) => `${JSON.stringify(text)} is not a version`,
  fractionalBucket: () => 'a fractional bucket is [variant] or [variant, weight]',
  fractionalWeight: (weight: unknown) => `fractional weight ${JSON.stringify(weight)} is not a non-negative integer`,
  constantFails: (op: string) => `${op} always fails on these constant arguments`,
  arithmeticOperand: (op: string, value: unknown) => `${op} cannot use ${JSON.stringify(value)} as a number`,
  divisionByZero: (op: string) => `${op} by a constant zero`,
} as const;
