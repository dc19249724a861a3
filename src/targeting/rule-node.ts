// The shapes the rule compiler and its operators share (compile-rule.ts, operators/*.ts): a compiled
// rule, a sub-rule with what is known of it before evaluation, the two dialects, and the compiler's
// face that an operator sees.
import type { PathStep } from './problems.js';
import type { Scope } from './scope.js';

/** A compiled rule: the scope in, the rule's value out (it throws where flagd-core's rule throws). */
export type Rule = (scope: Scope) => unknown;

export const kCompiled = 0;
export const kInterpreted = 1;
/** Which of json-logic-engine's dialects a sub-rule runs in (json-logic.ts). */
export type Dialect = typeof kCompiled | typeof kInterpreted;

/** A compiled sub-rule, and what the compiler knows of it before evaluation. */
export interface Node {
  readonly rule: Rule;
  /** literal: written in the rule; folded: a constant operation evaluated at load; dynamic: neither. */
  readonly kind: 'literal' | 'folded' | 'dynamic';
  /** The value, for a literal or folded node. */
  readonly value: unknown;
}

/** What an operator asks of the compiler (RuleCompiler in compile-rule.ts). */
export interface RuleBuilder {
  /** Reports a problem at `path`; the node to use in its place. */
  problem(path: readonly PathStep[], message: string): Node;
  node(logic: unknown, path: PathStep[], dialect: Dialect): Node;
  /** The operands of `op`, which must be an array of `min` to `max` items; null after a problem. */
  operands(args: unknown, path: PathStep[], op: string, min: number, max: number): unknown[] | null;
  /** Each operand compiled; null after a problem. */
  nodes(args: unknown, path: PathStep[], op: string, min: number, max: number, dialect: Dialect): Node[] | null;
}

export type OperatorCompiler = (c: RuleBuilder, args: unknown, path: PathStep[], dialect: Dialect) => Node;

export function literal(value: unknown): Node {
  return { rule: () => value, kind: 'literal', value };
}

export function dynamic(rule: Rule): Node {
  return { rule, kind: 'dynamic', value: undefined };
}

/** Evaluates every node into `out` (a buffer owned by one call site: operators that keep nothing). */
export function evaluateInto(rules: readonly Rule[], scope: Scope, out: unknown[]): unknown[] {
  for (let i = 0; i < rules.length; i++) out[i] = rules[i]!(scope);
  return out;
}

export function evaluateAll(rules: readonly Rule[], scope: Scope): unknown[] {
  return evaluateInto(rules, scope, new Array<unknown>(rules.length));
}

export const rulesOf = (nodes: readonly Node[]): Rule[] => nodes.map((n) => n.rule);
