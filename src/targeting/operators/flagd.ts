// The rule compiler's flagd operators: starts_with, ends_with, sem_ver, fractional.
// Each compiles its operands once into closures; compile-rule.ts holds the compiler and the table these
// join, rule-node.ts the shapes they share.
import { fractional } from '../fractional.js';
import { applySemVerOperator, isSemVerOperator, parseVersion, type SemVer } from '../sem-ver.js';
import { kProblems, type PathStep } from '../problems.js';
import { type Node, type OperatorCompiler, type Rule, type RuleBuilder, dynamic, evaluateInto, literal, rulesOf } from '../rule-node.js';
import { charge, kUnchargedLength } from '../work-budget.js';

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
      // Compared character by character: a long part is charged (work-budget.ts; bench/RESULTS.md,
      // Bounded evaluation work), a short one is not.
      if (part.length > kUnchargedLength) charge(part.length);
      return starts ? text.startsWith(part) : text.endsWith(part);
    });
  };
}

/** A version operand: a literal is parsed now (and must be a version); a computed one per evaluation, the last kept. */
function versionOperand(c: RuleBuilder, node: Node, path: PathStep[]): ((raw: unknown) => SemVer | null) | null {
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

export const kFlagdOperators: Readonly<Record<string, OperatorCompiler>> = {
  starts_with: stringCompare('starts_with'),
  ends_with: stringCompare('ends_with'),
  sem_ver: compileSemVer,
  fractional: compileFractional,
};
