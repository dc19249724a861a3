// Which branch of a rule whose top is an `if` decided, for the playground's "why" (src/evaluation/engine/explain.ts):
// each condition is compiled by the engine's own compiler in the dialect compileIf gives it (compiled in
// an `if` of three or more operands, interpreted in one of two: `{"if": [condition, then]}`, whose else
// is null), and run in order with the same truthiness until one holds. The evaluation path never calls
// this; it runs the whole rule.
import { isTruthy } from './json-logic.js';
import { RuleCompiler } from './compile-rule.js';
import type { DefinitionProblem } from './problems.js';
import { newScope } from './scope.js';
import { kCompiled, kInterpreted } from './rule-node.js';

export interface IfBranch {
  /** The 1-based condition that held, or null: none did (the `if`'s else, or no variant). */
  readonly held: number | null;
  readonly conditions: number;
}

/**
 * The branch that `targeting` takes for `context` at `timestamp` (seconds), or null when its top is not
 * an `if` of two or more operands (one of one operand is its value: there are no branches to name).
 */
export function ifBranch(
  targeting: unknown,
  flagKey: string,
  context: Readonly<Record<string, unknown>>,
  timestamp: number,
): IfBranch | null {
  if (targeting === null || typeof targeting !== 'object' || Array.isArray(targeting)) return null;
  const keys = Object.keys(targeting);
  const operands = (targeting as { if?: unknown }).if;
  if (keys.length !== 1 || keys[0] !== 'if' || !Array.isArray(operands) || operands.length < 2) return null;
  // As compileIf (src/targeting/operators/logic.ts) compiles the operands.
  const dialect = operands.length >= 3 ? kCompiled : kInterpreted;
  const problems: DefinitionProblem[] = [];
  const compiler = new RuleCompiler(problems, flagKey);
  const scope = newScope();
  scope.data = context;
  scope.flagd.flagKey = flagKey;
  scope.flagd.timestamp = timestamp;
  const conditions = Math.floor(operands.length / 2);
  for (let i = 0; i < conditions; i++) {
    const condition = compiler.node(operands[2 * i], ['if', 2 * i], dialect).rule;
    // A rule the engine compiled has no problems; one here means this is not that rule: name no branch.
    if (problems.length > 0) return null;
    let value: unknown;
    try {
      value = condition(scope);
    } catch {
      // The engine's rule failed here too: its answer is the error, which names no branch.
      return null;
    }
    if (isTruthy(value)) return { held: i + 1, conditions };
  }
  return { held: null, conditions };
}
