// The rule compiler's operators that read the context: var, missing and missing_some.
// Each compiles its operands once into closures; compile-rule.ts holds the compiler and the table these
// join, rule-node.ts the shapes they share.
import { kProblems, type PathStep } from '../problems.js';
import type { Scope } from '../scope.js';
import { chainedReader, compiledReader, isMissing, readWhole, splitPath, walkReader } from '../var-path.js';
import { type OperatorCompiler, type RuleBuilder, dynamic, kCompiled, literal } from '../rule-node.js';

function isVarDefault(value: unknown): boolean {
  return value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

const kFlagdNames: ReadonlySet<string> = new Set(['$flagd.flagKey', '$flagd.timestamp']);

const compileVar: OperatorCompiler = (c, args, path, dialect) => {
  let name: string;
  let fallback: unknown = null;
  let unary = true;
  if (typeof args === 'string') name = args;
  else if (
    Array.isArray(args) &&
    (args.length === 1 || args.length === 2) &&
    typeof args[0] === 'string' &&
    (args.length === 1 || isVarDefault(args[1]))
  ) {
    name = args[0];
    if (args.length === 2) {
      fallback = args[1];
      unary = false;
    }
  } else return c.problem(path, kProblems.varName());
  if (name.includes('../')) return c.problem(path, kProblems.varUp());
  if (name.startsWith('$flagd.') && !kFlagdNames.has(name)) return c.problem(path, kProblems.flagdProperty(name));
  if (name === '') return dynamic(readWhole);
  const steps = splitPath(name);
  if (dialect === kCompiled) return dynamic(compiledReader(steps, fallback));
  // The interpreter: a lone name takes its 1-to-3-step shortcut (a plain name is one step), else the walk.
  if (unary && (!/[.\\]/.test(name) || steps.length === 2 || steps.length === 3)) return dynamic(chainedReader(steps));
  return dynamic(walkReader(steps, fallback));
};

function missingNames(c: RuleBuilder, args: unknown, path: PathStep[], op: string): string[][] | null {
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) {
    c.problem(path, kProblems.missingNames(op));
    return null;
  }
  return (args as string[]).map(splitPath);
}

function missingOf(scope: Scope, names: readonly string[], paths: readonly string[][]): string[] {
  const out: string[] = [];
  for (let i = 0; i < paths.length; i++) if (isMissing(scope, paths[i]!)) out.push(names[i]!);
  return out;
}

const compileMissing: OperatorCompiler = (c, args, path) => {
  const paths = missingNames(c, args, path, 'missing');
  if (paths === null) return literal(null);
  const names = args as string[];
  return dynamic((scope) => missingOf(scope, names, paths));
};

const compileMissingSome: OperatorCompiler = (c, args, path, dialect) => {
  if (!Array.isArray(args) || args.length !== 2 || typeof args[0] !== 'number') return c.problem(path, kProblems.missingSomeShape());
  const need = args[0];
  const paths = missingNames(c, args[1], [...path, 1], 'missing_some');
  if (paths === null) return literal(null);
  const names = args[1] as string[];
  const compiled = dialect === kCompiled;
  return dynamic((scope) => {
    const missing = missingOf(scope, names, paths);
    if (compiled) scope.prev = missing;
    return names.length - missing.length < need ? missing : [];
  });
};

export const kContextOperators: Readonly<Record<string, OperatorCompiler>> = {
  var: compileVar,
  missing: compileMissing,
  missing_some: compileMissingSome,
};
