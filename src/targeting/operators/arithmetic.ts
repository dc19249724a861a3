// The rule compiler's arithmetic: + - * / %.
// Each compiles its operands once into closures; compile-rule.ts holds the compiler and the table these
// join, rule-node.ts the shapes they share.
import {
  addInterpreted,
  checkNumber,
  divideInterpreted,
  divisorCompiled,
  moduloInterpreted,
  multiplyInterpreted,
  subtractInterpreted,
  toNumberCompiled,
} from '../json-logic.js';
import { kProblems, type PathStep } from '../problems.js';
import type { Scope } from '../scope.js';
import {
  type Node,
  type OperatorCompiler,
  type Rule,
  type RuleBuilder,
  dynamic,
  evaluateAll,
  kCompiled,
  kInterpreted,
  literal,
  rulesOf,
} from '../rule-node.js';
import { charge } from '../work-budget.js';

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

function numberOperand(c: RuleBuilder, raw: unknown, node: Node, path: PathStep[], op: string): NumberOperand | null {
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

function numberOperands(c: RuleBuilder, args: unknown, path: PathStep[], op: string, min: number, max: number): NumberOperand[] | null {
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
      return dynamic((s) => {
        const v = only(s);
        // A list read from the context is summed item by item: charged by its length (work-budget.ts).
        if (Array.isArray(v)) charge(v.length);
        return apply(v);
      });
    }
    return dynamic((s) => apply(evaluateAll(rules, s)));
  };
}

function arithmetic(
  op: string,
  min: number,
  max: number,
  compiled: (operands: readonly NumberOperand[], c: RuleBuilder, path: PathStep[]) => Rule | null,
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

export const kArithmeticOperators: Readonly<Record<string, OperatorCompiler>> = {
  '+': compileAdd,
  '-': compileSubtract,
  '*': compileMultiply,
  '/': compileDivide,
  '%': compileModulo,
};
