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
import {
  addInterpreted,
  checkNumber,
  compareOperand,
  divideInterpreted,
  divisorCompiled,
  extreme,
  includes,
  interpretedOperands,
  isTruthy,
  kComparisons,
  merge,
  moduloInterpreted,
  multiplyInterpreted,
  substr,
  subtractInterpreted,
  toNumberCompiled,
  catInterpreted,
} from './json-logic.js';
import { fractional } from './fractional.js';
import { type DefinitionProblem, formatPath, kProblems, type PathStep } from './problems.js';
import { newScope, type Scope } from './scope.js';
import { applySemVerOperator, isSemVerOperator, parseVersion, type SemVer } from './sem-ver.js';
import { chainedReader, compiledReader, isMissing, readWhole, splitPath, walkReader } from './var-path.js';

/** A compiled rule: the scope in, the rule's value out (it throws where flagd-core's rule throws). */
export type Rule = (scope: Scope) => unknown;

const kCompiled = 0;
const kInterpreted = 1;
/** Which of json-logic-engine's dialects a sub-rule runs in (json-logic.ts). */
type Dialect = typeof kCompiled | typeof kInterpreted;

/** A compiled sub-rule, and what the compiler knows of it before evaluation. */
interface Node {
  readonly rule: Rule;
  /** literal: written in the rule; folded: a constant operation evaluated at load; dynamic: neither. */
  readonly kind: 'literal' | 'folded' | 'dynamic';
  /** The value, for a literal or folded node. */
  readonly value: unknown;
}

type OperatorCompiler = (c: RuleCompiler, args: unknown, path: PathStep[], dialect: Dialect) => Node;

function literal(value: unknown): Node {
  return { rule: () => value, kind: 'literal', value };
}

function dynamic(rule: Rule): Node {
  return { rule, kind: 'dynamic', value: undefined };
}

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
  const keys = Object.keys(logic);
  if (keys.length === 0) return true;
  const op = keys[0]!;
  const args = (logic as Record<string, unknown>)[op];
  if (op === 'missing') return Array.isArray(args) && args.length === 0;
  if (kContextual.has(op)) return false;
  return isConstant(args);
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
      rule(kFoldScope);
      fails = false;
    } catch {
      fails = true;
    }
  } else fails = !isLazy(op, inner) && failsEagerly(inner);
  kEagerFailures.set(args, fails);
  return fails;
}

