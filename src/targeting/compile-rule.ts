// A targeting rule (JsonLogic with flagd's operators) compiled once into a tree of closures: evaluating
// it walks no JSON and looks up no operator by name. The answers are flagd-core's (json-logic-engine's
// compiled functions, see json-logic.ts for the two dialects), including when it fails:
//
//   at load    flagd-core's compiler evaluates each constant sub-expression once, while it builds the
//              function, and a failure there makes the flag a PARSE_ERROR for every evaluation. We report
//              the same failures as problems, so such a definition is refused instead of stored.
//   at evaluation   a rule that throws is flagd-core's GENERAL error; ours throw the same way.
//
// Operators: var, missing, missing_some, == === != !== < <= > >= (< and <= also with three operands:
// "between"), and, or, !, !!, if, in, cat, substr, + - * / %, max, min, merge, and flagd's
// starts_with, ends_with, sem_ver, fractional. flagd's schema also lists map, filter, reduce, all, some
// and none; they are refused as not supported yet, and so is any other name.
//
// This file holds the compiler (constant folding, the dialects, arity) and the operator table; the
// operators are in operators/, one file per family.
import { kArithmeticOperators } from './operators/arithmetic.js';
import { kContextOperators } from './operators/context.js';
import { kFlagdOperators } from './operators/flagd.js';
import { kLogicOperators } from './operators/logic.js';
import { kStringListOperators } from './operators/strings-lists.js';
import { type DefinitionProblem, formatPath, kProblems, type PathStep } from './problems.js';
import {
  type Dialect,
  dynamic,
  kCompiled,
  kInterpreted,
  literal,
  type Node,
  type OperatorCompiler,
  type Rule,
  type RuleBuilder,
} from './rule-node.js';
import { newScope } from './scope.js';
import { resetWorkBudget } from './work-budget.js';

/** flagd's operators that are not supported yet (the rest of what its schema lists). */
const kUnsupported: ReadonlySet<string> = new Set(['map', 'filter', 'reduce', 'all', 'some', 'none']);
/** Operators whose value depends on the context: json-logic-engine never folds an operation holding one. */
const kContextual: ReadonlySet<string> = new Set(['var', 'missing_some', 'sem_ver', 'starts_with', 'ends_with', 'fractional']);
/** The scope constant sub-rules are folded with: they read nothing from it. */
const kFoldScope = newScope();

/**
 * Whether json-logic-engine evaluates `logic` once while building (its `isDeterministic`): nothing below
 * it reads the context. `missing` of no names is the engine's one exception to "reads the context".
 */
function isConstant(logic: unknown): boolean {
  if (Array.isArray(logic)) return logic.every(isConstant);
  if (logic === null || typeof logic !== 'object') return true;
  // A shared sub-rule's answer is kept (SharedRules): a rule holding one walks only its own part.
  const known = kSharedConstancy.get(logic);
  if (known !== undefined) return known;
  const keys = Object.keys(logic);
  if (keys.length === 0) return true;
  const op = keys[0]!;
  const args = (logic as Record<string, unknown>)[op];
  if (op === 'missing') return Array.isArray(args) && args.length === 0;
  if (kContextual.has(op)) return false;
  return isConstant(args);
}

/** isConstant of each shared sub-rule (SharedRules), by the object: worked out once, where it is shared. */
const kSharedConstancy = new WeakMap<object, boolean>();

/** Shared sub-rules compiled in this thread (SharedRules): what the tests count to see each compiled once. */
let sharedCompiles = 0;

/** How many shared sub-rules this thread has compiled, each once per dialect it was used in. */
export function sharedRuleCompiles(): number {
  return sharedCompiles;
}

/**
 * Sub-rules that stand in many rules as the same object (a project's shared fragments, resolved once per
 * store revision: src/flags/records/fragment-resolve.ts), each compiled once per dialect and its closures shared by
 * every rule compiled with it: a flag's rule then compiles only its own part, however large the fragment.
 * A sub-rule's node depends on its JSON and its dialect alone (its path only names problems, and a
 * stored rule has none), so a shared node is what compiling it again would give, with one exception kept
 * as it was: a node may make objects at compile time (a literal `{}` or array), distinct per occurrence
 * as flagd-core's are, which an `==` tells apart; so within one rule only the first occurrence of a
 * shared sub-rule takes the shared node, and the next are compiled anew (RuleCompiler), as before.
 */
export class SharedRules {
  private readonly nodes = new Map<object, [Node | undefined, Node | undefined]>();

  /** `root` (an object) shared from now on. */
  share(root: unknown): void {
    if (root === null || typeof root !== 'object' || this.nodes.has(root)) return;
    this.nodes.set(root, [undefined, undefined]);
    if (!kSharedConstancy.has(root)) kSharedConstancy.set(root, isConstant(root));
  }

  /** Whether `logic` is one of the shared sub-rules. */
  has(logic: object): boolean {
    return this.nodes.has(logic);
  }

  /** The shared node of `logic` (one of the shared sub-rules) in `dialect`, compiled by `compile` the first time. */
  node(logic: object, dialect: Dialect, compile: () => Node): Node {
    const nodes = this.nodes.get(logic)!;
    let node = nodes[dialect];
    if (node === undefined) {
      node = compile();
      nodes[dialect] = node;
      sharedCompiles++;
    }
    return node;
  }
}

/**
 * The interpreter's operations that run their operands only when reached (the rest prepare every
 * operand first, unreached branches of a three-operand `if` included).
 */
function isLazy(op: string, args: unknown): boolean {
  return op === 'and' || op === 'or' || (op === 'if' && !(Array.isArray(args) && args.length === 3));
}

/** A sub-rule that always throws. */
const kThrows: Node = dynamic(() => {
  throw Number.NaN;
});

const kEagerFailures = new WeakMap<object, boolean>();

/**
 * Whether the interpreter fails while preparing these operands. Before it runs an operation it prepares
 * it once, evaluating every constant sub-operation it will need, reached or not (those of lazy
 * operations' operands excepted, which are prepared when they run): one that throws fails the whole
 * operation, every time it is reached.
 */
function failsEagerly(args: unknown): boolean {
  if (Array.isArray(args)) return args.some(failsEagerly);
  if (args === null || typeof args !== 'object') return false;
  const keys = Object.keys(args);
  if (keys.length !== 1) return false;
  const known = kEagerFailures.get(args);
  if (known !== undefined) return known;
  const op = keys[0]!;
  const inner = (args as Record<string, unknown>)[op];
  let fails: boolean;
  if (isConstant(args)) {
    // Its problems, if any, are reported by the compilation proper: this one only looks for a throw.
    const rule = new RuleCompiler([], null).node(args, [], kInterpreted).rule;
    try {
      resetWorkBudget();
      rule(kFoldScope);
      fails = false;
    } catch {
      fails = true;
    }
  } else fails = !isLazy(op, inner) && failsEagerly(inner);
  kEagerFailures.set(args, fails);
  return fails;
}

export class RuleCompiler implements RuleBuilder {
  constructor(
    /** Where problems go; each names `flag`. */
    readonly problems: DefinitionProblem[],
    readonly flag: string | null,
    /** Sub-rules compiled once for every rule that holds them (a project's fragments); null: none. */
    private readonly shared: SharedRules | null = null,
  ) {}

  /** The shared sub-rules this rule has met already: a further occurrence is compiled anew (SharedRules). */
  private readonly sharedMet = new Set<object>();

  /** The rule at `path`, as flagd-core's `engine.build` would run it. */
  compile(logic: unknown, path: PathStep[]): Rule {
    return this.node(logic, path, kCompiled).rule;
  }

  /**
   * Reports the rule's problems of structure (unknown operators, arity, shapes) without folding
   * constants: for shared evaluators, whose constants fail or not depending on where they are used.
   */
  check(logic: unknown, path: PathStep[]): void {
    this.node(logic, path, kInterpreted);
  }

  problem(path: readonly PathStep[], message: string): Node {
    this.problems.push({ flag: this.flag, path: formatPath(path), message });
    return literal(null);
  }