export class RuleCompiler {
  constructor(
    /** Where problems go; each names `flag`. */
    readonly problems: DefinitionProblem[],
    readonly flag: string | null,
  ) {}

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
function evaluateInto(rules: readonly Rule[], scope: Scope, out: unknown[]): unknown[] {
  for (let i = 0; i < rules.length; i++) out[i] = rules[i]!(scope);
  return out;
}

function evaluateAll(rules: readonly Rule[], scope: Scope): unknown[] {
  return evaluateInto(rules, scope, new Array<unknown>(rules.length));
}

const rulesOf = (nodes: readonly Node[]): Rule[] => nodes.map((n) => n.rule);

// ── var, missing, missing_some ────────────────────────────────────────────────────────────────────

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

function missingNames(c: RuleCompiler, args: unknown, path: PathStep[], op: string): string[][] | null {
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

// ── Comparisons ───────────────────────────────────────────────────────────────────────────────────

/**
 * The compiled comparison is `(prev = a) OP compareCheck(b, prev)`, and three operands chain as
 * `(prev = a) OP (prev = compareCheck(b, prev)) && prev OP (prev = compareCheck(c, prev))`. `prev` is
 * read after the right operand ran, so when that operand assigns it (a `var`, `and`, another comparison)
 * the coercion is checked against that value instead of the left operand: `{">": ["nope", {"var": "n"}]}`
 * with n = 0 is false there, not an error. We keep `prev` in the scope to answer the same.
 */
function comparison(op: string, maxOperands: number): OperatorCompiler {
  const compare = kComparisons[op]!;
  const strict = op.length === 3;
  return (c, args, path, dialect) => {
    const nodes = c.nodes(args, path, op, 2, maxOperands, dialect);
    if (nodes === null) return literal(null);
    const [a, b, third] = rulesOf(nodes) as [Rule, Rule, Rule?];
    if (dialect === kCompiled) {
      if (third === undefined) {
        return dynamic((s) => {
          const x = a(s);
          s.prev = x;
          const y = b(s);
          return compare(x, strict ? y : compareOperand(y, s.prev));
        });
      }
      return dynamic((s) => {
        const x = a(s);
        s.prev = x;
        const yRaw = b(s);
        const y = compareOperand(yRaw, s.prev);
        s.prev = y;
        if (!compare(x, y)) return false;
        const zRaw = third(s);
        const z = compareOperand(zRaw, s.prev);
        s.prev = z;
        return compare(y, z);
      });
    }
    if (strict) return dynamic((s) => compare(a(s), b(s)));
    const interpreted = (x: unknown, y: unknown) => (interpretedOperands(x, y) ? compare(+(x as number), +(y as number)) : compare(x, y));
    if (third === undefined) return dynamic((s) => interpreted(a(s), b(s)));
    return dynamic((s) => {
      const x = a(s);
      const y = b(s);
      return interpreted(x, y) && interpreted(y, third(s));
    });
  };
}

// ── Logic ─────────────────────────────────────────────────────────────────────────────────────────

/** `and` / `or`: the first falsy / truthy operand, else the last. Compiled, each operand's value passes through `prev`. */
function andOr(op: 'and' | 'or'): OperatorCompiler {
  const stopOn = op === 'or';
  return (c, args, path, dialect) => {
    const nodes = c.nodes(args, path, op, 1, Number.POSITIVE_INFINITY, dialect);
    if (nodes === null) return literal(null);
    const rules = rulesOf(nodes);
    const compiled = dialect === kCompiled;
    return dynamic((s) => {
      let item: unknown = null;
      for (let i = 0; i < rules.length; i++) {
        item = rules[i]!(s);
        if (compiled) s.prev = item;
        if (isTruthy(item) === stopOn) return item;
      }
      return item;
    });
  };
}

/**
 * `if`: [condition, then, condition, then, ..., else]. The engine compiles an `if` of three or more
 * operands; one of one or two operands it hands to its interpreter, operands included.
 */
const compileIf: OperatorCompiler = (c, args, path, dialect) => {
  const operands = c.operands(args, path, 'if', 1, Number.POSITIVE_INFINITY);
  if (operands === null) return literal(null);
  const inner = operands.length >= 3 ? dialect : kInterpreted;
  const rules = operands.map((arg, i) => c.node(arg, [...path, i], inner).rule);
  if (rules.length === 1) return dynamic(rules[0]!);
  const otherwise = rules.length % 2 === 1 ? rules[rules.length - 1]! : () => null;
  const pairs = rules.length - (rules.length % 2);
  return dynamic((s) => {
    for (let i = 0; i < pairs; i += 2) if (isTruthy(rules[i]!(s))) return rules[i + 1]!(s);
    return otherwise(s);
  });
};

/**
 * `!` and `!!`. Compiled: the first operand's truthiness. Interpreted: when the operand list is one
 * non-array item, that item's value is used, and if the value is an array its first element is tested.
 */
function negation(op: '!' | '!!'): OperatorCompiler {
  const negate = op === '!';
  return (c, args, path, dialect) => {
    const list = Array.isArray(args);
    // The operand: the first of a list, or the value itself.
    const operand = () => (list ? c.node(args[0], [...path, 0], dialect).rule : c.node(args, path, dialect).rule);
    let subject: Rule;
    if (dialect === kCompiled) subject = operand();
    else if (!list || (args.length === 1 && !Array.isArray(args[0]))) {
      const inner = operand();
      subject = (s) => {
        const v = inner(s);
        return Array.isArray(v) ? v[0] : v;
      };
    } else {
      const all = c.node(args, path, dialect).rule;
      subject = (s) => (all(s) as unknown[])[0];
    }
    return dynamic((s) => isTruthy(subject(s)) !== negate);
  };
}

// ── Strings, lists ────────────────────────────────────────────────────────────────────────────────

const compileIn: OperatorCompiler = (c, args, path, dialect) => {
  const nodes = c.nodes(args, path, 'in', 2, 2, dialect);
  if (nodes === null) return literal(null);
  const [needle, haystack] = rulesOf(nodes) as [Rule, Rule];
  // The list first, then the item: the engine's order (`(list || []).includes(item)`), which decides
  // what `prev` holds afterwards.
  return dynamic((s) => {
    const list = haystack(s);
    return includes(needle(s), list);
  });
};

/** `cat`. Compiled: `'' + a + b ...`. Interpreted: nulls skipped, and one non-array operand's value used whole. */
const compileCat: OperatorCompiler = (c, args, path, dialect) => {
  const nodes = c.nodes(args, path, 'cat', 1, Number.POSITIVE_INFINITY, dialect);
  if (nodes === null) return literal(null);
  const rules = rulesOf(nodes);
  if (dialect === kCompiled) {
    return dynamic((s) => {
      let out = '';
      for (let i = 0; i < rules.length; i++) out += rules[i]!(s);
      return out;
    });
  }
  if (rules.length === 1 && !Array.isArray((args as unknown[])[0])) {
    const only = rules[0]!;
    return dynamic((s) => {
      const v = only(s);
      if (typeof v === 'string') return v;
      // null and undefined have no toString: the engine throws, and so do we.
      return Array.isArray(v) ? catInterpreted(v) : (v as { toString(): string }).toString();
    });
  }
  return dynamic((s) => catInterpreted(evaluateAll(rules, s)));
};

const compileSubstr: OperatorCompiler = (c, args, path, dialect) => {
  const nodes = c.nodes(args, path, 'substr', 2, 3, dialect);
  if (nodes === null) return literal(null);
  const [text, from, length] = rulesOf(nodes) as [Rule, Rule, Rule?];
  return dynamic((s) => substr(text(s), from(s), length === undefined ? undefined : length(s)));
};

function listOperator(op: string, apply: (values: unknown[]) => unknown): OperatorCompiler {
  return (c, args, path, dialect) => {
    const nodes = c.nodes(args, path, op, 1, Number.POSITIVE_INFINITY, dialect);
    if (nodes === null) return literal(null);
    const rules = rulesOf(nodes);
    return dynamic((s) => apply(evaluateAll(rules, s)));
  };
}

// ── Arithmetic ────────────────────────────────────────────────────────────────────────────────────
// Compiled: each operand is made a number while the function is built. A literal that cannot be one
// (a non-numeric string, an array, an object) fails the build, as does a constant zero divisor; the
// other operands are coerced at evaluation.

/** An operand of compiled arithmetic: its number, known now or computed at evaluation. */
interface NumberOperand {
  readonly rule: (scope: Scope) => number;
  /** The engine wrote it as the text "+0": the one divisor its compiler refuses. */
  readonly plusZero: boolean;
}

function constantOperand(value: number, plusZero: boolean): NumberOperand {
  return { rule: () => value, plusZero };
}

function numberOperand(c: RuleCompiler, raw: unknown, node: Node, path: PathStep[], op: string): NumberOperand | null {
  const fail = (): null => {
    c.problem(path, kProblems.arithmeticOperand(op, raw));
    return null;
  };
  // An array operand fails the build whatever it holds.
  if (Array.isArray(raw)) return fail();
  const v = node.value;
  if (node.kind === 'literal') {
    if (v === null) return constantOperand(0, false);
    if (typeof v === 'number') return constantOperand(v, v === 0);
    if (typeof v === 'boolean') return constantOperand(+v, false);
    if (typeof v === 'string') {
      const n = +v;
      return Number.isNaN(n) ? fail() : constantOperand(n, n === 0);
    }
    return fail();
  }
  if (node.kind === 'folded') {
    // The folded value is written into the function as JSON when it is a plain value.
    if (v === null || v === false) return constantOperand(0, false);
    if (v === true) return constantOperand(1, false);
    if (typeof v === 'string') {
      const n = +v;
      return Number.isNaN(n) ? fail() : constantOperand(n, n === 0);
    }
    if (typeof v === 'number' && Number.isFinite(v)) return constantOperand(v, v === 0);
    if (v === undefined) return fail();
    // An array, an object, an infinity: kept as a value and coerced at evaluation (arrays and objects throw then).
    return { rule: () => toNumberCompiled(v), plusZero: false };
  }
  const rule = node.rule;
  return { rule: (s) => toNumberCompiled(rule(s)), plusZero: false };
}

function numberOperands(c: RuleCompiler, args: unknown, path: PathStep[], op: string, min: number, max: number): NumberOperand[] | null {
  const nodes = c.nodes(args, path, op, min, max, kCompiled);
  if (nodes === null) return null;
  const operands = nodes.map((n, i) => numberOperand(c, (args as unknown[])[i], n, [...path, i], op));
  return operands.every((o) => o !== null) ? (operands as NumberOperand[]) : null;
}

/** Interpreted `+` and `-` are given one non-array operand's value alone (they are "unary-optimised"). */
function interpretedArithmetic(op: string, min: number, max: number, apply: (data: unknown) => number, unary: boolean): OperatorCompiler {
  return (c, args, path) => {
    const nodes = c.nodes(args, path, op, min, max, kInterpreted);
    if (nodes === null) return literal(null);
    const rules = rulesOf(nodes);
    if (unary && rules.length === 1 && !Array.isArray((args as unknown[])[0])) {
      const only = rules[0]!;
      return dynamic((s) => apply(only(s)));
    }
    return dynamic((s) => apply(evaluateAll(rules, s)));
  };
}

function arithmetic(
  op: string,
  min: number,
  max: number,
  compiled: (operands: readonly NumberOperand[], c: RuleCompiler, path: PathStep[]) => Rule | null,
  interpreted: OperatorCompiler,
): OperatorCompiler {
  return (c, args, path, dialect) => {
    if (dialect === kInterpreted) return interpreted(c, args, path, dialect);
    const operands = numberOperands(c, args, path, op, min, max);
    if (operands === null) return literal(null);
    const rule = compiled(operands, c, path);
    return rule === null ? literal(null) : dynamic(rule);
  };
}

/** `a OP b OP c ...` left to right, then the NaN check. */
function fold(operands: readonly NumberOperand[], combine: (a: number, b: number) => number): Rule {
  const rules = operands.map((o) => o.rule);
  const first = rules[0]!;
  return (s) => {
    let acc = first(s);
    for (let i = 1; i < rules.length; i++) acc = combine(acc, rules[i]!(s));
    return checkNumber(acc);
  };
}

const compileAdd = arithmetic(
  '+',
  1,
  Number.POSITIVE_INFINITY,
  (o) => fold(o, (a, b) => a + b),
  interpretedArithmetic('+', 1, Number.POSITIVE_INFINITY, addInterpreted, true),
);

const compileSubtract = arithmetic(
  '-',
  1,
  Number.POSITIVE_INFINITY,
  (o) => {
    if (o.length > 1) return fold(o, (a, b) => a - b);
    const only = o[0]!.rule;
    return (s) => -checkNumber(only(s));
  },
  interpretedArithmetic('-', 1, Number.POSITIVE_INFINITY, subtractInterpreted, true),
);

const compileMultiply = arithmetic(
  '*',
  2,
  Number.POSITIVE_INFINITY,
  (o) => fold(o, (a, b) => a * b),
  interpretedArithmetic('*', 2, Number.POSITIVE_INFINITY, (d) => multiplyInterpreted(d as unknown[]), false),
);

const compileDivide = arithmetic(
  '/',
  2,
  2,
  (o, c, path) => {
    if (o[1]!.plusZero) {
      c.problem(path, kProblems.divisionByZero('/'));
      return null;
    }
    const [a, b] = [o[0]!.rule, o[1]!.rule];
    return (s) => checkNumber(a(s) / divisorCompiled(b(s)));
  },
  interpretedArithmetic('/', 2, 2, (d) => divideInterpreted(d as unknown[]), false),
);

const compileModulo = arithmetic(
  '%',
  2,
  2,
  (o) => fold(o, (a, b) => a % b),
  interpretedArithmetic('%', 2, 2, (d) => moduloInterpreted(d as unknown[]), false),
);

// ── flagd's operators ─────────────────────────────────────────────────────────────────────────────

function stringCompare(op: 'starts_with' | 'ends_with'): OperatorCompiler {
  const starts = op === 'starts_with';
  return (c, args, path, dialect) => {
    const nodes = c.nodes(args, path, op, 2, 2, dialect);
    if (nodes === null) return literal(null);
    const [a, b] = rulesOf(nodes) as [Rule, Rule];
    return dynamic((s) => {
      const text = a(s);
      const part = b(s);
      if (typeof text !== 'string' || typeof part !== 'string') return null;
      return starts ? text.startsWith(part) : text.endsWith(part);
    });
  };
}

/** A version operand: a literal is parsed now (and must be a version); a computed one per evaluation, the last kept. */
function versionOperand(c: RuleCompiler, node: Node, path: PathStep[]): ((raw: unknown) => SemVer | null) | null {
  if (node.kind === 'literal') {
    const parsed = parseVersion(node.value);
    if (parsed === null) {
      c.problem(path, kProblems.semVerVersion(node.value));
      return null;
    }
    return () => parsed;
  }
  let lastText: string | null = null;
  let lastParsed: SemVer | null = null;
  return (raw) => {
    if (typeof raw !== 'string') return parseVersion(raw);
    if (raw !== lastText) {
      lastParsed = parseVersion(raw);
      lastText = raw;
    }
    return lastParsed;
  };
}

const compileSemVer: OperatorCompiler = (c, args, path, dialect) => {
  const nodes = c.nodes(args, path, 'sem_ver', 3, 3, dialect);
  if (nodes === null) return literal(null);
  const opNode = nodes[1]!;
  if (opNode.kind === 'literal' && (typeof opNode.value !== 'string' || !isSemVerOperator(opNode.value))) {
    return c.problem([...path, 1], kProblems.semVerOperator(opNode.value));
  }
  const left = versionOperand(c, nodes[0]!, [...path, 0]);
  const right = versionOperand(c, nodes[2]!, [...path, 2]);
  if (left === null || right === null) return literal(null);
  const [a, op, b] = rulesOf(nodes) as [Rule, Rule, Rule];
  return dynamic((s) => {
    // Every operand is evaluated first (one that throws fails the rule), then the versions are read.
    const x = a(s);
    const o = op(s);
    const y = b(s);
    const vx = left(x);
    const vy = right(y);
    if (vx === null || vy === null) return null;
    return applySemVerOperator(vx, o, vy);
  });
};

const compileFractional: OperatorCompiler = (c, args, path, dialect) => {
  const operands = c.operands(args, path, 'fractional', 1, Number.POSITIVE_INFINITY);
  if (operands === null) return literal(null);
  for (let i = 0; i < operands.length; i++) {
    const arg = operands[i];
    // The first operand may be the bucketing expression; every other one is a bucket.
    if (i === 0 && !Array.isArray(arg)) continue;
    if (!Array.isArray(arg) || arg.length < 1 || arg.length > 2) return c.problem([...path, i], kProblems.fractionalBucket());
    const weight = arg[1];
    const isRule = weight !== null && typeof weight === 'object' && !Array.isArray(weight);
    if (arg.length === 2 && !isRule && (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 0)) {
      return c.problem([...path, i, 1], kProblems.fractionalWeight(weight));
    }
  }
  const rules = operands.map((arg, i) => c.node(arg, [...path, i], dialect).rule);
  const buffer = new Array<unknown>(rules.length);
  return dynamic((s) => fractional(evaluateInto(rules, s, buffer), s.flagd.flagKey, s.data.targetingKey));
};

const kOperators: Readonly<Record<string, OperatorCompiler>> = {
  var: compileVar,
  missing: compileMissing,
  missing_some: compileMissingSome,
  '==': comparison('==', 2),
  '===': comparison('===', 2),
  '!=': comparison('!=', 2),
  '!==': comparison('!==', 2),
  '<': comparison('<', 3),
  '<=': comparison('<=', 3),
  '>': comparison('>', 2),
  '>=': comparison('>=', 2),
  and: andOr('and'),
  or: andOr('or'),
  if: compileIf,
  '!': negation('!'),
  '!!': negation('!!'),
  in: compileIn,
  cat: compileCat,
  substr: compileSubstr,
  '+': compileAdd,
  '-': compileSubtract,
  '*': compileMultiply,
  '/': compileDivide,
  '%': compileModulo,
  max: listOperator('max', (v) => extreme(v, true)),
  min: listOperator('min', (v) => extreme(v, false)),
  merge: listOperator('merge', merge),
  starts_with: stringCompare('starts_with'),
  ends_with: stringCompare('ends_with'),
  sem_ver: compileSemVer,
  fractional: compileFractional,
};