  node(logic: unknown, path: PathStep[], dialect: Dialect): Node {
    const shared = this.shared;
    if (shared !== null && logic !== null && typeof logic === 'object' && shared.has(logic) && !this.sharedMet.has(logic)) {
      this.sharedMet.add(logic);
      return shared.node(logic, dialect, () => this.ownNode(logic, path, dialect));
    }
    return this.ownNode(logic, path, dialect);
  }

  private ownNode(logic: unknown, path: PathStep[], dialect: Dialect): Node {
    if (Array.isArray(logic)) return this.array(logic, path, dialect);
    if (logic === null || typeof logic !== 'object') return literal(logic);
    const keys = Object.keys(logic);
    // An empty object is a value (a fresh {} per occurrence, as the engine's are distinct objects).
    if (keys.length === 0) return literal({});
    if (keys.length > 1) return this.problem(path, kProblems.severalOperators(keys));
    const op = keys[0]!;
    const compiler = Object.hasOwn(kOperators, op) ? kOperators[op] : undefined;
    if (compiler === undefined) {
      return this.problem(path, kUnsupported.has(op) ? kProblems.unsupportedOperator(op) : kProblems.unknownOperator(op));
    }
    const args = (logic as Record<string, unknown>)[op];
    if (dialect === kCompiled && isConstant(logic)) return this.fold(compiler, op, args, path);
    const node = compiler(this, args, [...path, op], dialect);
    if (dialect === kInterpreted && !isLazy(op, args) && failsEagerly(args)) return kThrows;
    return node;
  }

  /** A constant operation, evaluated now in the interpreted dialect, as flagd-core's compiler does. */
  private fold(compiler: OperatorCompiler, op: string, args: unknown, path: PathStep[]): Node {
    const before = this.problems.length;
    const interpreted = compiler(this, args, [...path, op], kInterpreted);
    if (this.problems.length !== before) return literal(null);
    let value: unknown;
    try {
      if (!isLazy(op, args) && failsEagerly(args)) throw Number.NaN;
      // Folding runs the operation once, under the same bounds as an evaluation: one that would
      // overrun them fails here, and the definition is refused.
      resetWorkBudget();
      value = interpreted.rule(kFoldScope);
    } catch {
      return this.problem(path, kProblems.constantFails(op));
    }
    return { rule: () => value, kind: 'folded', value };
  }

  private array(items: readonly unknown[], path: PathStep[], dialect: Dialect): Node {
    const nodes = items.map((item, i) => this.node(item, [...path, i], dialect));
    if (nodes.every((n) => n.kind !== 'dynamic')) return literal(nodes.map((n) => n.value));
    const rules = nodes.map((n) => n.rule);
    return dynamic((scope) => {
      const out = new Array<unknown>(rules.length);
      for (let i = 0; i < rules.length; i++) out[i] = rules[i]!(scope);
      return out;
    });
  }

  /** The operands of `op`, which must be an array of `min` to `max` items; null after a problem. */
  operands(args: unknown, path: PathStep[], op: string, min: number, max: number): unknown[] | null {
    if (!Array.isArray(args)) {
      this.problem(path, kProblems.argsNotArray(op));
      return null;
    }
    if (args.length < min || args.length > max) {
      const expected =
        min === max ? `${min} argument${min === 1 ? '' : 's'}` : max === Number.POSITIVE_INFINITY ? `at least ${min}` : `${min} to ${max}`;
      this.problem(path, kProblems.arity(op, expected, args.length));
      return null;
    }
    return args;
  }

  /** Each operand compiled; null after a problem. */
  nodes(args: unknown, path: PathStep[], op: string, min: number, max: number, dialect: Dialect): Node[] | null {
    const operands = this.operands(args, path, op, min, max);
    return operands === null ? null : operands.map((arg, i) => this.node(arg, [...path, i], dialect));
  }
}

/** Evaluates every node into `out` (a buffer owned by one call site: operators that keep nothing). */

const kOperators: Readonly<Record<string, OperatorCompiler>> = {
  ...kContextOperators,
  ...kLogicOperators,
  ...kStringListOperators,
  ...kArithmeticOperators,
  ...kFlagdOperators,
};
